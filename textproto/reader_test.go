package textproto

import (
	"bufio"
	"bytes"
	stdtp "net/textproto"
	"reflect"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/corpus"
)

// httpHeader is a typical HTTP request header.
const httpHeader = "Host: example.com\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n" +
	"Accept: text/html,application/xhtml+xml\r\nAccept-Language: en-US,en;q=0.5\r\n" +
	"Accept-Encoding: gzip, deflate, br\r\nConnection: keep-alive\r\nCookie: a=b; c=d\r\n" +
	"Upgrade-Insecure-Requests: 1\r\nSec-Fetch-Dest: document\r\nCache-Control: max-age=0\r\n\r\n"

// TestReadMIMEHeaderAllocs checks that ReadMIMEHeader allocates less than
// net/textproto's, with a reused Reader.
func TestReadMIMEHeaderAllocs(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		max  float64 // our allocations at most
	}{
		{"http", []byte(httpHeader), 8},
		{"corpus", corpus.Header(4 << 10), 40},
	} {
		src := bytes.NewReader(nil)
		br := bufio.NewReader(nil)
		ours, std := NewReader(br), stdtp.NewReader(br)
		var h1, h2 map[string][]string
		got := testing.AllocsPerRun(50, func() {
			src.Reset(c.data)
			br.Reset(src)
			m, err := ours.ReadMIMEHeader()
			if err != nil {
				t.Fatal(err)
			}
			h1 = m
		})
		want := testing.AllocsPerRun(50, func() {
			src.Reset(c.data)
			br.Reset(src)
			m, err := std.ReadMIMEHeader()
			if err != nil {
				t.Fatal(err)
			}
			h2 = m
		})
		if !reflect.DeepEqual(h1, h2) {
			t.Fatalf("%s: different headers", c.name)
		}
		t.Logf("%s (%d fields): %v allocs, net/textproto %v", c.name, len(h1), got, want)
		if got >= want || got > c.max {
			t.Errorf("%s: %v allocs, net/textproto %v; want fewer, and at most %v", c.name, got, want, c.max)
		}
	}
}

// TestReadMIMEHeaderOwnsMemory checks that the header read does not change
// when the Reader's buffer is reused, and ReadLineBytes's result neither.
func TestReadMIMEHeaderOwnsMemory(t *testing.T) {
	in := "Key: value one\r\nother-key: two\r\n folded\r\n\r\n" + strings.Repeat("overwrite the buffer\r\n", 400)
	r := NewReader(bufio.NewReaderSize(strings.NewReader(in), 16))
	h, err := r.ReadMIMEHeader()
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.ReadLineBytes()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := r.ReadLine(); err != nil {
			break
		}
	}
	want := MIMEHeader{"Key": {"value one"}, "Other-Key": {"two folded"}}
	if !reflect.DeepEqual(h, want) || string(b) != "overwrite the buffer" {
		t.Errorf("after reading on: %q, %q", h, b)
	}
	// Appending to a value slice does not reach another key's values.
	h = MIMEHeader{}
	r = NewReader(bufio.NewReader(strings.NewReader("A: 1\r\nB: 2\r\n\r\n")))
	if h, err = r.ReadMIMEHeader(); err != nil {
		t.Fatal(err)
	}
	_ = append(h["A"], "x")
	if h.Get("B") != "2" {
		t.Errorf("appending to A changed B: %v", h)
	}
}

// TestReaderReuse reads many headers and lines through one Reader, as a
// server does, and compares with net/textproto.
func TestReaderReuse(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 50; i++ {
		in.WriteString("GET / HTTP/1.1\r\n")
		in.WriteString(httpHeader)
		in.WriteString(strings.Repeat("q", i*200) + "\r\n")
	}
	ours := NewReader(bufio.NewReader(strings.NewReader(in.String())))
	std := stdtp.NewReader(bufio.NewReader(strings.NewReader(in.String())))
	for i := 0; i < 50; i++ {
		l1, e1 := ours.ReadLine()
		l2, e2 := std.ReadLine()
		h1, e3 := ours.ReadMIMEHeader()
		h2, e4 := std.ReadMIMEHeader()
		b1, e5 := ours.ReadLine()
		b2, e6 := std.ReadLine()
		if l1 != l2 || b1 != b2 || !reflect.DeepEqual(map[string][]string(h1), map[string][]string(h2)) || e1 != e2 || e3 != e4 || e5 != e6 {
			t.Fatalf("request %d differs", i)
		}
	}
}

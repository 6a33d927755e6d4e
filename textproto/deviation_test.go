package textproto

import (
	"bufio"
	"io"
	stdtp "net/textproto"
	"reflect"
	"strings"
	"testing"
)

// The tests below prove the one documented deviation from net/textproto,
// method by method: a line that exactly fills the bufio.Reader's buffer
// (or several of them) and is then cut off by the end of the input (or a
// read error) is dropped by net/textproto, which reports only the error.
// We return the line, and the error from the next call.
//
// Each input is read with a 16-byte bufio.Reader from a strings.Reader,
// which reports io.EOF in a Read of its own.

func deviationReaders(in string) (*stdtp.Reader, *Reader) {
	return stdtp.NewReader(bufio.NewReaderSize(strings.NewReader(in), 16)),
		NewReader(bufio.NewReaderSize(strings.NewReader(in), 16))
}

func TestDeviationReadLine(t *testing.T) {
	for _, in := range []string{strings.Repeat("x", 16), strings.Repeat("x", 48), "ab\r\n" + strings.Repeat("y", 16)} {
		std, ours := deviationReaders(in)
		last := in[strings.LastIndex(in, "\n")+1:]
		for {
			s, err := std.ReadLine()
			if err != nil {
				if s != "" || err != io.EOF {
					t.Fatalf("%q: net/textproto gave %q, %v", in, s, err)
				}
				break
			}
		}
		var got string
		for {
			s, err := ours.ReadLine()
			if err != nil {
				if err != io.EOF {
					t.Fatalf("%q: %v", in, err)
				}
				break
			}
			got = s
		}
		if got != last {
			t.Errorf("%q: last line %q, want %q", in, got, last)
		}
	}
	// ReadLineBytes.
	_, ours := deviationReaders(strings.Repeat("z", 32))
	if b, err := ours.ReadLineBytes(); string(b) != strings.Repeat("z", 32) || err != nil {
		t.Errorf("ReadLineBytes: %q, %v", b, err)
	}
	if b, err := ours.ReadLineBytes(); b != nil || err != io.EOF {
		t.Errorf("ReadLineBytes after: %q, %v", b, err)
	}
}

func TestDeviationReadContinuedLine(t *testing.T) {
	// net/textproto loses the continuation line, and keeps the space it
	// appended for it; from Go 1.26.9 and 1.27.2 it fails the call with io.EOF.
	in := "a\r\n " + strings.Repeat("b", 16)
	std, ours := deviationReaders(in)
	if s, err := std.ReadContinuedLine(); continuedLineFails && (s != "" || err != io.EOF) ||
		!continuedLineFails && (s != "a " || err != nil) {
		t.Fatalf("net/textproto: %q, %v", s, err)
	}
	if s, err := ours.ReadContinuedLine(); s != "a "+strings.Repeat("b", 16) || err != nil {
		t.Errorf("ours: %q, %v", s, err)
	}
	if s, err := ours.ReadContinuedLine(); s != "" || err != io.EOF {
		t.Errorf("ours, next: %q, %v", s, err)
	}
	// The first line.
	std, ours = deviationReaders(strings.Repeat("c", 16))
	if s, err := std.ReadContinuedLineBytes(); s != nil || err != io.EOF {
		t.Fatalf("net/textproto: %q, %v", s, err)
	}
	if s, err := ours.ReadContinuedLineBytes(); string(s) != strings.Repeat("c", 16) || err != nil {
		t.Errorf("ours: %q, %v", s, err)
	}
}

func TestDeviationReadCodeLine(t *testing.T) {
	in := "250 " + strings.Repeat("m", 12)
	std, ours := deviationReaders(in)
	if c, m, err := std.ReadCodeLine(250); c != 0 || m != "" || err != io.EOF {
		t.Fatalf("net/textproto: %d %q %v", c, m, err)
	}
	if c, m, err := ours.ReadCodeLine(250); c != 250 || m != in[4:] || err != nil {
		t.Errorf("ours: %d %q %v", c, m, err)
	}
	if _, _, err := ours.ReadCodeLine(250); err != io.EOF {
		t.Errorf("ours, next: %v", err)
	}
}

func TestDeviationReadResponse(t *testing.T) {
	in := "250-a\r\n250 " + strings.Repeat("m", 12)
	std, ours := deviationReaders(in)
	if c, m, err := std.ReadResponse(250); c != 0 || m != "" || err != io.EOF {
		t.Fatalf("net/textproto: %d %q %v", c, m, err)
	}
	if c, m, err := ours.ReadResponse(250); c != 250 || m != "a\n"+strings.Repeat("m", 12) || err != nil {
		t.Errorf("ours: %d %q %v", c, m, err)
	}
	if _, _, err := ours.ReadResponse(250); err != io.EOF {
		t.Errorf("ours, next: %v", err)
	}
}

func TestDeviationReadDotLines(t *testing.T) {
	in := "a\r\n" + strings.Repeat("d", 16)
	std, ours := deviationReaders(in)
	if v, err := std.ReadDotLines(); !reflect.DeepEqual(v, []string{"a"}) || err != io.ErrUnexpectedEOF {
		t.Fatalf("net/textproto: %q %v", v, err)
	}
	if v, err := ours.ReadDotLines(); !reflect.DeepEqual(v, []string{"a", strings.Repeat("d", 16)}) || err != io.ErrUnexpectedEOF {
		t.Errorf("ours: %q %v", v, err)
	}
}

func TestDeviationReadMIMEHeader(t *testing.T) {
	in := "A: 1\r\nB: " + strings.Repeat("v", 13)
	std, ours := deviationReaders(in)
	if h, err := std.ReadMIMEHeader(); !reflect.DeepEqual(h, stdtp.MIMEHeader{"A": {"1"}}) || err != io.EOF {
		t.Fatalf("net/textproto: %v %v", h, err)
	}
	if h, err := ours.ReadMIMEHeader(); !reflect.DeepEqual(h, MIMEHeader{"A": {"1"}, "B": {strings.Repeat("v", 13)}}) || err != io.EOF {
		t.Errorf("ours: %v %v", h, err)
	}

	// An indented first line is reported, not dropped.
	in = " " + strings.Repeat("i", 15)
	std, ours = deviationReaders(in)
	if _, err := std.ReadMIMEHeader(); err != io.EOF {
		t.Fatalf("net/textproto: %v", err)
	}
	want := ProtocolError("malformed MIME header initial line: \"" + in + "\"")
	if _, err := ours.ReadMIMEHeader(); err != want {
		t.Errorf("ours: %v, want %v", err, want)
	}
	if _, err := ours.ReadMIMEHeader(); err != io.EOF {
		t.Errorf("ours, next: %v", err)
	}
}

// TestDeviationReadError shows the same with a read error other than EOF,
// which net/textproto reports while dropping the line: we report it from
// the next call, even if the input then goes on.
func TestDeviationReadError(t *testing.T) {
	in := strings.Repeat("x", 16) + "\r\nnext\r\n"
	f := feed{onceAt: 16}
	std := stdtp.NewReader(bufio.NewReaderSize(f.open([]byte(in)), 16))
	ours := NewReader(bufio.NewReaderSize(f.open([]byte(in)), 16))
	if s, err := std.ReadLine(); s != "" || err != errInjected {
		t.Fatalf("net/textproto: %q, %v", s, err)
	}
	if s, err := std.ReadLine(); s != "" || err != nil { // the rest of the cut line
		t.Fatalf("net/textproto, next: %q, %v", s, err)
	}
	for i, want := range []struct {
		s   string
		err error
	}{{strings.Repeat("x", 16), nil}, {"", errInjected}, {"", nil}, {"next", nil}, {"", io.EOF}} {
		if s, err := ours.ReadLine(); s != want.s || err != want.err {
			t.Errorf("ours, call %d: %q, %v; want %q, %v", i, s, err, want.s, want.err)
		}
	}
}

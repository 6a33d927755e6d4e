package textproto

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	stdtp "net/textproto"
	"reflect"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// ReadMIMEHeader canonicalizes and interns keys with its own code
// (canonicalize, commonHeader) for speed; these tests check its keys
// against net/textproto's ReadMIMEHeader.

var canonicalKeys = []string{
	"", "a", "A", "-", "--", "a-", "-a", "accept-encoding", "ACCEPT-ENCODING", "Accept-Encoding",
	"content-type", "CONTENT-type", "cOnTeNt-TyPe", "mime-version", "MIME-Version", "Message-ID",
	"dkim-signature", "x-imforwards", "user-agent", "foo-bar_baz", "foo.bar", "foo bar", "Foo Bar",
	"foo\x00bar", "föö", "x\x80", "a:b", "a\tb", "1234", "1a-2b", "!#$%&'*+-.^_`|~", "@", "a@b",
	"C", "c", "cc", "CC", "Host", "HOST", "host ", " host", "X-Forwarded-For", "x-forwarded-for",
	"www-authenticate", "WWW-Authenticate", "set-cookie", "SET-COOKIE", "referer", "REFERER",
}

// checkHeaderKey reads a header with the one field "k: v" through both
// packages and reports a difference.
func checkHeaderKey(t *testing.T, k string) {
	t.Helper()
	in := k + ": v\r\n\r\n"
	got, gerr := NewReader(bufio.NewReader(strings.NewReader(in))).ReadMIMEHeader()
	want, werr := stdtp.NewReader(bufio.NewReader(strings.NewReader(in))).ReadMIMEHeader()
	if !reflect.DeepEqual(got, want) || !errEqual(gerr, stdErr(werr)) {
		t.Fatalf("key %q: %q, %v; net/textproto %q, %v", k, got, gerr, want, werr)
	}
}

func TestReadMIMEHeaderKeys(t *testing.T) {
	for _, k := range canonicalKeys {
		checkHeaderKey(t, k)
	}
	// Every short key over a small alphabet of interesting bytes.
	alphabet := []byte("aZ-_ .\x00\x80:1")
	var b []byte
	var walk func(depth int)
	walk = func(depth int) {
		checkHeaderKey(t, string(b))
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			b = append(b, c)
			walk(depth - 1)
			b = b[:len(b)-1]
		}
	}
	walk(4)
}

func FuzzReadMIMEHeaderKey(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	for _, k := range canonicalKeys {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, k string) {
		checkHeaderKey(t, k)
	})
}

// TestReadMIMEHeaderSizes reads headers of 0 to 1,500 fields, one after
// another on one Reader as a server does, with few distinct keys or many,
// common ones among them, values in and out of the builder's chunks, and
// holds each to net/textproto's: the builder's segments of keys and
// fields (256 each) fill, and those a header before left are taken again.
func TestReadMIMEHeaderSizes(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	var in strings.Builder
	for range 60 {
		n := []int{0, 1, 255, 256, 257, 511, 512, 513, 1500}[r.IntN(9)]
		if r.IntN(3) == 0 {
			n = r.IntN(1500)
		}
		keys := 1 + r.IntN(n+1)
		for range n {
			switch k := r.IntN(keys); {
			case k%7 == 0:
				in.WriteString(commonKeysForTest[k%len(commonKeysForTest)])
			default:
				fmt.Fprintf(&in, "x-k%d", k)
			}
			in.WriteString(": ")
			in.WriteString(strings.Repeat("v", []int{0, 1, 30, 300, 3000}[r.IntN(5)]))
			in.WriteString("\r\n")
		}
		in.WriteString("\r\n")
	}
	sameHeaders(t, in.String(), 60)
}

// sameHeaders reads n headers from in on one Reader, and on one of
// net/textproto's, and reports the first difference.
func sameHeaders(t *testing.T, in string, n int) {
	t.Helper()
	ours := NewReader(bufio.NewReader(strings.NewReader(in)))
	std := stdtp.NewReader(bufio.NewReader(strings.NewReader(in)))
	for i := range n {
		h1, err1 := ours.ReadMIMEHeader()
		h2, err2 := std.ReadMIMEHeader()
		if !reflect.DeepEqual(h1, h2) || !errEqual(err1, stdErr(err2)) {
			t.Fatalf("header %d: %d keys, %v; net/textproto: %d keys, %v", i, len(h1), err1, len(h2), err2)
		}
	}
}

var commonKeysForTest = []string{"Content-Type", "received", "DKIM-Signature", "message-id", "To"}

// Common keys are found by their place in commonKeys only among a
// header's first maxCommon keys; one that comes later is hashed with the
// others, and stays found when the table grows. Headers with a common
// key at and around that bound, and more keys after it (the table grows
// at 256 hashed keys), one after another on one Reader, against
// net/textproto.
func TestReadMIMEHeaderLateCommonKeys(t *testing.T) {
	var in strings.Builder
	for _, at := range []int{0, 1, maxCommon - 1, maxCommon, maxCommon + 1, 300, 0, 600, maxCommon} {
		for i := range at {
			fmt.Fprintf(&in, "X-U%d: %d\r\n", i, i)
		}
		for i, k := range commonKeysForTest {
			fmt.Fprintf(&in, "%s: first %d\r\n", k, i)
		}
		for i := range 400 {
			fmt.Fprintf(&in, "X-V%d: %d\r\n", i, i)
			if i%100 == 0 {
				fmt.Fprintf(&in, "%s: again %d\r\n", commonKeysForTest[i/100], i)
			}
		}
		in.WriteString("\r\n")
	}
	sameHeaders(t, in.String(), 9)
}

// A Reader copied by value once used (net/textproto's may be) goes on
// reading in each copy as net/textproto's copies do: the copies share
// the header scratch, as they share the rest. Two copies in turn, each on
// its own input, with keys past the interned ones (a hash table) and
// enough of them for a second segment.
func TestReadMIMEHeaderCopiedReader(t *testing.T) {
	// The copy's first header cleared the table the two share, and the
	// other's held a stale entry next (found by review).
	r1 := NewReader(bufio.NewReader(strings.NewReader("X-A: 1\r\n\r\nX-A: 1\r\n\r\n")))
	r1.ReadMIMEHeader()
	r2 := *r1
	r2.R = bufio.NewReader(strings.NewReader("To: a\r\n\r\nX-A: 1\r\n\r\n"))
	r2.ReadMIMEHeader()
	r1.ReadMIMEHeader()
	if h, err := r2.ReadMIMEHeader(); err != nil || len(h) != 1 || h.Get("X-A") != "1" {
		t.Errorf("the copy's second header: %v, %v; want X-A: 1", h, err)
	}

	rng := rand.New(rand.NewPCG(5, 6))
	header := func() string {
		var b strings.Builder
		for range []int{0, 1, 2, 3, 300}[rng.IntN(5)] {
			switch rng.IntN(3) {
			case 0:
				fmt.Fprintf(&b, "X-K%d: %d\r\n", rng.IntN(400), rng.IntN(10))
			case 1:
				b.WriteString("To: a\r\n")
			default:
				fmt.Fprintf(&b, "x-k%d: v\r\n", rng.IntN(20))
			}
		}
		return b.String() + "\r\n"
	}
	for round := range 50 {
		var in [2]strings.Builder
		for range 6 {
			in[0].WriteString(header())
			in[1].WriteString(header())
		}
		r := [2]*Reader{NewReader(bufio.NewReader(strings.NewReader(in[0].String())))}
		s := [2]*stdtp.Reader{stdtp.NewReader(bufio.NewReader(strings.NewReader(in[0].String())))}
		for call := range 12 {
			if call == 1 {
				c, sc := *r[0], *s[0]
				c.R = bufio.NewReader(strings.NewReader(in[1].String()))
				sc.R = bufio.NewReader(strings.NewReader(in[1].String()))
				r[1], s[1] = &c, &sc
			}
			i := rng.IntN(2)
			if r[1] == nil {
				i = 0
			}
			got, gerr := r[i].ReadMIMEHeader()
			want, werr := s[i].ReadMIMEHeader()
			if !reflect.DeepEqual(got, want) || !errEqual(gerr, stdErr(werr)) {
				t.Fatalf("round %d, call %d, copy %d: %d keys, %v; net/textproto %d keys, %v", round, call, i, len(got), gerr, len(want), werr)
			}
		}
	}
}

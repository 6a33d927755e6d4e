package textproto

import (
	"bufio"
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

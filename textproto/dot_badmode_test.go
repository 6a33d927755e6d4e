package textproto

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// TestDotReaderUnknownMode: a dot reader given a mode or bare policy that
// is none of dot's constants fails every Read and WriteTo with an error
// matching dot.ErrMode, as dot's Decoder does, and the next call on the
// Reader reads on. It used to loop for ever: its decoder consumes nothing,
// and Read, WriteTo and the Reader's next call (which drains the block)
// waited for it to reach the end of the block. (Without the fix the test
// hangs until go test's timeout.)
func TestDotReaderUnknownMode(t *testing.T) {
	for _, opt := range []DotOptions{{Mode: dot.Raw + 1}, {Mode: dot.Strict, Bare: dot.BareNormalize + 1}} {
		for _, how := range []string{"Read", "WriteTo", "next call"} {
			r := NewReader(bufio.NewReader(strings.NewReader("abc\r\n.\r\nNEXT\r\n")))
			d := r.DotReaderWith(opt)
			var err error
			switch how {
			case "Read":
				_, err = d.Read(make([]byte, 16))
			case "WriteTo":
				_, err = d.WriteTo(io.Discard)
			}
			if how != "next call" && !errors.Is(err, dot.ErrMode) {
				t.Errorf("%+v: %s: %v, want dot.ErrMode", opt, how, err)
			}
			if l, err := r.ReadLine(); l != "abc" || err != nil {
				t.Errorf("%+v: %s, then ReadLine: %q, %v; want the block's first line", opt, how, l, err)
			}
		}
	}
	r := NewReader(bufio.NewReader(strings.NewReader("abc\r\n.\r\n")))
	if _, err := io.ReadAll(r.DotReaderMode(dot.Raw + 1)); !errors.Is(err, dot.ErrMode) {
		t.Errorf("DotReaderMode: %v, want dot.ErrMode", err)
	}
}

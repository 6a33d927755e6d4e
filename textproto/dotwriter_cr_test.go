package textproto

import (
	"bufio"
	"errors"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// A Strict or Raw dot writer takes a CR that ends a Write (an LF may
// follow in the next), and fails Close if none did: no end line.
func TestDotWriterFinalCR(t *testing.T) {
	for _, mode := range []dot.Mode{dot.Strict, dot.Raw} {
		var b strings.Builder
		bw := bufio.NewWriter(&b)
		w := NewWriter(bw).DotWriterMode(mode)
		if _, err := w.Write([]byte("a\r")); err != nil {
			t.Fatalf("%v: Write: %v", mode, err)
		}
		if err := w.Close(); !errors.Is(err, dot.ErrBareCR) {
			t.Errorf("%v: Close: %v, want a bare CR", mode, err)
		}
		bw.Flush()
		if strings.Contains(b.String(), ".\r\n") {
			t.Errorf("%v: wrote an end line: %q", mode, b.String())
		}
	}
}

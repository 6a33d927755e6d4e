package dotstop

import (
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// Offset against the problem's position, found here by feeding one byte at
// a time from the start, for each kind of problem and with the problem
// behind a part of the block already decoded.
func TestOffset(t *testing.T) {
	for _, c := range []struct {
		name string
		dec  dot.Decoder
		in   string
	}{
		{"too large", dot.Decoder{Mode: dot.Raw, MaxSize: 10}, strings.Repeat("x", 200) + "\r\n.\r\n"},
		{"line too long", dot.Decoder{Mode: dot.Raw, MaxLine: 70}, "a\r\n" + strings.Repeat("y", 300) + "\r\n.\r\n"},
		{"bare LF", dot.Decoder{Mode: dot.Raw, Bare: dot.BareReject}, strings.Repeat("z", 130) + "\nq\r\n.\r\n"},
		{"stuffed", dot.Decoder{Mode: dot.Raw, MaxSize: 100}, strings.Repeat("..ab\r\n", 40) + ".\r\n"},
		{"none", dot.Decoder{Mode: dot.Raw}, "fine\r\n.\r\n"},
	} {
		want := len(c.in)
		probe := c.dec
		for i := range len(c.in) {
			var b [8]byte
			probe.Transform(b[:], []byte(c.in[i:i+1]), false)
			if probe.Err() != nil {
				want = i + 1
				break
			}
		}
		for _, head := range []int{0, 1, 5, 64, 65} {
			if head >= want {
				continue
			}
			dec := c.dec
			var b [512]byte
			dec.Transform(b[:], []byte(c.in[:head]), false)
			saved := dec
			if got := Offset(dec, []byte(c.in[head:])); got != want-head {
				t.Errorf("%s, %d decoded first: %d, want %d", c.name, head, got, want-head)
			}
			if dec != saved {
				t.Errorf("%s: Offset changed its caller's decoder", c.name)
			}
		}
	}
}

package textproto

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// A message's size is its bytes whatever the bare-byte policy: a bare CR
// or LF that BareReject refuses counts toward the limit, in a Raw dot
// block as in BDAT chunks, so both fail the same message too large (552)
// with the same limit. The dot decoder left refused bytes out: the
// message below, 13 bytes with four bare ones, passed a limit of 12 as
// DATA and failed it as BDAT.
func TestSizeCountsRefusedBareBytes(t *testing.T) {
	const msg = "ab\nb\raab\ra\n\r\n" // 13 bytes: bare LF, CR, CR, LF
	for _, bare := range []dot.BarePolicy{dot.BareReject, dot.BareKeep} {
		for _, max := range []int64{int64(len(msg)) - 1, int64(len(msg))} {
			r := NewReader(bufio.NewReader(strings.NewReader(msg + ".\r\n")))
			_, derr := io.Copy(io.Discard, r.DotReaderWith(DotOptions{Mode: dot.Raw, Bare: bare, MaxBytes: max}))

			rc := NewReader(bufio.NewReader(strings.NewReader(msg)))
			k := rc.Chunks(ChunkOptions{Bare: bare, MaxBytes: max})
			_, cerr := io.Copy(io.Discard, k.Next(int64(len(msg)), true))

			want := max < int64(len(msg))
			if errors.Is(derr, dot.ErrTooLarge) != want || errors.Is(cerr, dot.ErrTooLarge) != want {
				t.Errorf("bare %v, MaxBytes %d: DATA %v, BDAT %v; too large: %v", bare, max, derr, cerr, want)
			}
		}
	}
}

package textproto

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// A Bare that is none of dot's policies fails the message as a dot
// reader's does (dot.ErrMode), but its chunks are read to their end, so
// the session stays in step; it was taken as dot.BareKeep.
func TestChunksUnknownBare(t *testing.T) {
	for _, binary := range []bool{false, true} {
		r := NewReader(bufio.NewReader(strings.NewReader("hel\nlo" + "NEXT\r\n")))
		c := r.Chunks(ChunkOptions{Bare: dot.BareNormalize + 1, Binary: binary})
		// The first chunk with Read, the LAST one with WriteTo.
		got, err := io.ReadAll(c.Next(3, false))
		if len(got) != 0 || !errors.Is(err, dot.ErrMode) {
			t.Errorf("binary %v: chunk read %q, %v; want nothing and dot.ErrMode", binary, got, err)
		}
		var sb strings.Builder
		if _, err := c.Next(3, true).WriteTo(&sb); sb.Len() != 0 || !errors.Is(err, dot.ErrMode) {
			t.Errorf("binary %v: LAST chunk wrote %q, %v; want nothing and dot.ErrMode", binary, sb.String(), err)
		}
		if err := c.Err(); !errors.Is(err, dot.ErrMode) {
			t.Errorf("binary %v: Err %v, want dot.ErrMode", binary, err)
		}
		if l, err := r.ReadLine(); l != "NEXT" || err != nil {
			t.Errorf("binary %v: after the message: %q, %v", binary, l, err)
		}
	}
}

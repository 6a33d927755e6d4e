package dot

import (
	"bytes"
	"math/rand/v2"
	"runtime/debug"
	"testing"
)

// movePlain is moveLines' rule for one line, its LF included: at most lim
// bytes before its line end, no LF first, no CR first but that of an
// empty line, no dot first before a CR or LF, and in strict mode a CRLF
// end.
func movePlain(line []byte, lim int, strict bool) bool {
	n := len(line) - 1
	cr := n > 0 && line[n-1] == '\r'
	if cr {
		n--
	}
	switch {
	case n > lim, strict && !cr, line[0] == '\n':
		return false
	case line[0] == '\r':
		return n == 0
	case line[0] == '.':
		return line[1] != '\r' && line[1] != '\n'
	}
	return true
}

// TestMoveLines runs moveLines, whose loop reads and writes through
// pointers, with src and dst as small as its check allows and against
// inaccessible pages, so that a move past either faults; it takes the
// lines movePlain allows, up to the first it does not, and writes what
// lineByLine writes for them. A call that breaks its bounds panics.
func TestMoveLines(t *testing.T) {
	srcPage, dstPage := guardedPage(t), guardedPage(t)
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	r := rand.New(rand.NewPCG(11, 12))
	for iter := range 3000 {
		in := compatOddLines(r, 64+r.IntN(1500), []int{4, 30, 60}[iter%3])
		for len(in) > 0 && in[len(in)-1] != '\n' {
			in = in[:len(in)-1]
		}
		i := 0 // a line start
		if p := r.IntN(len(in)); r.IntN(2) == 0 {
			i = p + bytes.IndexByte(in[p:], '\n') + 1
		}
		base := i - r.IntN(i+1) // a chunk need not start at a line start
		at := lfOffsetsWant(in[base:])
		for len(at) > 0 && base+int(at[0]) < i {
			at = at[1:]
		}
		if len(at) == 0 {
			continue
		}
		lim := []int{79, 10, 40}[r.IntN(3)]
		strict := r.IntN(3) == 0
		last := base + int(at[len(at)-1])
		o := r.IntN(20)
		ns, nd := last+80, o+last-i+80
		// Against the pages after, or (a read or write before the
		// slices) before.
		src, dst := srcPage[len(srcPage)-ns:], dstPage[len(dstPage)-nd:]
		if iter%2 == 1 {
			src, dst = srcPage[:ns:ns], dstPage[:nd:nd]
		}
		for k := copy(src, in); k < len(src); k++ {
			src[k] = 'x'
		}

		o1, i1, taken := moveLines(strict, lim, dst, src, o, i, base, at)

		want, k := make([]byte, len(dst)), 0
		o2, i2 := o, i
		for ; k < len(at); k++ {
			lf := base + int(at[k])
			if !movePlain(src[i2:lf+1], lim, strict) {
				break
			}
			i3 := i2
			if o2, i2, _ = lineByLine(Compat, 0, 0, want, src[:lf+1], o2, i2); i2 == i3 {
				t.Fatalf("lineByLine does not take %q, which movePlain allows", src[i3:lf+1])
			}
		}
		if taken != k || o1 != o2 || i1 != i2 || !bytes.Equal(dst[o:o1], want[o:o2]) {
			t.Fatalf("moveLines(strict %v, lim %d, src %q from %d) took %d lines to %d, %d %q; want %d lines to %d, %d %q",
				strict, lim, src, i, taken, o1, i1, dst[o:o1], k, o2, i2, want[o:o2])
		}
	}

	src := bytes.Repeat([]byte("abc\r\n"), 40)
	at := lfOffsetsWant(src[:100])
	for _, c := range []struct {
		name       string
		dst, src   []byte
		o, i, base int
		at         []uint16
	}{
		{"src short", make([]byte, 200), src[:99+80-1], 0, 0, 0, at},
		{"dst short", make([]byte, 99+80-1), src, 0, 0, 0, at},
		{"start past the first LF", make([]byte, 200), src, 0, 5, 0, at},
		{"negative start", make([]byte, 200), src, 0, -1, 0, at},
		{"negative output", make([]byte, 200), src, -1, 0, 0, at},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: moveLines did not panic", c.name)
				}
			}()
			moveLines(false, 79, c.dst, c.src, c.o, c.i, c.base, c.at)
		}()
	}

	// An LF offset where src now holds a line's stuffed dot (src
	// changed after its LFs were found: a data race) stops the run
	// there, touching nothing before src or dst.
	src = srcPage[: 4+80 : 4+80]
	copy(src, ".x\r\n")
	dst := dstPage[:80:80]
	if o, i, taken := moveLines(false, 79, dst, src, 0, 0, 0, []uint16{0}); o != 0 || i != 0 || taken != 0 {
		t.Errorf("moveLines with an LF offset at a dot took %d lines to %d, %d", taken, o, i)
	}
}

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
		return n > 1
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
		src := srcPage[len(srcPage)-(last+80):]
		for k := copy(src, in); k < len(src); k++ {
			src[k] = 'x'
		}
		o := r.IntN(20)
		dst := dstPage[len(dstPage)-(o+last-i+80):]

		o1, i1, taken := moveLines(strict, lim, dst, src, o, i, base, at)

		want, k := make([]byte, len(dst)), 0
		o2, i2 := o, i
		for ; k < len(at); k++ {
			lf := base + int(at[k])
			if !movePlain(src[i2:lf+1], lim, strict) {
				break
			}
			o2, i2, _ = lineByLine(Compat, 0, 0, want, src[:lf+1], o2, i2)
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
}

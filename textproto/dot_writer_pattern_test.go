package textproto

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	stdtp "net/textproto"
	"strings"
	"testing"
)

// writeLog is an io.Writer that logs the bytes of every Write call. From
// call failAt on (if not negative) it takes half the bytes and fails.
type writeLog struct {
	log    []string
	failAt int
}

func (w *writeLog) Write(p []byte) (int, error) {
	if w.failAt >= 0 && len(w.log) >= w.failAt {
		w.log = append(w.log, fmt.Sprintf("fail %q", p))
		return len(p) / 2, errBroken
	}
	w.log = append(w.log, fmt.Sprintf("%q", p))
	return len(p), nil
}

// patternSession writes in to a DotWriter over a bufio.Writer of bufSize
// bytes, in Writes of sizes (cycled; none: io.Copy), ends it as end says
// (0: Close, 1: Close twice, 2: PrintfLine), and logs every result and
// every Write that reached the writer under the bufio.Writer.
func patternSession(w dotWriterAPI, out *writeLog, in []byte, sizes []int, end int) string {
	var res strings.Builder
	d := w.DotWriter()
	if len(sizes) == 0 {
		n, err := io.Copy(d, onlyReader{bytes.NewReader(in)})
		fmt.Fprintf(&res, "copy %d %v; ", n, err)
	}
	for i, p := 0, in; len(sizes) > 0 && len(p) > 0; i++ {
		k := min(sizes[i%len(sizes)], len(p))
		n, err := d.Write(p[:k])
		fmt.Fprintf(&res, "write %d %v; ", n, err)
		p = p[k:]
	}
	switch end {
	case 0:
		fmt.Fprintf(&res, "close %v; ", d.Close())
	case 1:
		fmt.Fprintf(&res, "close %v; close %v; ", d.Close(), d.Close())
	case 2:
		fmt.Fprintf(&res, "printf %v; ", w.PrintfLine("QUIT"))
	}
	return res.String() + "writes " + strings.Join(out.log, "|")
}

func diffPattern(t *testing.T, in []byte, bufSize, failAt int, sizes []int, end int) {
	t.Helper()
	sw, ow := &writeLog{failAt: failAt}, &writeLog{failAt: failAt}
	want := patternSession(stdtp.NewWriter(bufio.NewWriterSize(sw, bufSize)), sw, in, sizes, end)
	got := patternSession(NewWriter(bufio.NewWriterSize(ow, bufSize)), ow, in, sizes, end)
	if got != want {
		t.Fatalf("input %q, bufio size %d, failing at write %d, write sizes %v, end %d:\nnet/textproto: %s\nwirespeed:     %s",
			in, bufSize, failAt, sizes, end, want, got)
	}
}

// TestDotWriterSmallBufferPattern: a DotWriter writes to the writer under
// a bufio.Writer smaller than the end marker in the same pieces as
// net/textproto's. Close wrote the whole end marker with one Write to the
// bufio.Writer, which, empty and too small, passed it through in one
// piece, where net/textproto writes the line ending byte by byte: the
// pieces differed, and so did the bytes a failing connection took.
func TestDotWriterSmallBufferPattern(t *testing.T) {
	diffPattern(t, []byte("a"), 1, -1, []int{1}, 0)
	diffPattern(t, []byte("a"), 2, 1, []int{1}, 0)
	r := rand.New(rand.NewPCG(8, 9))
	iters := 5000
	if testing.Short() {
		iters = 500
	}
	for range iters {
		in := randomDotInput(r, r.IntN(40))
		bufSize := 1 + r.IntN(8)
		if r.IntN(4) == 0 {
			bufSize = 16 + r.IntN(3)
		}
		failAt := -1
		if r.IntN(3) == 0 {
			failAt = r.IntN(12)
		}
		var sizes []int
		if r.IntN(5) != 0 {
			sizes = []int{1 + r.IntN(5), 1 + r.IntN(20)}
		}
		diffPattern(t, in, bufSize, failAt, sizes, r.IntN(3))
	}
}

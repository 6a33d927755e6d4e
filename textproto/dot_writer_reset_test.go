package textproto

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	stdtp "net/textproto"
	"testing"
)

// takeThenFail takes up to take bytes of each Write and then fails it.
type takeThenFail struct {
	take int
	out  bytes.Buffer
}

func (w *takeThenFail) Write(p []byte) (int, error) {
	n := min(len(p), w.take)
	w.out.Write(p[:n])
	return n, errBroken
}

// resetSession writes pieces to a DotWriter over a bufio.Writer of 16
// bytes whose writer fails, then resets the bufio.Writer onto a good
// writer and writes more, and closes. It logs the results and all bytes.
func resetSession(w dotWriterAPI, bw *bufio.Writer, bad *takeThenFail, before, after [][]byte) string {
	var log bytes.Buffer
	d := w.DotWriter()
	for _, p := range before {
		n, err := d.Write(p)
		fmt.Fprintf(&log, "write %d %v; ", n, err)
	}
	var good bytes.Buffer
	bw.Reset(&good)
	for _, p := range after {
		n, err := d.Write(p)
		fmt.Fprintf(&log, "write %d %v; ", n, err)
	}
	fmt.Fprintf(&log, "close %v; failing writer %q, then %q", d.Close(), bad.out.Bytes(), good.Bytes())
	return log.String()
}

// TestDotWriterStateAfterWriteError: after a failed write, a Compat
// DotWriter is in the state net/textproto's is in, which shows when the
// caller resets W onto another writer and goes on. A Write on a failed
// bufio.Writer with room in its buffer encoded all its input (and a Write
// whose flush failed none of it), where net/textproto's moves over the
// one byte it failed to write: the next line's leading dot was stuffed or
// not depending on it.
func TestDotWriterStateAfterWriteError(t *testing.T) {
	pieces := func(r *rand.Rand) [][]byte {
		var ps [][]byte
		for range r.IntN(5) {
			ps = append(ps, randomDotInput(r, r.IntN(20)))
		}
		return ps
	}
	check := func(before, after [][]byte, take int) {
		t.Helper()
		run := func(mk func(*bufio.Writer) dotWriterAPI) string {
			bad := &takeThenFail{take: take}
			bw := bufio.NewWriterSize(bad, 16)
			return resetSession(mk(bw), bw, bad, before, after)
		}
		want := run(func(bw *bufio.Writer) dotWriterAPI { return stdtp.NewWriter(bw) })
		got := run(func(bw *bufio.Writer) dotWriterAPI { return NewWriter(bw) })
		if got != want {
			t.Fatalf("writes %q, reset, writes %q (failing writer takes %d):\nnet/textproto: %s\nwirespeed:     %s", before, after, take, want, got)
		}
	}
	check([][]byte{[]byte("0123456789abcdef"), []byte("z"), []byte("ab\n")}, [][]byte{[]byte(".x\n")}, 8)
	check([][]byte{[]byte("0123456789abcdef"), []byte("\n")}, [][]byte{[]byte(".x\n")}, 0)
	r := rand.New(rand.NewPCG(10, 11))
	for range 3000 {
		check(pieces(r), pieces(r), r.IntN(10))
	}
}

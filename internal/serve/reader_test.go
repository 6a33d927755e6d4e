package serve

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
)

// lineSplitter cut into reads of every size from 1 to 300 bytes finds the
// lines bytes.SplitAfter finds, and keeps the unterminated tail.
func TestLineSplitter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var in bytes.Buffer
	for i := 0; i < 300; i++ {
		in.WriteString(strings.Repeat("x", r.IntN(2*smallRead)))
		in.WriteByte('\n')
	}
	in.WriteString("tail without newline")
	data := in.Bytes()
	want := bytes.SplitAfter(data, []byte("\n"))
	want = want[:len(want)-1] // the tail is not a line
	for size := 1; size <= 300; size++ {
		var s lineSplitter
		var got [][]byte
		for b := data; len(b) > 0; {
			n := min(size, len(b))
			if !s.lines(b[:n], func(line []byte) bool { got = append(got, bytes.Clone(line)); return true }) {
				t.Fatalf("size %d: a line was refused", size)
			}
			b = b[n:]
		}
		if len(got) != len(want) {
			t.Fatalf("size %d: %d lines, want %d", size, len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("size %d: line %d differs", size, i)
			}
		}
		if string(s.partial) != "tail without newline" {
			t.Fatalf("size %d: partial %q", size, s.partial)
		}
	}
}

// A line longer than MaxLine is refused whether it comes in one read or
// many, and a handler's false stops the splitting.
func TestLineSplitterLimits(t *testing.T) {
	long := append(bytes.Repeat([]byte("y"), MaxLine+1), '\n')
	ok := func([]byte) bool { return true }
	for _, size := range []int{len(long), 4096, 100} {
		var s lineSplitter
		refused := false
		for b := long; len(b) > 0 && !refused; {
			n := min(size, len(b))
			refused = !s.lines(b[:n], ok)
			b = b[n:]
		}
		if !refused {
			t.Errorf("reads of %d: a %d-byte line was accepted", size, len(long))
		}
	}
	var s lineSplitter
	calls := 0
	if s.lines([]byte("a\nb\nc\n"), func([]byte) bool { calls++; return calls < 2 }) || calls != 2 {
		t.Errorf("stopped after %d calls", calls)
	}
	var fits lineSplitter
	if !fits.lines(append(bytes.Repeat([]byte("z"), MaxLine-1), '\n'), ok) {
		t.Error("a line of MaxLine bytes was refused")
	}
}

// connReader reads into its small buffer, takes a pooled one only after a
// read that filled the small one, and gives it back after a short read.
func TestConnReader(t *testing.T) {
	a, b := net.Pipe() // each Read returns at most one Write
	defer a.Close()
	defer b.Close()
	r := &connReader{c: b}
	steps := []struct {
		write   int
		reads   []int // sizes the reads return
		holdBig bool  // after the reads
	}{
		{10, []int{10}, false},
		{smallRead, []int{smallRead}, false},        // filled: the next read takes a big buffer
		{3 * smallRead, []int{3 * smallRead}, true}, // short of the big buffer
		{20, []int{20}, false},                      // back to the small one
		{smallRead + 5, []int{smallRead, 5}, true},  // 5 bytes read into the big buffer
		{7, []int{7}, false},
	}
	for i, st := range steps {
		go a.Write(bytes.Repeat([]byte{byte(i)}, st.write))
		for _, want := range st.reads {
			got, err := r.read()
			if err != nil || len(got) != want || got[0] != byte(i) {
				t.Fatalf("step %d: read %d bytes, %v; want %d", i, len(got), err, want)
			}
		}
		if (r.big != nil) != st.holdBig {
			t.Fatalf("step %d: holding a big buffer: %v", i, r.big != nil)
		}
	}
	a.Close()
	if _, err := r.read(); err != io.EOF {
		t.Fatalf("%v, want EOF", err)
	}
	r.release()
	if r.big != nil {
		t.Fatal("big buffer kept after release")
	}
}

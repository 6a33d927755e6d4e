package textproto

import (
	"bufio"
	"errors"
	"io"
	stdtp "net/textproto"
	"strconv"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// The shapes of input below once made a Reader allocate much more than its
// limits, or than net/textproto, promised. Each test counts the bytes
// allocated (runtime.MemStats.TotalAlloc), which is deterministic enough to
// assert; internal/memtrap measures the full-size shapes, with the maximum
// RSS, in a process of their own.

// genLines is a source of n lines made by line(i), then tail.
type genLines struct {
	n, i int
	line func(i int, b []byte) []byte
	buf  []byte
	tail string
}

func (g *genLines) Read(p []byte) (int, error) {
	for len(g.buf) < len(p) && g.i < g.n {
		g.buf = g.line(g.i, g.buf)
		g.i++
	}
	if g.i == g.n && g.tail != "" {
		g.buf = append(g.buf, g.tail...)
		g.tail = ""
	}
	if len(g.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.buf)
	g.buf = g.buf[:copy(g.buf, g.buf[n:])]
	return n, nil
}

func emptyLines(n int) io.Reader {
	return &genLines{n: n, line: func(_ int, b []byte) []byte { return append(b, "\r\n"...) }, tail: ".\r\nNEXT\r\n"}
}

func repeatedFields(n int) io.Reader {
	return &genLines{n: n, line: func(_ int, b []byte) []byte { return append(b, "A: x\r\n"...) }, tail: "\r\nNEXT\r\n"}
}

func uniqueFields(n int) io.Reader {
	return &genLines{n: n, line: func(i int, b []byte) []byte {
		b = append(b, "K-"...)
		b = strconv.AppendInt(b, int64(i), 10)
		return append(b, ": x\r\n"...)
	}, tail: "\r\nNEXT\r\n"}
}

// TestMemoryDotLinesEmpty reads a block of 1 Mi empty lines with a
// MaxDotBytes of 64 KiB: empty lines cost their string headers, so
// ReadDotLines keeps no more lines than the limit pays for and allocates
// at most about three times the limit (the slice grows by doubling).
func TestMemoryDotLinesEmpty(t *testing.T) {
	const max = 64 << 10
	r := NewReader(bufio.NewReader(emptyLines(1 << 20)))
	r.SetLimits(Limits{MaxDotBytes: max, MaxLineBytes: 1000})
	var lines []string
	var err error
	grew := heapGrowth(func() { lines, err = r.ReadDotLines() })
	if !errors.Is(err, dot.ErrTooLarge) {
		t.Fatalf("err %v", err)
	}
	if held := int64(cap(lines)) * stringHeaderSize; held > max || len(lines) != max/stringHeaderSize {
		t.Errorf("kept %d lines in a slice of %d bytes; want %d lines, at most %d bytes", len(lines), held, max/stringHeaderSize, max)
	}
	if grew > 3*max+8<<10 {
		t.Errorf("allocated %d bytes; want at most %d", grew, 3*max+8<<10)
	}
	if l, err := r.ReadLine(); l != "NEXT" || err != nil {
		t.Errorf("after the block: %q, %v", l, err)
	}
}

// TestMemoryDotLinesUnlimited checks that without limits ReadDotLines
// allocates no more than net/textproto's on the same block: they grow the
// slice the same way (a few KiB of one-time allocations aside).
func TestMemoryDotLinesUnlimited(t *testing.T) {
	const n = 256 << 10
	ours := NewReader(bufio.NewReader(emptyLines(n)))
	std := stdtp.NewReader(bufio.NewReader(emptyLines(n)))
	var a, b []string
	got := heapGrowth(func() { a, _ = ours.ReadDotLines() })
	want := heapGrowth(func() { b, _ = std.ReadDotLines() })
	if len(a) != n || len(b) != n {
		t.Fatalf("%d and %d lines", len(a), len(b))
	}
	t.Logf("%d empty lines: %d bytes allocated, net/textproto %d", n, got, want)
	if got > want+want/100 {
		t.Errorf("%d empty lines: %d bytes allocated, net/textproto %d", n, got, want)
	}
}

package textproto

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	stdtp "net/textproto"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/corpus"
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

// headerShapes are inputs on which ReadMIMEHeader must allocate no more
// than net/textproto's: each func returns a fresh source of one header
// followed by "NEXT\r\n".
var headerShapes = []struct {
	name string
	src  func() io.Reader
}{
	{"repeated key", func() io.Reader { return repeatedFields(64 << 10) }},
	{"unique keys", func() io.Reader { return uniqueFields(64 << 10) }},
	{"long unique keys", func() io.Reader {
		return &genLines{n: 8 << 10, line: func(i int, b []byte) []byte {
			b = append(b, strings.Repeat("k", 100)...)
			b = strconv.AppendInt(b, int64(i), 10)
			return append(b, ": x\r\n"...)
		}, tail: "\r\nNEXT\r\n"}
	}},
	{"values of 400 bytes", func() io.Reader { return longValues(8<<10, 400) }},
	{"values of 600 bytes", func() io.Reader { return longValues(8<<10, 600) }},
	{"values of 100 KiB", func() io.Reader { return longValues(64, 100<<10) }},
	{"mail corpus", func() io.Reader { return bytes.NewReader(mailHeader) }},
	{"http", func() io.Reader { return strings.NewReader(httpHeader + "NEXT\r\n") }},
}

var mailHeader = append(corpus.Header(64<<10), "NEXT\r\n"...)

func longValues(n, size int) io.Reader {
	v := strings.Repeat("v", size)
	return &genLines{n: n, line: func(i int, b []byte) []byte {
		b = append(b, "Key-"...)
		b = strconv.AppendInt(b, int64(i%7), 10)
		b = append(b, ": "...)
		return append(append(b, v...), "\r\n"...)
	}, tail: "\r\nNEXT\r\n"}
}

// TestMemoryHeader checks that ReadMIMEHeader allocates no more bytes
// than net/textproto's on each shape, with Readers reused over many
// headers, as a server's are. A new Reader also allocates its scratch
// buffers on its first header: on headers of more than a few KiB it still
// allocates less than net/textproto, and on small ones at most
// firstHeaderScratch more.
func TestMemoryHeader(t *testing.T) {
	const firstHeaderScratch = 1 << 10
	for _, c := range headerShapes {
		t.Run(c.name, func(t *testing.T) {
			ours := NewReader(bufio.NewReader(c.src()))
			std := stdtp.NewReader(bufio.NewReader(c.src()))
			var h1, h2 MIMEHeader
			var err1, err2 error
			got := heapGrowth(func() { h1, err1 = ours.ReadMIMEHeader() })
			want := heapGrowth(func() { h2, err2 = std.ReadMIMEHeader() })
			if err1 != nil || err2 != nil || !reflect.DeepEqual(h1, h2) {
				t.Fatalf("different headers, or %v, %v", err1, err2)
			}
			if l, err := ours.ReadLine(); l != "NEXT" || err != nil {
				t.Fatalf("after the header: %q, %v", l, err)
			}
			t.Logf("new Reader: %d bytes allocated, net/textproto %d", got, want)
			if exceeds(got, want) && (want >= 64<<10 || got > want+firstHeaderScratch) {
				t.Errorf("new Reader: %d bytes allocated, net/textproto %d", got, want)
			}

			// Reused, as a server reads one header after another.
			const runs = 10
			br := bufio.NewReader(c.src())
			ours, std = NewReader(br), stdtp.NewReader(br)
			ours.ReadMIMEHeader() // allocate the scratch
			got = heapGrowth(func() {
				for range runs {
					br.Reset(c.src())
					ours.ReadMIMEHeader()
				}
			})
			want = heapGrowth(func() {
				for range runs {
					br.Reset(c.src())
					std.ReadMIMEHeader()
				}
			})
			t.Logf("reused: %d bytes allocated, net/textproto %d", got/runs, want/runs)
			if exceeds(got, want) {
				t.Errorf("reused: %d bytes allocated, net/textproto %d", got/runs, want/runs)
			}
		})
	}
}

// A server keeps a Reader a connection, idle or not: NewReader allocates
// at most 512 bytes where int has 64 bits, 320 where it has 32 (the
// Reader takes 464 and 296, 480 and 320 with their size classes;
// net/textproto's about 48: ours also holds the limits' state and the
// header builder's).
func TestMemoryNewReader(t *testing.T) {
	most := uint64(512)
	if strconv.IntSize == 32 {
		most = 320
	}
	br := bufio.NewReader(strings.NewReader(""))
	rs := make([]*Reader, 100)
	got := heapGrowth(func() {
		for i := range rs {
			rs[i] = NewReader(br)
		}
	}) / uint64(len(rs))
	if got > most {
		t.Errorf("NewReader allocated %d bytes; want at most %d", got, most)
	}
}

// exceeds reports whether got is more than want, give or take a
// thousandth: heapGrowth counts what the whole process allocates while
// it runs (the runtime's own allocations too), and a map's layout
// depends on its random hash seed; an arm64 run under qemu once read
// 3539488 bytes against net/textproto's 3538811 for the same 10 headers.
func exceeds(got, want uint64) bool { return got > want+want/1000 }

// TestMemoryHeaderScratchKept checks that a Reader keeps at most
// keepScratch bytes of header scratch after a large header.
func TestMemoryHeaderScratchKept(t *testing.T) {
	r := NewReader(bufio.NewReader(uniqueFields(16 << 10)))
	if _, err := r.ReadMIMEHeader(); err != nil {
		t.Fatal(err)
	}
	if kept := r.hdr.scratchSize(); kept > keepScratch {
		t.Errorf("%d bytes of scratch kept; want at most %d", kept, keepScratch)
	}
}

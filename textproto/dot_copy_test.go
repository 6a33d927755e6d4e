package textproto

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	stdtp "net/textproto"
	"strings"
	"testing"
)

// failAfter takes limit bytes, then fails every Write (with the part of
// it that fits).
type failAfter struct{ limit int }

var errDiskFull = errors.New("disk full (test)")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) <= f.limit {
		f.limit -= len(p)
		return len(p), nil
	}
	n := f.limit
	f.limit = 0
	return n, errDiskFull
}

// TestDotReaderCopyToReaderFrom checks io.Copy from a dot reader into a
// destination that is an io.ReaderFrom (a bufio.Writer, say, over a file
// that fills up) against net/textproto: io.Copy hands net/textproto's
// reader to the destination's ReadFrom, which reads as it likes, so when
// the destination fails, the count io.Copy returns and how far R has
// been read must be net/textproto's, as must the line read after it.
func TestDotReaderCopyToReaderFrom(t *testing.T) {
	in := strings.Repeat("a line of the message\r\n..dot\r\n", 3000) + ".\r\nQUIT\r\n"
	session := func(std bool, size, limit int) string {
		src := &counter{r: strings.NewReader(in)}
		br := bufio.NewReaderSize(src, 1024)
		var d io.Reader
		var readLine func() (string, error)
		if std {
			r := stdtp.NewReader(br)
			d, readLine = onlyReader{r.DotReader()}, r.ReadLine
		} else {
			r := NewReader(br)
			d, readLine = r.DotReader(), r.ReadLine
		}
		var dst io.Writer
		var out bytes.Buffer
		if limit < 0 {
			dst = bufio.NewWriterSize(&out, size)
		} else {
			dst = bufio.NewWriterSize(&failAfter{limit: limit}, size)
		}
		n, err := io.Copy(dst, d)
		pos := src.n - br.Buffered()
		line, lerr := readLine()
		return fmt.Sprintf("copied %d %v, at %d, then %q %v", n, err, pos, line, lerr)
	}
	for _, size := range []int{16, 100, 4096} {
		for _, limit := range []int{0, 1, 50, 5000, 40000, -1} {
			want, got := session(true, size, limit), session(false, size, limit)
			if got != want {
				t.Errorf("bufio.Writer of %d bytes failing after %d:\n ours: %s\n std:  %s", size, limit, got, want)
			}
		}
	}
}

// overCounter says it wrote one byte more than it was given, a broken
// io.Writer.
type overCounter struct{}

func (overCounter) Write(p []byte) (int, error) { return len(p) + 1, nil }

// TestDotReaderCopyInvalidWrite checks io.Copy from a dot reader into a
// writer that reports more bytes written than it was given: io.Copy
// stops with "invalid write result", counting none of them, for
// net/textproto's reader, and so must WriteTo.
func TestDotReaderCopyInvalidWrite(t *testing.T) {
	in := "data\r\n.\r\nQUIT\r\n"
	sr := stdtp.NewReader(bufio.NewReader(strings.NewReader(in)))
	wn, werr := io.Copy(overCounter{}, onlyReader{sr.DotReader()})
	r := NewReader(bufio.NewReader(strings.NewReader(in)))
	gn, gerr := io.Copy(overCounter{}, r.DotReader())
	if gn != wn || fmt.Sprint(gerr) != fmt.Sprint(werr) || werr == nil {
		t.Errorf("io.Copy into a writer over-counting: ours %d %v, net/textproto %d %v", gn, gerr, wn, werr)
	}
}

// TestChunkCopyInvalidWrite: a BDAT chunk's WriteTo applies io.Copy's
// rules too: a writer over-counting fails the copy, counting nothing.
func TestChunkCopyInvalidWrite(t *testing.T) {
	r := NewReader(bufio.NewReader(strings.NewReader("0123456789QUIT\r\n")))
	n, err := io.Copy(overCounter{}, r.Chunks(ChunkOptions{}).Next(10, true))
	if n != 0 || err == nil || err.Error() != "invalid write result" {
		t.Errorf("io.Copy of a chunk into a writer over-counting: %d %v, want 0, invalid write result", n, err)
	}
}

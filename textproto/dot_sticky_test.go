package textproto

import (
	"bufio"
	"errors"
	"io"
	"net/textproto"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wirespeed/wirespeed/dot"
)

// TestDotWriterClosedStrict checks that a Strict or Raw DotWriter refuses
// Write, ReadFrom and Close after Close, writing nothing.
func TestDotWriterClosedStrict(t *testing.T) {
	for _, mode := range []dot.Mode{dot.Strict, dot.Raw} {
		var out strings.Builder
		w := NewWriter(bufio.NewWriter(&out))
		d := w.DotWriterMode(mode)
		if _, err := io.WriteString(d, "hi\r\n"); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if n, err := io.WriteString(d, "RCPT TO:<x>\r\n"); n != 0 || !errors.Is(err, dot.ErrClosed) {
			t.Errorf("%v: Write after Close = %d, %v", mode, n, err)
		}
		if n, err := d.(io.ReaderFrom).ReadFrom(strings.NewReader("RCPT TO:<x>\r\n")); n != 0 || !errors.Is(err, dot.ErrClosed) {
			t.Errorf("%v: ReadFrom after Close = %d, %v", mode, n, err)
		}
		if err := d.Close(); !errors.Is(err, dot.ErrClosed) {
			t.Errorf("%v: second Close = %v", mode, err)
		}
		// The Writer itself is fine: the block was finished.
		if err := w.PrintfLine("QUIT"); err != nil {
			t.Fatal(err)
		}
		if got, want := out.String(), "hi\r\n.\r\nQUIT\r\n"; got != want {
			t.Errorf("%v: wire %q, want %q", mode, got, want)
		}
	}
}

// TestDotWriterClosedCompat checks that Compat still writes after Close as
// net/textproto does.
func TestDotWriterClosedCompat(t *testing.T) {
	run := func(newDot func(*bufio.Writer) io.WriteCloser) (string, []error) {
		var out strings.Builder
		bw := bufio.NewWriter(&out)
		d := newDot(bw)
		var errs []error
		_, err := io.WriteString(d, "hi\n")
		errs = append(errs, err)
		errs = append(errs, d.Close())
		_, err = io.WriteString(d, "RCPT TO:<x>\n")
		errs = append(errs, err)
		errs = append(errs, d.Close())
		errs = append(errs, d.Close())
		return out.String(), errs
	}
	got, gerrs := run(func(bw *bufio.Writer) io.WriteCloser { return NewWriter(bw).DotWriter() })
	want, werrs := run(func(bw *bufio.Writer) io.WriteCloser { return textproto.NewWriter(bw).DotWriter() })
	if got != want {
		t.Errorf("wire %q, net/textproto %q", got, want)
	}
	for i := range gerrs {
		if gerrs[i] != werrs[i] {
			t.Errorf("error %d: %v, net/textproto %v", i, gerrs[i], werrs[i])
		}
	}
}

type stickyFailWriter struct {
	ok  int // bytes accepted before failing
	got strings.Builder
}

var errWire = errors.New("wire broken")

func (f *stickyFailWriter) Write(b []byte) (int, error) {
	if len(b) > f.ok {
		n := f.ok
		f.got.Write(b[:n])
		f.ok = 0
		return n, errWire
	}
	f.ok -= len(b)
	f.got.Write(b)
	return len(b), nil
}

// TestDotWriterSticky checks that after a Strict or Raw DotWriter failed
// mid-block, nothing more is written through the Writer.
func TestDotWriterSticky(t *testing.T) {
	for _, mode := range []dot.Mode{dot.Strict, dot.Raw} {
		for _, bad := range []string{"a\nb\r\n", "a\rb\r\n"} {
			var out strings.Builder
			w := NewWriter(bufio.NewWriter(&out))
			d := w.DotWriterMode(mode)
			_, werr := io.WriteString(d, "ok\r\n"+bad)
			var se *dot.SyntaxError
			if !errors.As(werr, &se) {
				t.Fatalf("%v %q: Write = %v", mode, bad, werr)
			}
			check := func(what string, err error) {
				t.Helper()
				if err != werr {
					t.Errorf("%v %q: %s = %v, want %v", mode, bad, what, err, werr)
				}
			}
			_, err := io.WriteString(d, "more\r\n")
			check("Write after failure", err)
			check("PrintfLine", w.PrintfLine("RCPT TO:<x>"))
			check("Close", d.Close())
			check("PrintfLine after Close", w.PrintfLine("RCPT TO:<x>"))
			d2 := w.DotWriterMode(mode)
			_, err = io.WriteString(d2, "x\r\n")
			check("new DotWriter's Write", err)
			_, err = d2.(io.ReaderFrom).ReadFrom(strings.NewReader("x\r\n"))
			check("new DotWriter's ReadFrom", err)
			check("new DotWriter's Close", d2.Close())
			check("Compat DotWriter's Close", w.DotWriter().Close())
			check("WriteChunk", w.WriteChunk([]byte("x"), true))
			cw := w.ChunkWriter(4)
			_, err = cw.Write([]byte("xxxxxxxx"))
			check("ChunkWriter's Write", err)
			check("ChunkWriter's Close", cw.Close())
			w.W.Flush()
			// Only the data before the bad byte reached the wire.
			if got, want := out.String(), "ok\r\na"; got != want {
				t.Errorf("%v %q: wire %q, want %q", mode, bad, got, want)
			}
		}
	}
}

// TestDotWriterStickyWriteError checks that a write error in a Strict
// DotWriter is sticky on the Writer too.
func TestDotWriterStickyWriteError(t *testing.T) {
	fw := &stickyFailWriter{ok: 6}
	w := NewWriter(bufio.NewWriterSize(fw, 16))
	d := w.DotWriterMode(dot.Strict)
	_, werr := io.WriteString(d, strings.Repeat("abcd\r\n", 10))
	if !errors.Is(werr, errWire) {
		t.Fatalf("Write = %v", werr)
	}
	if err := d.Close(); err != werr {
		t.Errorf("Close = %v", err)
	}
	if err := w.PrintfLine("QUIT"); err != werr {
		t.Errorf("PrintfLine = %v", err)
	}
	if got := fw.got.String(); got != "abcd\r\n" {
		t.Errorf("wire %q", got)
	}
}

var errSource = errors.New("source broken")

// TestDotWriterStickySourceError checks that when the source of a Strict
// or Raw DotWriter's ReadFrom fails, the message is not ended as if whole:
// later Writes, Close and the Writer's other methods return an error
// matching the source's, and no end line reaches the wire. A Compat
// writer ends the block on Close, as net/textproto's does after io.Copy
// from the same source.
func TestDotWriterStickySourceError(t *testing.T) {
	src := func() io.Reader {
		return io.MultiReader(strings.NewReader("hello\r\nwor"), iotest.ErrReader(errSource))
	}
	for _, mode := range []dot.Mode{dot.Strict, dot.Raw} {
		for _, viaCopy := range []bool{false, true} {
			var out strings.Builder
			w := NewWriter(bufio.NewWriter(&out))
			d := w.DotWriterMode(mode)
			var n int64
			var err error
			if viaCopy {
				n, err = io.Copy(d, src())
			} else {
				n, err = d.(io.ReaderFrom).ReadFrom(src())
			}
			if n != 10 || err != errSource {
				t.Fatalf("%v copy %v: ReadFrom = %d, %v", mode, viaCopy, n, err)
			}
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, errSource) {
					t.Errorf("%v copy %v: %s = %v, want an error matching %v", mode, viaCopy, what, err, errSource)
				}
			}
			_, err = io.WriteString(d, "ld\r\n")
			check("Write after failure", err)
			_, err = d.(io.ReaderFrom).ReadFrom(strings.NewReader("ld\r\n"))
			check("ReadFrom after failure", err)
			check("Close", d.Close())
			check("second Close", d.Close())
			check("PrintfLine", w.PrintfLine("QUIT"))
			check("new DotWriter's Close", w.DotWriterMode(mode).Close())
			w.W.Flush()
			if got, want := out.String(), "hello\r\nwor"; got != want {
				t.Errorf("%v copy %v: wire %q, want %q", mode, viaCopy, got, want)
			}
		}
	}

	// Compat keeps net/textproto's behaviour: Close ends the block.
	run := func(d io.WriteCloser) []error {
		_, err := io.Copy(d, src())
		return []error{err, d.Close()}
	}
	var got, want strings.Builder
	gw, ww := bufio.NewWriter(&got), bufio.NewWriter(&want)
	gerrs := run(NewWriter(gw).DotWriter())
	werrs := run(textproto.NewWriter(ww).DotWriter())
	if got.String() != want.String() || got.String() != "hello\r\nwor\r\n.\r\n" {
		t.Errorf("Compat wire %q, net/textproto %q", got.String(), want.String())
	}
	for i := range gerrs {
		if gerrs[i] != werrs[i] {
			t.Errorf("Compat error %d: %v, net/textproto %v", i, gerrs[i], werrs[i])
		}
	}
}

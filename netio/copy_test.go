package netio

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tempFile(t *testing.T, size int) (*os.File, []byte) {
	t.Helper()
	data := make([]byte, size)
	r := rand.New(rand.NewPCG(uint64(size), 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	name := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, data
}

// The zero-copy path (sendfile via *net.TCPConn.ReadFrom) and the pooled
// buffer fallback put the same bytes on the wire, for whole files and for
// file sections.
func TestCopyZeroCopyMatchesFallback(t *testing.T) {
	const size = 3<<20 + 12345
	type copier func(dst io.Writer, src io.Reader) (int64, error)
	paths := map[string]copier{"zerocopy": Copy, "fallback": copyBuffered}
	for _, section := range []bool{false, true} {
		got := map[string][]byte{}
		for name, copyFn := range paths {
			f, data := tempFile(t, size)
			want := data
			var src io.Reader = f
			if section {
				if _, err := f.Seek(1000, io.SeekStart); err != nil {
					t.Fatal(err)
				}
				src = &io.LimitedReader{R: f, N: 1 << 20}
				want = data[1000 : 1000+1<<20]
			}
			if name == "zerocopy" && !zeroCopySource(src) {
				t.Fatalf("%T not recognised as a zero-copy source", src)
			}
			cli, srv := tcpPair(t)
			recv := readAll(srv)
			n, err := copyFn(cli, src)
			if err != nil || n != int64(len(want)) {
				t.Fatalf("%s: copied %d, %v; want %d", name, n, err, len(want))
			}
			cli.CloseWrite()
			got[name] = <-recv
			if !bytes.Equal(got[name], want) {
				t.Fatalf("%s (section %v): peer got %d bytes differing from the file", name, section, len(got[name]))
			}
		}
		if !bytes.Equal(got["zerocopy"], got["fallback"]) {
			t.Fatal("zero-copy and fallback output differ")
		}
	}
}

// Conn.ReadFrom keeps order with queued writes: header, file, trailer.
func TestConnReadFromOrder(t *testing.T) {
	f, data := tempFile(t, 200<<10)
	cli, srv := tcpPair(t)
	recv := readAll(srv)
	c := NewConn(cli, nil)
	c.Write([]byte("HEADER\r\n"))
	if n, err := io.Copy(c, f); err != nil || n != int64(len(data)) {
		t.Fatalf("io.Copy: %d, %v", n, err)
	}
	c.Write([]byte("TRAILER\r\n"))
	// A reader that is not a file goes through the pooled buffer.
	if _, err := Copy(c, strings.NewReader("plain\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte("HEADER\r\n"), data...), "TRAILER\r\nplain\r\n"...)
	if b := <-recv; !bytes.Equal(b, want) {
		t.Fatalf("got %d bytes, want %d; equal prefix %d", len(b), len(want), commonPrefix(b, want))
	}
	if s := c.Stats(); s.Written != int64(len(want)) {
		t.Fatalf("Stats.Written %d, want %d", s.Written, len(want))
	}
}

// panicReader gives some bytes, then panics.
type panicReader struct{ gave bool }

func (r *panicReader) Read(p []byte) (int, error) {
	if !r.gave {
		r.gave = true
		return copy(p, "some"), nil
	}
	panic("boom")
}

// TestWriterReadFromPanics: a source that panics in ReadFrom (a caller's
// io.Reader; the caller may recover) leaves the Writer failed, as a
// destination's panic does: part of the copy went out, how much is
// unknown. Before, the Writer stayed marked busy for ever: later Writes
// were accepted and never sent, and Flush and Close hung.
func TestWriterReadFromPanics(t *testing.T) {
	w := NewWriter(io.Discard, nil)
	if _, err := w.Write([]byte("head")); err != nil {
		t.Fatal(err)
	}
	v := func() (v any) {
		defer func() { v = recover() }()
		w.ReadFrom(&panicReader{})
		return nil
	}()
	if v != "boom" {
		t.Fatalf("ReadFrom: panic %v, want the source's (boom)", v)
	}
	if _, err := w.Write([]byte("y")); !errors.Is(err, errCopyPanic) {
		t.Fatalf("Write after ReadFrom panicked: %v, want %v", err, errCopyPanic)
	}
	if err := w.Flush(); !errors.Is(err, errCopyPanic) {
		t.Fatalf("Flush after ReadFrom panicked: %v", err)
	}
	if _, err := w.ReadFrom(strings.NewReader("x")); !errors.Is(err, errCopyPanic) {
		t.Fatalf("ReadFrom after ReadFrom panicked: %v", err)
	}
	if err := w.Close(); !errors.Is(err, errCopyPanic) {
		t.Fatalf("Close after ReadFrom panicked: %v", err)
	}
	// ReadFrom counts each write it made: "some" went out before the panic.
	if s := w.Stats(); s.Accepted != 8 || s.Written != 8 {
		t.Fatalf("stats %+v: want the 4 bytes before ReadFrom and the 4 it wrote accepted and written", s)
	}
}

package netio

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// stepDst records what a Writer writes to it, announces each write on
// wrote and, if hold is set, blocks its first write until release.
type stepDst struct {
	mu      sync.Mutex
	got     []byte
	late    bool // a write began after closed was set
	closed  bool
	hold    bool
	entered chan struct{}
	release chan struct{}
	wrote   chan struct{}
}

func newStepDst(hold bool) *stepDst {
	return &stepDst{hold: hold, entered: make(chan struct{}), release: make(chan struct{}), wrote: make(chan struct{}, 16)}
}

func (d *stepDst) Write(p []byte) (int, error) {
	d.mu.Lock()
	d.late = d.late || d.closed
	hold := d.hold
	d.hold = false
	d.mu.Unlock()
	if hold {
		close(d.entered)
		<-d.release
	}
	d.mu.Lock()
	d.got = append(d.got, p...)
	d.mu.Unlock()
	d.wrote <- struct{}{}
	return len(p), nil
}

// closeReturned notes that Close has returned: a write from then on is late.
func (d *stepDst) closeReturned() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
}

func (d *stepDst) result() (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return string(d.got), d.late
}

type copyResult struct {
	n   int64
	err error
}

// TestWriterCloseStopsReadFrom: Close, run while a ReadFrom (io.Copy into
// the Writer) writes to the destination, waits for that write and makes
// the ReadFrom return ErrClosed at its next step: nothing is written once
// Close has returned, and the source is not read further. Close returned
// at once, and the copy went on writing.
func TestWriterCloseStopsReadFrom(t *testing.T) {
	dst := newStepDst(true)
	w := NewWriter(dst, nil)
	pr, pw := io.Pipe()
	defer pr.Close()
	copied := make(chan copyResult, 1)
	go func() { n, err := io.Copy(w, pr); copied <- copyResult{n, err} }()
	if _, err := pw.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	<-dst.entered // the copy writes "a", held
	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	close(dst.release)
	<-dst.wrote
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	dst.closeReturned()
	go pw.Write([]byte("b")) // read only if the copy goes on
	select {
	case r := <-copied:
		if r.n != 1 || !errors.Is(r.err, ErrClosed) {
			t.Errorf("ReadFrom: %d, %v; want 1, ErrClosed", r.n, r.err)
		}
	case <-dst.wrote:
		if got, late := dst.result(); late {
			t.Fatalf("written after Close returned: destination has %q", got)
		}
	}
	if got, late := dst.result(); got != "a" || late {
		t.Errorf("destination has %q (late %v), want %q", got, late, "a")
	}
}

// TestWriterCloseReadFromBlockedSource: Close returns while a ReadFrom
// waits for its source (a pipe nobody writes to), sending what was
// written behind the copy; the ReadFrom returns ErrClosed once its read
// returns, writing nothing of it. Close hung, waiting for the copy to end.
func TestWriterCloseReadFromBlockedSource(t *testing.T) {
	dst := newStepDst(false)
	w := NewWriter(dst, nil)
	pr, pw := io.Pipe()
	defer pr.Close()
	copied := make(chan copyResult, 1)
	go func() { n, err := w.ReadFrom(pr); copied <- copyResult{n, err} }()
	if _, err := pw.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	<-dst.wrote
	if _, err := w.WriteString("q"); err != nil { // queued behind the copy
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	dst.closeReturned()
	if got, _ := dst.result(); got != "aq" {
		t.Fatalf("destination has %q after Close, want %q", got, "aq")
	}
	go pw.Write([]byte("b")) // the copy's read, if under way, returns
	if r := <-copied; r.n != 1 || !errors.Is(r.err, ErrClosed) {
		t.Errorf("ReadFrom: %d, %v; want 1, ErrClosed", r.n, r.err)
	}
	if got, late := dst.result(); got != "aq" || late {
		t.Errorf("destination has %q (late %v), want %q", got, late, "aq")
	}
	if s := w.Stats(); s.Accepted != 2 || s.Written != 2 || s.Queued != 0 {
		t.Errorf("stats %+v: want 2 bytes accepted and written", s)
	}
}

// TestConnCloseReadFromBlockedSource: Conn.Close, with a ReadFrom waiting
// for its source and a Write queued behind it, sends that Write without
// waiting for the copy (or for Linger), and closes; the ReadFrom returns
// ErrClosed, which matches net.ErrClosed. Close waited out the linger
// time, for a copy that could not end.
func TestConnCloseReadFromBlockedSource(t *testing.T) {
	cli, srv := tcpPair(t)
	c := NewConn(cli, &Options{Linger: time.Hour})
	pr, pw := io.Pipe()
	defer pr.Close()
	copied := make(chan copyResult, 1)
	go func() { n, err := io.Copy(c, pr); copied <- copyResult{n, err} }()
	if _, err := pw.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	a := make([]byte, 1)
	if _, err := io.ReadFull(srv, a); err != nil { // the copy wrote it
		t.Fatal(err)
	}
	recv := readAll(srv)
	if _, err := c.WriteString("q"); err != nil { // queued behind the copy
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := <-recv; string(got) != "q" {
		t.Fatalf("peer got %q after the copy's %q, want %q", got, a, "q")
	}
	go pw.Write([]byte("b")) // the copy's read, if under way, returns
	r := <-copied
	if r.n != 1 || !errors.Is(r.err, ErrClosed) || !errors.Is(r.err, net.ErrClosed) {
		t.Errorf("ReadFrom: %d, %v; want 1, ErrClosed", r.n, r.err)
	}
}

// TestWriterReadFromFileSteps: a Writer's ReadFrom of a file to a TCP
// connection, sent with sendfile in steps of at most zeroCopyStep, puts
// every byte on the wire in order, for a whole file and a section of one
// (whose N it counts down).
func TestWriterReadFromFileSteps(t *testing.T) {
	for _, section := range []bool{false, true} {
		f, data := tempFile(t, 2*zeroCopyStep+12345)
		want := data
		var src io.Reader = f
		lr := &io.LimitedReader{R: f, N: zeroCopyStep + 100}
		if section {
			if _, err := f.Seek(1000, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			src, want = lr, data[1000:1000+lr.N]
		}
		cli, srv := tcpPair(t)
		recv := readAll(srv)
		w := NewWriter(cli, nil)
		w.WriteString("HEAD")
		n, err := w.ReadFrom(src)
		if err != nil || n != int64(len(want)) {
			t.Fatalf("section %v: ReadFrom %d, %v; want %d", section, n, err, len(want))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		cli.CloseWrite()
		if got := <-recv; string(got) != "HEAD"+string(want) {
			t.Fatalf("section %v: peer got %d bytes, want %d", section, len(got), 4+len(want))
		}
		if section && lr.N != 0 {
			t.Fatalf("LimitedReader left with N %d", lr.N)
		}
		if s := w.Stats(); s.Written != int64(4+len(want)) || s.Queued != 0 {
			t.Fatalf("section %v: stats %+v", section, s)
		}
	}
}

// splicedCount counts what w's ReadFrom splices.
func splicedCount(w *Writer) func() int64 {
	var mu sync.Mutex
	var n int64
	w.SetSpliceHook(func(k int64) { mu.Lock(); n += k; mu.Unlock() })
	return func() int64 { mu.Lock(); defer mu.Unlock(); return n }
}

// TestReadFromCloseSilentSocket: Close, with a ReadFrom copying from a
// socket that sends nothing (io.Copy from one TCP connection into a
// Writer or Conn, as a proxy does) and a Write queued behind it by
// another goroutine, stops the copy without waiting for its source,
// sends that Write and returns nil (a Conn's with a short Linger); the
// ReadFrom returns ErrClosed once its read returns, writing nothing
// more. On Linux the copy's first step is spliced. A Conn handed the copy
// to splice whole, whose wait for the source Close cannot end: Close
// waited out Linger and returned ErrUnsent, the Write lost.
func TestReadFromCloseSilentSocket(t *testing.T) {
	for _, conn := range []bool{false, true} {
		name := "Writer"
		if conn {
			name = "Conn"
		}
		t.Run(name, func(t *testing.T) {
			cli, srv := tcpPair(t)
			src, silent := tcpPair(t) // silent sends nothing until the end
			defer silent.Close()
			w := NewWriter(cli, nil)
			closeFn := w.Close
			if conn {
				c := NewConn(cli, &Options{Linger: 50 * time.Millisecond})
				w, closeFn = c.Writer(), c.Close
			}
			spliced := splicedCount(w)
			if _, err := silent.Write([]byte("a")); err != nil {
				t.Fatal(err)
			}
			copied := make(chan copyResult, 1)
			go func() { n, err := io.Copy(w, src); copied <- copyResult{n, err} }()
			a := make([]byte, 1)
			if _, err := io.ReadFull(srv, a); err != nil { // the copy is under way
				t.Fatal(err)
			}
			if _, err := w.WriteString("q"); err != nil { // queued behind the copy
				t.Fatal(err)
			}
			closed := make(chan error, 1)
			go func() { closed <- closeFn() }()
			guard := time.NewTimer(time.Minute) // only a hang guard
			defer guard.Stop()
			select {
			case err := <-closed:
				if err != nil {
					t.Errorf("Close: %v; want nil, the queued Write sent", err)
				}
			case <-guard.C:
				silent.Close() // so that the copy, and Close, end
				t.Fatalf("Close did not return (Close: %v)", <-closed)
			}
			recv := readAll(srv)
			silent.Write([]byte("b")) // the copy's read, if under way, returns
			r := <-copied
			if r.n != 1 || !errors.Is(r.err, ErrClosed) {
				t.Errorf("ReadFrom: %d, %v; want 1, ErrClosed", r.n, r.err)
			}
			cli.Close() // a bare Writer's Close leaves it open
			if got := <-recv; string(got) != "q" {
				t.Errorf("peer got %q after the copy's %q, want %q", got, a, "q")
			}
			want := int64(0) // copied through the buffer
			if spliceReads {
				want = 1 // the first step
			}
			if got := spliced(); got != want {
				t.Errorf("%d bytes spliced, want %d", got, want)
			}
		})
	}
}

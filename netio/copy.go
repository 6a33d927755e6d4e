package netio

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
)

const copyBufSize = 64 << 10

// errCopyPanic is the Writer's error once a ReadFrom's source or
// destination panicked: how much of its copy went out is unknown.
var errCopyPanic = errors.New("netio: a ReadFrom panicked")

var copyPool = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// Copy copies src to dst until EOF or an error, like io.Copy. When dst is a
// *net.TCPConn and src is a file or socket (any syscall.Conn, or an
// *io.LimitedReader of one), Copy hands over to the standard library's
// ReadFrom, which uses sendfile or splice where the kernel allows. When dst
// is a *net.UnixConn (whose ReadFrom is the datagram one) and src an
// *os.File, it hands over to the file's WriteTo, which uses sendfile where
// the kernel allows (Linux). A [Conn] or [Writer] dst is flushed first and
// then treated as the connection it wraps. Everything else goes through a
// pooled 64 KiB buffer, allocating nothing per call.
func Copy(dst io.Writer, src io.Reader) (int64, error) {
	switch d := dst.(type) {
	case *Conn:
		return d.ReadFrom(src)
	case *Writer:
		return d.ReadFrom(src)
	case *net.TCPConn:
		if zeroCopySource(src) {
			return d.ReadFrom(src)
		}
	case *net.UnixConn:
		if f, ok := src.(*os.File); ok {
			return f.WriteTo(d)
		}
	}
	return copyBuffered(dst, src)
}

// zeroCopySource reports whether the standard library may splice or
// sendfile from r.
func zeroCopySource(r io.Reader) bool {
	if lr, ok := r.(*io.LimitedReader); ok {
		r = lr.R
	}
	// *os.File, and the wrapper os.File.WriteTo hands to io.Copy, are
	// syscall.Conns; so are TCP and Unix sockets.
	_, ok := r.(syscall.Conn)
	return ok
}

// copyBuffered copies through a pooled buffer, hiding ReaderFrom and
// WriterTo so that io.CopyBuffer really uses it.
func copyBuffered(dst io.Writer, src io.Reader) (int64, error) {
	bp := copyPool.Get().(*[]byte)
	defer copyPool.Put(bp)
	return io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, *bp)
}

// ReadFrom flushes the queue, then copies r to the underlying writer with
// [Copy], so a file goes out with sendfile when the writer is a TCP
// connection. Writes made meanwhile by other goroutines are queued and go out
// after it. An error from the copy is returned but is not sticky: it may be
// r's. If r or the destination panics, the panic goes on up the caller's
// goroutine and the Writer fails from then on, as much of the copy having
// gone out as is unknown.
func (w *Writer) ReadFrom(r io.Reader) (int64, error) {
	w.mu.Lock()
	if err := w.drainLocked(nil, w.stats.Accepted, true); err != nil {
		w.mu.Unlock()
		return 0, err
	}
	if err := w.errLocked(true); err != nil {
		w.mu.Unlock()
		return 0, err
	}
	w.busy = true // keep the flusher out of the way
	w.mu.Unlock()

	returned := false
	defer func() {
		if returned {
			return
		}
		v := recover() // nil: runtime.Goexit, which goes on by itself
		w.mu.Lock()
		w.busy = false
		if w.err == nil {
			w.err = fmt.Errorf("%w: %v", errCopyPanic, v)
		}
		if w.parked { // to see the error and exit
			w.parked = false
			w.kick <- struct{}{}
		}
		w.broadcastLocked()
		w.mu.Unlock()
		if v != nil {
			panic(v)
		}
	}()
	n, err := Copy(w.dst, r)
	returned = true

	w.mu.Lock()
	w.busy = false
	w.stats.Accepted += n
	w.stats.Written += n
	if w.queued > 0 {
		w.kickLocked()
	}
	w.broadcastLocked()
	w.mu.Unlock()
	return n, err
}

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
// then treated as the connection it wraps, copying in steps that Close
// can stop (see [Writer.ReadFrom]). Everything else goes
// through a pooled 64 KiB buffer, allocating nothing per call.
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

// ReadFrom flushes the queue, then copies r to the underlying writer, as
// [Copy] does, so a file goes out with sendfile when the writer is a TCP
// connection. Writes made meanwhile by other goroutines are queued and go
// out after it. An error from the copy is returned but is not sticky: it
// may be r's. If r or the destination panics, the panic goes on up the
// caller's goroutine and the Writer fails from then on, as much of the
// copy having gone out as is unknown.
//
// It copies in steps (a read of r, then a write; or, from a regular file
// to a TCP connection, a sendfile of at most 1 MiB), so that Close can stop
// it between two: it then returns ErrClosed (see [Writer.Close]). On
// Linux, from a TCP or Unix stream socket, a pipe or a file to a TCP or
// Unix stream socket, a step is a splice into a pipe of its own (the
// read, which Close does not wait for), then a splice from that pipe
// (the write); only the types of packages net and os are spliced so,
// not another type that has a descriptor but may read it its own way.
// Its errors are of the kind r's Read and the connection's Write return
// (a *net.OpError, a *fs.PathError for a file), spliced or not.
func (w *Writer) ReadFrom(r io.Reader) (int64, error) {
	w.mu.Lock()
	if err := w.drainLocked(nil, true); err != nil {
		w.mu.Unlock()
		return 0, err
	}
	if err := w.errLocked(true); err != nil {
		w.mu.Unlock()
		return 0, err
	}
	if w.closing {
		w.mu.Unlock()
		return 0, ErrClosed
	}
	w.busy = true // keep the flusher out of the way
	w.copying = true
	w.mu.Unlock()

	returned := false
	defer func() {
		if returned {
			return
		}
		v := recover() // nil: runtime.Goexit, which goes on by itself
		w.mu.Lock()
		w.copyOut = false
		if w.err == nil {
			w.err = fmt.Errorf("%w: %v", errCopyPanic, v)
		}
		if w.copying {
			w.endCopyLocked()
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
	n, err := w.copySteps(r)
	returned = true

	w.mu.Lock()
	if w.copyStop {
		err = ErrClosed
	}
	if w.copying {
		w.endCopyLocked()
	}
	w.mu.Unlock()
	return n, err
}

// zeroCopyStep bounds one sendfile of ReadFrom.
const zeroCopyStep = 1 << 20

// copySteps copies r to w.dst for ReadFrom, checking between steps
// whether Close stopped it.
func (w *Writer) copySteps(r io.Reader) (int64, error) {
	if d, ok := w.dst.(*net.TCPConn); ok && regularFile(r) {
		lr, _ := r.(*io.LimitedReader)
		var total int64
		for {
			step := &io.LimitedReader{R: r, N: zeroCopyStep}
			if lr != nil {
				step.R, step.N = lr.R, min(lr.N, zeroCopyStep)
			}
			if step.N <= 0 || !w.beginCopyWrite() {
				return total, nil
			}
			want := step.N
			n, err := d.ReadFrom(step)
			w.endCopyWrite(n)
			total += n
			if lr != nil {
				lr.N -= n
			}
			if err != nil || n < want {
				return total, err
			}
		}
	}
	if n, ok, err := w.spliceSteps(r); ok {
		return n, err
	}
	bp := copyPool.Get().(*[]byte)
	defer copyPool.Put(bp)
	buf := *bp
	var total int64
	for {
		if w.copyStopped() {
			return total, nil
		}
		nr, rerr := r.Read(buf)
		if nr > 0 {
			if !w.beginCopyWrite() {
				return total, nil
			}
			nw, werr := w.dst.Write(buf[:nr])
			if nw < 0 || nw > nr {
				nw, werr = 0, errInvalidWrite
			}
			w.endCopyWrite(int64(nw))
			total += int64(nw)
			if werr == nil && nw != nr {
				werr = io.ErrShortWrite
			}
			if werr != nil {
				return total, werr
			}
		}
		if rerr == io.EOF {
			return total, nil
		}
		if rerr != nil {
			return total, rerr
		}
	}
}

// errInvalidWrite is io.Copy's error for a write that reports more than
// it was given.
var errInvalidWrite = errors.New("invalid write result")

// copyStopped reports whether Close stopped the ReadFrom in progress.
func (w *Writer) copyStopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.copyStop
}

// beginCopyWrite marks a ReadFrom's write under way, unless Close stopped
// the copy: then it reports false.
func (w *Writer) beginCopyWrite() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.copyStop {
		return false
	}
	w.copyOut = true
	return true
}

// endCopyWrite accounts for a ReadFrom's write of n bytes, and gives the
// stream back if Close stopped the copy meanwhile.
func (w *Writer) endCopyWrite(n int64) {
	w.mu.Lock()
	w.copyOut = false
	w.stats.Accepted += n
	w.stats.Written += n
	w.copied += n
	if w.copyStop && w.copying {
		w.endCopyLocked()
	}
	w.broadcastLocked()
	w.mu.Unlock()
}

// regularFile reports whether r is a regular file, or an
// *io.LimitedReader of one: a source whose reads do not wait.
func regularFile(r io.Reader) bool {
	if lr, ok := r.(*io.LimitedReader); ok {
		r = lr.R
	}
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode().IsRegular()
}

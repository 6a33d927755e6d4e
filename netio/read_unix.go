//go:build unix

package netio

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
)

// rawReader reads a *net.TCPConn's socket itself, so that Conn.Read learns
// that the socket has nothing to read (EAGAIN) and can send the queue before
// the runtime's poller waits. The state of the read in progress lives here,
// and step is made once, so that a Read allocates nothing.
type rawReader struct {
	ok   bool
	c    *Conn
	rc   syscall.RawConn
	step func(fd uintptr) bool

	mu      sync.Mutex // one read at a time uses the fields below
	p       []byte     // the caller's buffer, or nil for a pooled one
	buf     *[]byte    // the pooled buffer read into
	n       int
	err     error
	flushed bool
	first   bool // flush before reading
	needBuf bool // p is nil and the pool was empty
}

func (r *rawReader) init(c *Conn) {
	// Only a *net.TCPConn: a type that embeds one may have its own Read,
	// and other sockets may be datagram ones, where 0 bytes is not EOF.
	tc, ok := c.Conn.(*net.TCPConn)
	if !ok {
		return
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return
	}
	r.ok, r.c, r.rc = true, c, rc
	r.step = r.readStep()
}

// readStep returns one attempt of RawConn.Read: false means "wait until
// readable", after sending the queue the first time the socket is empty.
// (A closure rather than a method value, which would add a frame to the
// goroutine's deepest call chain.)
func (r *rawReader) readStep() func(fd uintptr) bool {
	return func(fd uintptr) bool {
		if r.first {
			// The last read drained the socket: answer what it brought
			// before reading what came since, as an event loop does.
			r.first = false
			r.flush(fd)
		}
		p := r.p
		if p == nil {
			if r.buf == nil {
				b, _ := readPool.Get().(*[]byte)
				if b == nil {
					// Allocate up in read, not down here at the bottom
					// of the goroutine's deepest call chain.
					r.needBuf = true
					return true
				}
				r.buf = b
			}
			p = (*r.buf)[:cap(*r.buf)]
		}
		for {
			n, err := syscall.Read(int(fd), p)
			switch err {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				if r.buf != nil { // an idle connection holds no buffer
					readPool.Put(r.buf)
					r.buf = nil
				}
				// Here, not after RawConn.Read returns: the poller
				// remembers readiness since this Read began, so data that
				// comes during the flush ends the wait at once, and a
				// read started anew would have to try the socket again.
				r.flush(fd)
				return false
			}
			r.n, r.err = max(n, 0), err
			return true
		}
	}
}

// flush sends the queue, once per read.
func (r *rawReader) flush(fd uintptr) {
	if r.flushed {
		return
	}
	r.flushed = true
	if haveRawWrite {
		r.flushFD(fd)
	} else {
		r.c.w.flushForRead()
	}
}

// read reads into p, or into a pooled chunk if p is nil. With flush, it
// sends the queue when the socket is empty, or before reading if first.
func (r *rawReader) read(p []byte, flush, first bool) (int, *[]byte, error) {
	r.mu.Lock()
	r.p, r.buf, r.n, r.err, r.flushed, r.first = p, nil, 0, nil, !flush, flush && first
	err := r.rc.Read(r.step)
	for err == nil && r.needBuf { // the pool was empty
		r.needBuf = false
		b := make([]byte, 0, chunkSize)
		r.buf = &b
		err = r.rc.Read(r.step)
	}
	n, buf, rerr := r.n, r.buf, r.err
	r.p, r.buf, r.err = nil, nil, nil
	r.mu.Unlock()
	if err == nil && rerr == nil && n > 0 {
		return n, buf, nil
	}
	if buf != nil {
		putRead(buf)
	}
	return 0, nil, r.readError(err, rerr)
}

// flushFD sends the queue before a Read waits, in the calling goroutine,
// with non-blocking writes on the socket fd (the read callback's
// descriptor); what the socket cannot take now is left to the flusher. A
// write error is left for the next Write to return. It runs at the bottom
// of the connection goroutine's deepest call chain, so it is one lean frame
// above a bare system call: one more would double every connection's
// stack (2 KiB to 4 KiB), which bench net's RSS shows at 10,000
// connections.
func (r *rawReader) flushFD(fd uintptr) {
	w := r.c.w
	w.mu.Lock()
	w.unholdLocked()
	for w.queued > 0 && !w.busy && w.err == nil {
		size := w.beginBatchLocked()
		n, errno := rawWrite(fd, w.iov)
		var err error
		if errno != 0 {
			err = w.writeError(errno)
		}
		w.endBatch(int64(n), err)
		if n != size {
			break
		}
	}
	if w.queued > 0 && !w.busy && w.err == nil {
		w.wakeFlusherLocked()
	}
	w.mu.Unlock()
}

// opError wraps a system call's error as the net package does. It is kept
// out of line: the read and write paths run on the stack of a connection's
// goroutine, which should stay at its smallest size.
//
//go:noinline
func (r *rawReader) opError(op string, err error) error {
	c := r.c.Conn
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError(op, err)}
}

// readError is what read returns when it read nothing.
//
//go:noinline
func (r *rawReader) readError(err, rerr error) error {
	if err != nil { // closed, deadline: as (*net.TCPConn).Read reports them
		if oe, ok := err.(*net.OpError); ok { // RawConn.Read's, made for us
			oe.Op = "read"
		}
		return err
	}
	if rerr != nil {
		return r.opError("read", rerr)
	}
	return io.EOF
}

//go:build unix

package netio

import (
	"errors"
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
	p       []byte
	n       int
	err     error
	flushed bool
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
	r.step = r.readStep
}

// readStep is one attempt of RawConn.Read: false means "wait until
// readable", after sending the queue the first time the socket is empty.
func (r *rawReader) readStep(fd uintptr) bool {
	for {
		n, err := syscall.Read(int(fd), r.p)
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			if !r.flushed {
				r.flushed = true
				r.c.w.flushForRead()
			}
			// The poller remembers readiness since this Read began, so
			// data that came during the flush ends the wait at once.
			return false
		}
		r.n, r.err = max(n, 0), err
		return true
	}
}

func (r *rawReader) read(p []byte) (int, error) {
	r.mu.Lock()
	r.p, r.n, r.err, r.flushed = p, 0, nil, false
	err := r.rc.Read(r.step)
	n, rerr := r.n, r.err
	r.p, r.err = nil, nil
	r.mu.Unlock()
	if err != nil { // closed, deadline: as (*net.TCPConn).Read reports them
		var oe *net.OpError
		if errors.As(err, &oe) {
			oe.Op = "read"
		}
		return 0, err
	}
	if rerr != nil {
		c := r.c.Conn
		return n, &net.OpError{Op: "read", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", rerr)}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

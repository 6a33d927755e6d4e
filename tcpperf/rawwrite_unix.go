//go:build unix

package tcpperf

import (
	"net"
	"syscall"
)

// A rawWriter makes one non-blocking write attempt on a socket.
type rawWriter interface {
	tryWrite(b []byte) (int, error)
}

type unixRawWriter struct{ rc syscall.RawConn }

// newRawWriter returns a rawWriter for nc, or nil if nc has no file
// descriptor (every write then goes through a flush goroutine).
func newRawWriter(nc net.Conn) rawWriter {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return unixRawWriter{rc}
}

// tryWrite writes what the socket buffer takes of b now, without waiting
// for room: 0 and nil when it is full.
func (w unixRawWriter) tryWrite(b []byte) (int, error) {
	var n int
	var werr error
	err := w.rc.Write(func(fd uintptr) bool {
		n, werr = syscall.Write(int(fd), b)
		return true // never wait for writability
	})
	if n < 0 {
		n = 0
	}
	if werr == syscall.EAGAIN || werr == syscall.EINTR {
		werr = nil
	}
	if err != nil {
		return n, err
	}
	return n, werr
}

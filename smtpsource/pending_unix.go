//go:build unix

package smtpsource

import (
	"net"
	"syscall"
)

// pending reports whether bytes have come on the socket c that were not
// read yet, without reading them or waiting (a peek); known is false if
// c is no socket it can look at.
func pending(c net.Conn) (came, known bool) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false, false
	}
	var n int
	var rerr error
	var b [1]byte
	// Control, not Read: Read fails at once past the deadline, which a
	// write that timed out has passed. Go's sockets do not block.
	if err := rc.Control(func(fd uintptr) {
		n, _, rerr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
	}); err != nil {
		return false, false
	}
	switch {
	case n > 0:
		return true, true
	case rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK:
		return false, true // nothing came
	}
	// The end of the stream (n 0), or an error (a reset, or no socket
	// after all): whether a reply came before it is for a read to say.
	return false, false
}

//go:build netio_portable

package netio

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// unacked is how many bytes nc's socket holds that its peer has not
// acknowledged (SIOCOUTQ, the FIN counting as one), or -1. If input
// waits in the socket (SIOCINQ), it is at least 2: a socket closed with
// input unread resets the connection, and the peer may lose output it
// has not read.
func unacked(nc net.Conn) int {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	n, in, qerr, ierr := -1, 0, error(nil), error(nil)
	err = rc.Control(func(fd uintptr) {
		n, qerr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
		in, ierr = unix.IoctlGetInt(int(fd), unix.SIOCINQ)
	})
	if err != nil || qerr != nil {
		return -1
	}
	if ierr != nil || in > 0 {
		n = max(n, 2)
	}
	return n
}

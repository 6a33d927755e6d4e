//go:build netio_portable

package netio

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// unacked is how many bytes nc's socket holds that its peer has not
// acknowledged (SIOCOUTQ, the FIN counting as one), or -1.
func unacked(nc net.Conn) int {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	n, qerr := -1, error(nil)
	if err := rc.Control(func(fd uintptr) { n, qerr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) }); err != nil || qerr != nil {
		return -1
	}
	return n
}

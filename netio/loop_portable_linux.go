//go:build netio_portable

package netio

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// lingered throws away the input waiting in nc's socket (up to 1 MiB, the
// rest waits for the next look, as on epoll) and reports whether a linger
// on nc is over: the peer ended its stream (or reset it), or the read
// emptied the socket and the peer has acknowledged all of the output
// (SIOCOUTQ, the FIN counting as one until acknowledged). Input that
// waits in a socket closed resets the connection, and the peer may lose
// output it has not read; so input is read first, and a socket not
// emptied is not done. known is false where the system cannot tell
// (nc has no descriptor). buf is scratch space for the reads. The
// reading goroutine may be reading nc too: all of its input is thrown
// away, whoever reads it.
func lingered(nc net.Conn, buf []byte) (done, known bool) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false, false
	}
	err = rc.Control(func(fd uintptr) {
		known = true
		for n := 0; n < 1<<20; {
			k, err := unix.Read(int(fd), buf)
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				q, err := unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
				done = err == nil && q <= 1
				return
			case err != nil || k == 0:
				done = true // ended, or reset: the peer chose to end
				return
			}
			n += k
		}
	})
	if err != nil {
		return false, false
	}
	return done, known
}

//go:build (!linux || netio_portable) && !plan9

package netio

import (
	"net"
	"os"
	"syscall"
)

// sysErr is err, a read's or a write's error, as the epoll loops have
// it: the system's error number alone (syscall.ECONNRESET, whose text is
// "connection reset by peer"), not wrapped in the *net.OpError and
// *os.SyscallError of net.Conn's Read and Write or of descWrite, so that
// OnClose learns the same error, text and all, on either implementation.
// An error with no number (Plan 9's strings, a poller's) is left as it is.
func sysErr(err error) error {
	e := err
	if op, ok := e.(*net.OpError); ok {
		e = op.Err
	}
	if se, ok := e.(*os.SyscallError); ok {
		if errno, ok := se.Err.(syscall.Errno); ok {
			return errno
		}
	}
	return err
}

//go:build unix

package smtpsource

import "syscall"

// windowControl returns a net.Dialer Control function that sets a
// socket's receive and send buffers to size bytes before it connects, so
// that the window scale negotiated fits them.
func windowControl(size int) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			if serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, size); serr == nil {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, size)
			}
		})
		if err != nil {
			return err
		}
		return serr
	}
}

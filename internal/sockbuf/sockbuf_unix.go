//go:build unix

// Package sockbuf sets a socket's buffers before it connects or listens,
// as Postfix's smtp-source and smtp-sink -T do.
package sockbuf

import (
	"math"
	"syscall"
)

// MaxSize is the largest size a socket option takes (a C int): larger
// sizes wrap around when set.
const MaxSize = math.MaxInt32

// Control returns a net.Dialer or net.ListenConfig Control function that
// sets a socket's receive and send buffers (SO_RCVBUF, SO_SNDBUF) to size
// bytes before it connects or listens, so that the window scale
// negotiated fits them; a listener's connections take them on.
func Control(size int) func(network, address string, c syscall.RawConn) error {
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

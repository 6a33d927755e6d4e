//go:build !unix

// Package sockbuf sets a socket's buffers before it connects or listens,
// as Postfix's smtp-source and smtp-sink -T do.
package sockbuf

import (
	"errors"
	"math"
	"syscall"
)

// MaxSize is the largest size a socket option takes.
const MaxSize = math.MaxInt32

// Control returns a Control function that fails: setting the socket
// buffers is done on Unix systems only.
func Control(size int) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		return errors.New("setting the socket buffers is supported on Unix systems only")
	}
}

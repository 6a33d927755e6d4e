//go:build !unix

package smtpsource

import (
	"errors"
	"syscall"
)

// windowControl fails every dial: setting the socket buffers is done on
// Unix systems only.
func windowControl(size int) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		return errors.New("smtpsource: WindowSize is supported on Unix systems only")
	}
}

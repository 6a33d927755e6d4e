//go:build !windows && !plan9

package smtpsource

import (
	"errors"
	"syscall"
)

// isReset reports whether err is how a connection the peer has reset or
// closed fails a read or a write.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

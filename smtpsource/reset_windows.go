package smtpsource

import (
	"errors"
	"syscall"
)

// isReset reports whether err is how a connection the peer has reset or
// closed fails a read or a write: Windows reports Winsock's errors, not
// ECONNRESET or EPIPE.
func isReset(err error) bool {
	return errors.Is(err, syscall.WSAECONNRESET) || errors.Is(err, syscall.WSAECONNABORTED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

//go:build !plan9

package netio

import (
	"errors"
	"syscall"
)

// peerErr reports whether err says the peer reset the connection or went
// away.
func peerErr(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ETIMEDOUT)
}

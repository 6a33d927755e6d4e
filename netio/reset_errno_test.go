//go:build !plan9

package netio

import (
	"errors"
	"syscall"
)

// isResetWrite reports whether err is how a write on a connection the peer
// reset fails: ECONNRESET or EPIPE.
func isResetWrite(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

//go:build !plan9

package servetest

import (
	"errors"
	"syscall"
)

// isReset reports whether err says the peer reset the connection.
func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

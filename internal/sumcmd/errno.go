//go:build !plan9

package sumcmd

import (
	"errors"
	"syscall"
)

// isBadFD reports whether err is EBADF.
func isBadFD(err error) bool { return errors.Is(err, syscall.EBADF) }

// sysErrText returns the system's text for the error number in err, if
// there is one.
func sysErrText(err error) (string, bool) {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error(), true
	}
	return "", false
}

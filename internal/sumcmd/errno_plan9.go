package sumcmd

import (
	"errors"
	"syscall"
)

// isBadFD reports whether err is a bad descriptor's: Plan 9 has no EBADF.
func isBadFD(err error) bool { return false }

// sysErrText returns the system's error string in err, if there is one.
func sysErrText(err error) (string, bool) {
	var es syscall.ErrorString
	if errors.As(err, &es) {
		return string(es), true
	}
	return "", false
}

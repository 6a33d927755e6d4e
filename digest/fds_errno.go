//go:build !plan9

package digest

import (
	"errors"
	"syscall"
)

// outOfDescriptors reports an open that failed for want of a file
// descriptor, of the process (EMFILE) or of the system (ENFILE).
func outOfDescriptors(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

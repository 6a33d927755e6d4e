package digest

import (
	"errors"
	"syscall"
)

// outOfDescriptors reports an open that failed for want of a file
// descriptor. Plan 9 has no system-wide table and so no ENFILE; its
// per-process error is syscall.EMFILE ("no free file descriptors").
func outOfDescriptors(err error) bool {
	return errors.Is(err, syscall.EMFILE)
}

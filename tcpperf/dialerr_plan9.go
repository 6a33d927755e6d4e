package tcpperf

import (
	"errors"
	"syscall"
)

// fdLimit reports whether err is a dial's failure for want of file
// descriptors.
func fdLimit(err error) bool { return errors.Is(err, syscall.EMFILE) }

// outOfPorts reports whether err is a dial's failure for want of an
// ephemeral port: Plan 9 has no error of its own for it.
func outOfPorts(err error) bool { return false }

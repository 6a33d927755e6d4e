//go:build !plan9

package tcpperf

import (
	"errors"
	"syscall"
)

// fdLimit reports whether err is a dial's failure for want of file
// descriptors, the process's or the system's.
func fdLimit(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// outOfPorts reports whether err is a dial's failure for want of an
// ephemeral port.
func outOfPorts(err error) bool { return errors.Is(err, syscall.EADDRNOTAVAIL) }

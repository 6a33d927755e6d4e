//go:build unix

package tcpperf

import (
	"fmt"
	"syscall"
)

// ensureFDs raises the soft RLIMIT_NOFILE to at least need, within the hard
// limit, or explains why it cannot.
func ensureFDs(need uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // cannot tell; let connect report failures
	}
	if lim.Cur >= need {
		return nil
	}
	if lim.Max < need {
		return fmt.Errorf("%w: need %d file descriptors, the hard limit is %d (raise it, e.g. ulimit -Hn %d as root, or use fewer -conns)", ErrFDLimit, need, lim.Max, need)
	}
	lim.Cur = need
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("%w: need %d file descriptors, cannot raise the soft limit: %v", ErrFDLimit, need, err)
	}
	return nil
}

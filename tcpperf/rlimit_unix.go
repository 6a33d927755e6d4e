//go:build unix

package tcpperf

import "syscall"

// ensureFDs checks that the soft RLIMIT_NOFILE leaves need file
// descriptors; see checkFDLimit.
func ensureFDs(need uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // cannot tell; let connect report failures
	}
	return checkFDLimit(need, uint64(lim.Cur), uint64(lim.Max))
}

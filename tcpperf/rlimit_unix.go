//go:build unix

package tcpperf

import (
	"os"
	"syscall"
)

// ensureFDs checks that the soft RLIMIT_NOFILE leaves need file
// descriptors; see checkFDLimit.
func ensureFDs(need uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // cannot tell; let connect report failures
	}
	return checkFDLimit(need, uint64(lim.Cur), uint64(lim.Max))
}

// ensurePorts checks the ephemeral port range, where the system has one
// in portRangeFile; see checkPorts.
func ensurePorts(conns int) error {
	b, err := os.ReadFile(portRangeFile)
	if err != nil {
		return nil // not Linux, or cannot tell: let connect report failures
	}
	lo, hi, err := parsePortRange(string(b))
	if err != nil {
		return nil
	}
	return checkPorts(conns, lo, hi)
}

//go:build unix

package textproto_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used so far. On a
// shared machine it varies much less than wall time, which includes the
// time spent waiting for a CPU.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

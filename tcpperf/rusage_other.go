//go:build !unix && !windows

package tcpperf

import "time"

// processCPU returns 0: the process's CPU time is not known here.
func processCPU() time.Duration { return 0 }

package tcpperf

import (
	"time"

	"golang.org/x/sys/windows"
)

// processCPU returns the user and kernel CPU time of the process so far.
func processCPU() time.Duration {
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user) != nil {
		return 0
	}
	// A Filetime here is a span in units of 100 ns.
	span := func(ft windows.Filetime) time.Duration {
		return time.Duration(int64(ft.HighDateTime)<<32|int64(ft.LowDateTime)) * 100
	}
	return span(kernel) + span(user)
}

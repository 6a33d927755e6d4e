package tcpperf

import "github.com/wirespeed/wirespeed/internal/sleep/sleeptest"

// fakeClock is the shared fake clock: it moves only when a waiter waits or
// a test advances it.
type fakeClock = sleeptest.Clock

func newFakeClock() *fakeClock { return sleeptest.NewClock() }

package tcpperf

import "github.com/wirespeed/wirespeed/internal/sleep/sleeptest"

// fakeClock is the shared fake clock: it moves only when a waiter waits or
// a test advances it.
//
// Against a server that does not move it (a plain echo server), the
// latencies a run measures on it are not the server's: an open-loop
// loop polls its sockets without waiting and jumps the clock to its next
// send, so the schedule goes out in far less real time than a loopback
// round trip, and a response is timed at whichever send the loop had
// jumped to when it came, often the last (1 connection at 100 msg/s for
// 200ms read p50 90ms and max 190ms, 87µs on the system clock). Tests on
// it assert counts, and latencies only where the server moves the clock
// (clockedLines) or as bounds that hold whatever the real timing (a
// latency is at least 1ns and at least its send's lateness).
type fakeClock = sleeptest.Clock

func newFakeClock() *fakeClock { return sleeptest.NewClock() }

package tcpperf

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// sleepUntil sleeps until CLOCK_MONOTONIC reads mono (ns), or a signal
// comes, as a raw system call: one the Go scheduler is not told of. A
// blocking call (unix.ClockNanosleep) lets the scheduler take the loop's
// processor while it sleeps, and the loop wakes the runtime's monitor
// thread each time it gets one back: at 30k msg/s over 10,000 connections,
// batched every 400µs, that thread took 13% of the tool's CPU, and the
// raw call cut the tool's CPU per message by a median 0.84x over five
// alternating pairs of runs (AMD EPYC; see the commit). The loop is locked
// to its thread and nothing else waits for its processor (GOMAXPROCS is
// above the loops); a signal, such as the runtime's preemption for a
// garbage collection, ends the sleep early, which a batching loop allows.
//
// unsafe: the timespec's address is passed to the kernel, which only
// reads it during the call; ts stays alive across it on this frame.
//
// It reports whether a signal ended the sleep (EINTR).
func sleepUntil(mono int64) (interrupted bool) {
	ts := unix.NsecToTimespec(mono)
	_, _, errno := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	return errno == unix.EINTR
}

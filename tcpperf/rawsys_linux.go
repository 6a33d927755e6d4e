package tcpperf

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loops' non-blocking system calls (read, write and a poll of epoll
// that does not wait) are made as raw system calls, without telling the
// Go scheduler. Through unix.Read and unix.Write, the runtime's sysmon
// takes the processor away from a loop whose write outlasts its 20µs tick
// (a loopback write runs the receiver's TCP input too) and hands it to
// another thread, and the loop then waits to get it back: with 10,000
// connections on one core that cost a third of the throughput and
// millisecond stalls (see the README's tcpperf section for the
// measurement). None of these calls can block: every descriptor is
// non-blocking and the poll's timeout is 0. Waiting in epoll goes through
// unix.EpollWait, which does tell the scheduler.

func rawRead(fd int, b []byte) (int, unix.Errno) {
	if len(b) == 0 {
		return 0, 0
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), 0
}

func rawWrite(fd int, b []byte) (int, unix.Errno) {
	if len(b) == 0 {
		return 0, 0
	}
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), 0
}

// rawPoll returns the ready events of epoll ep without waiting.
func rawPoll(ep int, events []unix.EpollEvent) (int, unix.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), 0
}

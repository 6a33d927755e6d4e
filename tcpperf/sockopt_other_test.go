//go:build !unix && !windows

package tcpperf

// No socket options here (js, wasip1, Plan 9): setSockOpt does nothing,
// and the tests that shrink socket buffers have the system's.
const soSndbuf, soRcvbuf = 0, 0

// setSockOpt does nothing.
func setSockOpt(fd uintptr, opt, v int) {}

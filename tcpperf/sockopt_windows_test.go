package tcpperf

import "syscall"

// The socket options the tests set.
const soSndbuf, soRcvbuf = syscall.SO_SNDBUF, syscall.SO_RCVBUF

// setSockOpt sets the socket-level option opt of the socket fd to v.
func setSockOpt(fd uintptr, opt, v int) {
	syscall.SetsockoptInt(syscall.Handle(fd), syscall.SOL_SOCKET, opt, v)
}

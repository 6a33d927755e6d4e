//go:build !(js || wasip1 || plan9)

package netio

import "syscall"

// The levels and names of the socket options GetSockOpts reads.
const (
	solSocket  = syscall.SOL_SOCKET
	soSndbuf   = syscall.SO_SNDBUF
	soRcvbuf   = syscall.SO_RCVBUF
	ipprotoTCP = syscall.IPPROTO_TCP
	tcpNodelay = syscall.TCP_NODELAY
)

//go:build !unix

package tcpperf

import "net"

// A rawWriter makes one non-blocking write attempt on a socket.
type rawWriter interface {
	tryWrite(b []byte) (int, error)
}

// newRawWriter returns nil: without a non-blocking write, every send goes
// through a flush goroutine.
func newRawWriter(net.Conn) rawWriter { return nil }

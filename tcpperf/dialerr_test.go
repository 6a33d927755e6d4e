//go:build !plan9

package tcpperf

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
)

// errRefused is a dial's error on a port no one listens on.
var errRefused error = syscall.ECONNREFUSED

// A dial failing with EADDRNOTAVAIL is out of ephemeral ports: ErrPorts,
// as CheckPorts's failure (TestPorts). Plan 9 has no such error.
func TestPortsDial(t *testing.T) {
	_, err := RunWith(context.Background(), Config{Addr: "x", Conns: 2}, func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.EADDRNOTAVAIL}
	}, nil)
	if !errors.Is(err, ErrPorts) || !errors.Is(err, syscall.EADDRNOTAVAIL) {
		t.Errorf("dial out of ports: %v, want ErrPorts wrapping EADDRNOTAVAIL", err)
	}
}

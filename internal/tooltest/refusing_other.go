//go:build !unix

package tooltest

import (
	"net"
	"testing"
)

// RefusingAddr returns "127.0.0.1:port" where a TCP connection is
// expected to be refused. Here (not Unix) it is the address of a listener
// closed just before it returns, which is racy: another listener, or an
// outgoing connection of this or another test, may take the port before
// the test connects to it, and the connect then succeeds or hangs. On
// Unix the address is a socket bound and not listening, held until the
// test ends, which refuses for certain.
func RefusingAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("RefusingAddr: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

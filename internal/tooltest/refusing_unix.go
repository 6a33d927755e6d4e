//go:build unix

package tooltest

import (
	"net"
	"strconv"
	"syscall"
	"testing"
)

// RefusingAddr returns "127.0.0.1:port" of a TCP socket that is bound but
// does not listen, open until the test ends: a connection to it is
// refused (RST, ECONNREFUSED) at once, and no listener can bind its
// port meanwhile (nor does Linux give it to an outgoing connection as
// its local port). A listener closed before use was no such address:
// its port was free again, and another test's listener or connection,
// in this package or one running beside it, could take it, so that the
// connect succeeded or hung.
func RefusingAddr(t testing.TB) string {
	t.Helper()
	// Close-on-exec under ForkLock, as package net opens its sockets, so
	// that a program a test starts does not inherit it and hold the port
	// after the test.
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatalf("RefusingAddr: socket: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("RefusingAddr: bind 127.0.0.1:0: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("RefusingAddr: getsockname: %v", err)
	}
	sa4, ok := sa.(*syscall.SockaddrInet4)
	if !ok || sa4.Port == 0 {
		t.Fatalf("RefusingAddr: bound to %#v, want a port of 127.0.0.1", sa)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa4.Port))
}

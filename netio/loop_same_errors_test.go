//go:build unix

package netio

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
)

// TestLoopsResetError: OnClose learns a peer's reset as the system's
// error number alone, ECONNRESET, text and all, on the epoll loops and the
// portable ones alike (whose net.Conn wrapped it in a *net.OpError with
// the addresses: another text for the same reset).
func TestLoopsResetError(t *testing.T) {
	closed := make(chan error, 1)
	s := startLoops(t, func(c *LoopConn, in []byte) int { return len(in) },
		&LoopOptions{Loops: 1, OnClose: func(c *LoopConn, err error) { closed <- err }})
	cc := dial(t, s)
	if _, err := cc.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	s.Sync()
	cc.SetLinger(0)
	cc.Close() // RST
	err := <-closed
	if !errors.Is(err, syscall.ECONNRESET) || err.Error() != syscall.ECONNRESET.Error() {
		t.Fatalf("OnClose learned %q, want %q", err, syscall.ECONNRESET)
	}
}

// TestLoopsDialMissingAddress: Dial of an empty address fails as package
// net's Dial does ("dial tcp: missing address"), on either implementation
// (the epoll loops said "missing port in address" for TCP, and tried
// connect(2) for a Unix socket: "connect: invalid argument").
func TestLoopsDialMissingAddress(t *testing.T) {
	s := startLoops(t, func(c *LoopConn, in []byte) int { return len(in) }, &LoopOptions{Loops: 1})
	ctx := context.Background()
	for _, network := range []string{"tcp", "tcp4", "tcp6", "unix"} {
		var d net.Dialer
		_, want := d.DialContext(ctx, network, "")
		c, err := s.Dial(ctx, network, "")
		if c != nil {
			t.Errorf("Dial(%q, \"\") made a connection", network)
		}
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "dial" || want == nil || err.Error() != want.Error() {
			t.Errorf("Dial(%q, \"\"): %v, want %v (as package net's Dial)", network, err, want)
		}
	}
	if st := s.Stats(); st.DialErrors != 4 {
		t.Errorf("%d dial errors counted, want 4", st.DialErrors)
	}
}

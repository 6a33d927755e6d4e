//go:build !netio_portable

package netio

import (
	"context"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"
)

// TestLoopsDialNextAddress: of a name's addresses, the first gets a
// share of DialTimeout (half of it, of two addresses), not all of it, as
// package net's Dial gives it; once that share has passed on the loop's
// clock, its connect gives way to the next address's, which connects.
// The first address's listener drops the SYNs (fullListener); the
// resolver is the test's.
func TestLoopsDialNextAddress(t *testing.T) {
	sockaddr := func(addr string) syscall.Sockaddr {
		ap := netip.MustParseAddrPort(addr)
		return &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	full := fullListener(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	echoPeer(t, ln)
	clk := newFakeClock()
	waiting := make(chan struct{}, 2)
	opt := &LoopOptions{Loops: 1, DialTimeout: 10 * time.Second}
	SetLoopClock(opt, clk.Now)
	SetDialingHook(opt, func() { waiting <- struct{}{} })
	s, err := NewLoops(echo, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetResolveHook(func(network, address string) ([]syscall.Sockaddr, error) {
		return []syscall.Sockaddr{sockaddr(full), sockaddr(ln.Addr().String())}, nil
	})
	type result struct {
		c   *LoopConn
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := s.Dial(context.Background(), "tcp", "peer.test:1")
		done <- result{c, err}
	}()
	<-waiting
	if got := s.DialTimeouts(); len(got) != 1 || got[0] != 5*time.Second {
		t.Fatalf("the first address's connect has %v left, want 5s: its share of the 10s DialTimeout, of two addresses", got)
	}
	clk.advance(s, 5*time.Second)
	r := <-done
	if r.err != nil {
		t.Fatalf("Dial: %v, want the second address connected", r.err)
	}
	if r.c.RemoteAddr().String() != ln.Addr().String() {
		t.Fatalf("RemoteAddr %v, want the second address, %v", r.c.RemoteAddr(), ln.Addr())
	}
	if st := s.Stats(); st.Dialed != 1 || st.DialErrors != 0 {
		t.Fatalf("Stats %+v, want one dialed connection and no dial error", st)
	}
}

// TestDialShare: an address's share of the time left is an equal one
// with those after it, but at least 2 s (all that is left, if less), as
// package net's Dial gives it; none when no time is left.
func TestDialShare(t *testing.T) {
	for _, tc := range []struct {
		left  time.Duration
		n     int
		share time.Duration
		ok    bool
	}{
		{10 * time.Second, 2, 5 * time.Second, true},
		{30 * time.Second, 3, 10 * time.Second, true},
		{10 * time.Second, 1, 10 * time.Second, true},
		{3 * time.Second, 3, 2 * time.Second, true},
		{time.Second, 3, time.Second, true},
		{0, 2, 0, false},
		{-time.Second, 1, 0, false},
	} {
		if share, ok := dialShare(tc.left, tc.n); share != tc.share || ok != tc.ok {
			t.Errorf("dialShare(%v, %d) = %v, %v; want %v, %v", tc.left, tc.n, share, ok, tc.share, tc.ok)
		}
	}
}

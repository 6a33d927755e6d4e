//go:build unix

package netio

import (
	"context"
	"errors"
	"io"
	"syscall"
	"testing"
	"time"
)

// TestLoopsPausedReset: a connection paused with SetReading(false) whose
// peer resets it is closed at once, OnClose learning the reset
// (ECONNRESET), without reading resuming; and a Shutdown that leaves it
// to its Handler (OnShutdown) returns.
func TestLoopsPausedReset(t *testing.T) {
	paused := make(chan struct{})
	draining := make(chan struct{})
	closed := make(chan error, 1)
	s := startLoops(t, func(c *LoopConn, in []byte) int {
		c.SetReading(false) // never resumed
		close(paused)
		return 0 // keeps "hello": unread input does not hold the reset back
	}, &LoopOptions{
		Loops:      1,
		OnClose:    func(c *LoopConn, err error) { closed <- err },
		OnShutdown: func(*LoopConn) { close(draining) }, // the connection stays open
	})
	cc := dial(t, s)
	if _, err := cc.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	<-paused
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	<-draining
	cc.SetLinger(0)
	cc.Close() // RST
	var err error
	select {
	case err = <-closed:
	case <-time.After(time.Minute):
		t.Fatal("a paused connection the peer reset is not closed after a minute")
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("OnClose learned %v, want ECONNRESET", err)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if st := s.Stats(); st.Open != 0 || st.Closed.Peer != 1 {
		t.Errorf("stats %+v, want none open and one closed by its peer", st)
	}
}

// TestLoopsPausedDetach: a paused connection (watched for a reset on the
// portable loops) detaches with its unused input, and its peer's next
// bytes and end of stream follow.
func TestLoopsPausedDetach(t *testing.T) {
	paused := make(chan *LoopConn, 1)
	s := startLoops(t, func(c *LoopConn, in []byte) int {
		c.SetReading(false)
		paused <- c
		return 0
	}, &LoopOptions{Loops: 1})
	cc := dial(t, s)
	cc.Write([]byte("one "))
	lc := <-paused
	s.Sync()
	got := make(chan []byte, 1)
	errs := make(chan error, 1)
	lc.Do(func(c *LoopConn) {
		nc, err := c.Detach()
		if err != nil {
			errs <- err
			return
		}
		go func() {
			defer nc.Close()
			b, err := io.ReadAll(nc)
			errs <- err
			got <- b
		}()
	})
	cc.Write([]byte("two"))
	cc.CloseWrite()
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "one two" {
		t.Fatalf("detached, read %q, want %q", b, "one two")
	}
}

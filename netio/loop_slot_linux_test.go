//go:build !netio_portable

package netio

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLoopsStaleEventNewSlot: a connection released by a task (here a
// Do whose function panics) while an event for it waits in the same
// epoll batch (its peer's reset, while its output waited for room) does
// not give that event to a connection that took its slot meanwhile (a
// Dial's, started by the next task): a dial whose connect(2) has not
// completed is not taken for connected.
func TestLoopsStaleEventNewSlot(t *testing.T) {
	addr := fullListener(t) // a dial to it never completes
	opened := make(chan *LoopConn, 2)
	blocked, hold := make(chan struct{}), make(chan struct{})
	h := func(c *LoopConn, in []byte) int {
		switch {
		case bytes.Equal(in, []byte("fill")):
			for {
				if _, err := c.Write(make([]byte, 64<<10)); err != nil {
					break // ErrQueueFull: the peer reads nothing
				}
			}
		case bytes.Equal(in, []byte("hold")):
			blocked <- struct{}{}
			<-hold // the loop waits: what follows is in its next epoll batch
		}
		return len(in)
	}
	s := startLoops(t, h, &LoopOptions{Loops: 1, MaxQueued: 8 << 20, OnOpen: func(c *LoopConn) { opened <- c }})
	x := dialSmallWindow(t, s)
	lx := <-opened
	z := dial(t, s)
	<-opened
	x.Write([]byte("fill"))
	for s.Stats().Queued == 0 { // x waits for room: polled for EPOLLOUT
		s.Sync()
	}
	z.Write([]byte("hold"))
	<-blocked
	var release sync.Once
	unhold := func() { release.Do(func() { close(hold) }) }
	defer unhold() // before the server's Close, if the test fails first
	// First task: x is closed at once, its slot freed.
	if err := lx.Do(func(*LoopConn) { panic("closes x") }); err != nil {
		t.Fatal(err)
	}
	// Second task: a dial, which takes the free slot.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dialed := make(chan error, 1)
	go func() {
		c, err := s.Dial(ctx, "tcp", addr)
		if c != nil {
			err = errors.New("Dial returned a connection")
		}
		dialed <- err
	}()
	for s.QueuedTasks() < 2 {
		runtime.Gosched()
	}
	// Then x's event: the reset wakes its pollers with EPOLLOUT.
	x.SetLinger(0)
	x.Close()
	for TCPState(lx) != unix.BPF_TCP_CLOSE {
		runtime.Gosched()
	}
	unhold()
	s.Sync() // the loop has handled that batch
	select {
	case err := <-dialed:
		t.Fatalf("the dial to a full listener ended (%v) before it was cancelled: x's event went to it", err)
	default:
	}
	cancel()
	if err := <-dialed; !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial: %v, want context.Canceled", err)
	}
}

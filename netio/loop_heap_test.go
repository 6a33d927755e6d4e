//go:build unix

package netio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestLoopsWriteTimeoutAfterDeadline: a deadline that passes while the
// output waits for room, with OnTimeout's farewell queued behind it or
// with an OnTimeout that writes nothing, does not take the write timeout
// away: a peer that never reads is still ended. (The portable loops took
// a silent one's connection out of their heap at the deadline and put it
// back only for output, so that it waited forever.)
func TestLoopsWriteTimeoutAfterDeadline(t *testing.T) {
	for _, farewell := range []string{"421 timeout\r\n", ""} {
		t.Run(fmt.Sprintf("farewell=%q", farewell), func(t *testing.T) {
			clk := newFakeClock()
			closed := make(chan error, 1)
			timedOut := make(chan error, 1)
			waiting := make(chan struct{})
			var once sync.Once
			opt := &LoopOptions{Loops: 1, IdleTimeout: time.Hour, WriteTimeout: time.Minute,
				OnOpen: func(c *LoopConn) {
					c.Write(bytes.Repeat([]byte("w"), 1<<20))
					c.SetDeadline(clk.Now().Add(30 * time.Second))
				},
				OnTimeout: func(c *LoopConn, err error) { c.WriteString(farewell); timedOut <- err },
				OnClose:   func(c *LoopConn, err error) { closed <- err }}
			SetSentHook(opt, func(out, written int) {
				if written < out {
					once.Do(func() { close(waiting) })
				}
			})
			SetLoopClock(opt, clk.Now)
			s := serveOn(t, listenTCP(t, map[int]int{syscall.SO_SNDBUF: 16 << 10}), echo, opt)
			dialSmallWindow(t, s) // and never read
			<-waiting
			clk.advance(s, 30*time.Second)
			if err := <-timedOut; !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("OnTimeout learned %v", err)
			}
			advanceToWriteTimeout(t, s, clk, 2*time.Minute, closed)
		})
	}
}

// TestLoopsDeadlineWhileWaiting: a deadline that passes while the
// output waits for room, with no OnTimeout, closes the connection after
// what it wrote is sent, as SetDeadline says and as with an OnTimeout:
// it was closed at once, the output still waiting thrown away, and
// OnClose learned the deadline alone, as if all had been sent.
func TestLoopsDeadlineWhileWaiting(t *testing.T) {
	clk := newFakeClock()
	closed := make(chan error, 1)
	waiting := make(chan struct{})
	var once sync.Once
	const size = 1 << 20
	opt := &LoopOptions{Loops: 1, IdleTimeout: time.Hour, WriteTimeout: time.Minute,
		OnOpen: func(c *LoopConn) {
			c.Write(bytes.Repeat([]byte("w"), size))
			c.SetDeadline(clk.Now().Add(30 * time.Second))
		},
		OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetSentHook(opt, func(out, written int) {
		if written < out {
			once.Do(func() { close(waiting) })
		}
	})
	SetLoopClock(opt, clk.Now)
	s := serveOn(t, listenTCP(t, map[int]int{syscall.SO_SNDBUF: 16 << 10}), echo, opt)
	c := dialSmallWindow(t, s)
	<-waiting
	clk.advance(s, 30*time.Second) // the deadline, before the peer reads
	got, err := io.ReadAll(c)
	if len(got) != size || err != nil {
		t.Fatalf("the peer read %d bytes, %v; want %d and the end", len(got), err, size)
	}
	if err := <-closed; !errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, ErrUnsent) {
		t.Fatalf("OnClose learned %v, want the deadline alone", err)
	}
}

// TestLoopsIdleTimeoutAfterWait: a connection that once waited for room
// (with no write timeout) still times out when idle afterwards.
func TestLoopsIdleTimeoutAfterWait(t *testing.T) {
	clk := newFakeClock()
	closed := make(chan error, 1)
	waiting := make(chan struct{})
	var once sync.Once
	const size = 1 << 20
	opt := &LoopOptions{Loops: 1, IdleTimeout: time.Minute, WriteTimeout: -1,
		OnOpen:  func(c *LoopConn) { c.Write(bytes.Repeat([]byte("w"), size)) },
		OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetSentHook(opt, func(out, written int) {
		if written < out {
			once.Do(func() { close(waiting) })
		}
	})
	SetLoopClock(opt, clk.Now)
	s := serveOn(t, listenTCP(t, map[int]int{syscall.SO_SNDBUF: 16 << 10}), echo, opt)
	c := dialSmallWindow(t, s)
	<-waiting
	clk.advance(s, 2*time.Minute) // waiting: not idle
	s.Sync()
	if _, err := io.ReadFull(c, make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	waitSent(s)
	select {
	case err := <-closed:
		t.Fatalf("closed (%v) while its output was waiting", err)
	default:
	}
	clk.advance(s, 2*time.Minute)
	s.Sync()
	select {
	case err := <-closed:
		if !errors.Is(err, ErrIdleTimeout) {
			t.Fatalf("OnClose learned %v, want ErrIdleTimeout", err)
		}
	default:
		t.Fatal("an idle connection outlived its idle timeout after waiting for room")
	}
}

// TestLoopsShutdownWithClose: Close called while Shutdown runs (a
// Shutdown whose context is done elsewhere) is no data race, and the
// listener is closed once.
func TestLoopsShutdownWithClose(t *testing.T) {
	s := startLoops(t, echo, nil)
	dial(t, s)
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(t.Context()) }()
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

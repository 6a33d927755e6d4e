//go:build unix

package netio

import (
	"context"
	"errors"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestLoopsDialOpenPanic: when OnOpen panics on a dialed connection,
// Dial fails with an error matching the *PanicError OnClose learns
// (ErrPanic), and returns no connection.
func TestLoopsDialOpenPanic(t *testing.T) {
	peer, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close() // its backlog takes the connection: no Accept needed
	closed := make(chan error, 1)
	s := startLoops(t, echo, &LoopOptions{
		Loops:   1,
		OnOpen:  func(*LoopConn) { panic("boom in OnOpen") },
		OnClose: func(_ *LoopConn, err error) { closed <- err },
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	c, err := s.Dial(ctx, "tcp", peer.Addr().String())
	var pe *PanicError
	if c != nil || !errors.Is(err, ErrPanic) || !errors.As(err, &pe) || pe.Value != "boom in OnOpen" {
		t.Fatalf("Dial: conn %t, %v; want no connection and the PanicError", c != nil, err)
	}
	if cerr := <-closed; !errors.Is(cerr, ErrPanic) {
		t.Fatalf("OnClose learned %v, want ErrPanic", cerr)
	}
	if st := s.Stats(); st.Dialed != 1 || st.DialErrors != 0 {
		t.Fatalf("Stats: Dialed %d, DialErrors %d; want 1, 0", st.Dialed, st.DialErrors)
	}
}

// A Handler's Dial (which the docs forbid: it waits for the loop that is
// calling it) returns when its ctx ends, instead of hanging the loop for
// good; the connection it started is closed, never opened. Here ctx is
// cancelled once the peer has accepted the connection, so Dial is
// waiting for the loop, or still connecting.
func TestLoopsDialOnLoopCtx(t *testing.T) {
	peer, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	opened := make(chan *LoopConn, 2)
	dialed := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var srv atomic.Pointer[Loops]
	h := func(c *LoopConn, in []byte) int {
		dc, err := srv.Load().Dial(ctx, "tcp", peer.Addr().String())
		if dc != nil {
			err = errors.New("a connection")
		}
		dialed <- err
		return len(in)
	}
	s := startLoops(t, h, &LoopOptions{Loops: 1, OnOpen: func(c *LoopConn) { opened <- c }})
	srv.Store(s)
	dial(t, s).Write([]byte("dial"))
	<-opened // the client's
	pc, err := peer.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	cancel()
	if err := <-dialed; !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial on the loop: %v, want context.Canceled", err)
	}
	// The loop goes on, and closes the dialed connection unopened.
	pc.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
	if n, err := pc.Read(make([]byte, 1)); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the dialed connection: %d bytes, %v; want it closed", n, err)
	}
	select {
	case c := <-opened:
		t.Fatalf("OnOpen ran for %v", c.RemoteAddr())
	default:
	}
	if st := s.Stats(); st.Dialed != 0 || st.DialErrors != 1 {
		t.Fatalf("Stats: Dialed %d, DialErrors %d; want 0, 1", st.Dialed, st.DialErrors)
	}
}

// TestLoopsDialDoneContext: a Dial whose ctx has ended already fails
// with ctx's error without connecting, as package net's Dial does: the
// peer is not handed a connection closed at once. (It connected, then
// saw ctx's end.) A Unix socket's connect(2) puts the connection in the
// listener's backlog before it returns, so an empty backlog after Dial
// tells that it did not.
func TestLoopsDialDoneContext(t *testing.T) {
	ln := listenUnix(t)
	s := startLoops(t, echo, &LoopOptions{Loops: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 3 {
		if c, err := s.Dial(ctx, "unix", ln.Addr().String()); c != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("Dial with a cancelled ctx: conn %t, %v; want context.Canceled", c != nil, err)
		}
	}
	dctx, dcancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer dcancel()
	c, err := s.Dial(dctx, "unix", ln.Addr().String())
	if c != nil || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Dial with a past deadline: conn %t, %v; want context.DeadlineExceeded", c != nil, err)
	}
	if st := s.Stats(); st.DialErrors != 4 || st.Dialed != 0 || st.Open != 0 {
		t.Fatalf("Stats %+v, want 4 dial errors", st)
	}
	rc, err := ln.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var aerr error
	rc.Control(func(fd uintptr) { // non-blocking: takes only what is there
		var nfd int
		if nfd, _, aerr = syscall.Accept(int(fd)); aerr == nil {
			syscall.Close(nfd)
		}
	})
	if aerr == nil {
		t.Fatal("the listener was handed a connection")
	} else if !errors.Is(aerr, syscall.EAGAIN) {
		t.Fatal(aerr)
	}
}

//go:build unix

package netio

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A second Shutdown, while a first one waits for connections that do not
// close, waits on its own context, not the first's: with its context
// already done, it returns that context's error (and closes the server,
// as a Shutdown whose context ended does).
func TestLoopsShutdownSecondCaller(t *testing.T) {
	started := make(chan struct{})
	opt := &LoopOptions{Loops: 1, OnShutdown: func(*LoopConn) {}} // connections stay open
	SetStoppedHook(opt, func() { close(started) })
	s := startLoops(t, func(c *LoopConn, in []byte) int { return len(in) }, opt)
	c := dial(t, s)
	c.Write([]byte("x"))
	s.Sync()
	waitOpen(t, s, 1)

	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	first := make(chan error, 1)
	go func() { first <- s.Shutdown(ctx1) }()
	<-started

	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	second := make(chan error, 1)
	go func() { second <- s.Shutdown(ctx2) }()
	guard := time.NewTimer(10 * time.Second)
	defer guard.Stop()
	select {
	case err := <-second:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("second Shutdown: %v, want context.Canceled", err)
		}
	case <-guard.C:
		cancel1()
		t.Fatal("the second Shutdown waits for the first one's context, not its own")
	}
	// It closed the server: the first returns too.
	<-first
	if st := s.Stats(); st.Open != 0 {
		t.Fatalf("Open %d after Shutdown", st.Open)
	}
}

// waitOpen waits until s serves n connections.
func waitOpen(t *testing.T, s *Loops, n int64) {
	t.Helper()
	for s.Stats().Open != n {
		s.Sync()
	}
}

//go:build unix

package netio

import (
	"context"
	"errors"
	"net"
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

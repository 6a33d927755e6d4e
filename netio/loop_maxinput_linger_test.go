//go:build unix

package netio

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// A connection closed for MaxInput lingers as a Handler's Close does: the
// replies its Handler wrote before are sent, then the end of the stream,
// not a reset. It closed at once, its input unread, which reset it and
// dropped the replies the peer had not read (it read "connection reset
// by peer"; `wirespeed serve -engine netio -mode line -tls` so ended a
// client's too long line).
func TestLoopsMaxInputLingers(t *testing.T) {
	closed := make(chan error, 1)
	replied := false
	h := func(c *LoopConn, in []byte) int {
		if !replied {
			replied = true
			c.Write([]byte("reply\n"))
		}
		return 0
	}
	s := startLoops(t, h, &LoopOptions{MaxInput: 100, OnClose: func(c *LoopConn, err error) { closed <- err }})
	c := dial(t, s)
	go func() {
		c.Write([]byte("x"))
		c.Write(bytes.Repeat([]byte("y"), 1<<20)) // past MaxInput, more than the loop reads
		c.CloseWrite()
	}()
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "reply\n" {
		t.Fatalf("read %q, %v; want the reply and the end of the stream", got, err)
	}
	if err := <-closed; !errors.Is(err, ErrInputTooLarge) {
		t.Fatalf("OnClose learned %v, want ErrInputTooLarge", err)
	}
}

// Output still waiting for room in the socket when MaxInput closes the
// connection is dropped (as MaxInput's doc says): OnClose learns
// ErrUnsent with ErrInputTooLarge (it learned ErrInputTooLarge alone, as
// if all had been sent).
func TestLoopsMaxInputUnsent(t *testing.T) {
	closed := make(chan error, 1)
	h := func(c *LoopConn, in []byte) int {
		if len(in) > 100 {
			// More than the sockets hold (the peer does not read), and
			// the input left unused, past MaxInput, in the same call.
			c.Write(make([]byte, 32<<20))
		}
		return 0
	}
	s := startLoops(t, h, &LoopOptions{MaxInput: 100, MaxQueued: 64 << 20, OnClose: func(c *LoopConn, err error) { closed <- err }})
	c := dial(t, s)
	c.Write(bytes.Repeat([]byte("y"), 1<<20))
	if err := <-closed; !errors.Is(err, ErrInputTooLarge) || !errors.Is(err, ErrUnsent) {
		t.Fatalf("OnClose learned %v, want ErrInputTooLarge and ErrUnsent", err)
	}
}

//go:build unix && (!linux || netio_portable)

package netio

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
)

// TestLoopsNoDupClosedListener: where the portable loops cannot
// duplicate a listener and accept from it, a Serve or an AddListener of
// a listener closed already fails with net.ErrClosed, as where they
// can, instead of serving it with an accepting goroutine that ends at
// once.
func TestLoopsNoDupClosedListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	opt := &LoopOptions{Loops: 1}
	SetNoDup(opt)
	if s, err := Serve(ln, echo, opt); !errors.Is(err, net.ErrClosed) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Serve of a closed listener: %v, want net.ErrClosed", err)
	}
	s, err := NewLoops(echo, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AddListener(ln); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("AddListener of a closed listener: %v, want net.ErrClosed", err)
	}
	if n := len(s.Addrs()); n != 0 {
		t.Fatalf("the server has %d listeners, want none", n)
	}
}

// TestLoopsNoDupListenerClosedWhileServed: where the portable loops
// accept from the listener itself, which they hold until they close, a
// second Serve of it fails with os.ErrExist while it is open, and with
// net.ErrClosed once its user closed it under the server (not
// os.ErrExist, though the server still holds it) or the server closed
// it.
func TestLoopsNoDupListenerClosedWhileServed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	opt := &LoopOptions{Loops: 1}
	SetNoDup(opt)
	s, err := Serve(ln, echo, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := dialAddr(t, ln.Addr())
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(io.LimitReader(c, 4)); string(got) != "ping" {
		t.Fatalf("the server echoed %q, %v", got, err)
	}
	if s2, err := Serve(ln, echo, opt); !errors.Is(err, os.ErrExist) {
		if s2 != nil {
			s2.Close()
		}
		t.Fatalf("a second Serve of the listener served: %v, want os.ErrExist", err)
	}
	ln.Close()
	if s2, err := Serve(ln, echo, opt); !errors.Is(err, net.ErrClosed) {
		if s2 != nil {
			s2.Close()
		}
		t.Fatalf("a second Serve of the listener its user closed: %v, want net.ErrClosed", err)
	}
	s.Close()
	if s2, err := Serve(ln, echo, opt); !errors.Is(err, net.ErrClosed) {
		if s2 != nil {
			s2.Close()
		}
		t.Fatalf("Serve of the listener the server closed: %v, want net.ErrClosed", err)
	}
}

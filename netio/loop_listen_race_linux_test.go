//go:build !netio_portable

package netio

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
)

// TestLoopsAddListenerRacingCloseLeavesListener: an AddListener that
// Close overtakes after the server took the listener and before every
// loop polls it (the hook closes the server there) fails with
// ErrServerClosed and leaves the listener open to its caller, as it
// was given: a Unix listener keeps its socket file and accepts, and
// another server may serve it. (Close closed it, and removed its
// socket file, though AddListener refused it.)
func TestLoopsAddListenerRacingCloseLeavesListener(t *testing.T) {
	ul := listenUnix(t)
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	for _, ln := range []net.Listener{ul, tl} {
		var s *Loops
		opt := &LoopOptions{Loops: 2}
		SetListeningHook(opt, func() { s.Close() })
		s, err := NewLoops(echo, opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddListener(ln); !errors.Is(err, ErrServerClosed) {
			t.Fatalf("AddListener of %v overtaken by Close: %v, want ErrServerClosed", ln.Addr(), err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if ln == ul {
			if _, err := os.Lstat(ul.Addr().String()); err != nil {
				t.Fatalf("the refused Unix listener's socket file: %v", err)
			}
		}
		s2, err := Serve(ln, echo, &LoopOptions{Loops: 1})
		if err != nil {
			t.Fatalf("Serve of the refused listener %v: %v", ln.Addr(), err)
		}
		c := dialAddr(t, ln.Addr())
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(io.LimitReader(c, 4)); string(got) != "ping" {
			t.Fatalf("the second server echoed %q, %v", got, err)
		}
		c.Close()
		s2.Close()
	}
}

//go:build unix

package tooltest

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// A connect to RefusingAddr is refused, and its port stays taken (a
// listener cannot bind it) while the test that asked for it runs; its
// socket is closed when that test ends.
func TestRefusingAddr(t *testing.T) {
	before, countable := openFDs()
	t.Run("open", func(t *testing.T) {
		addr := RefusingAddr(t)
		if n, _ := openFDs(); countable && n != before+1 {
			t.Errorf("%d descriptors open, want %d and RefusingAddr's", n, before)
		}
		for range 3 {
			c, err := net.DialTimeout("tcp", addr, time.Minute)
			if c != nil {
				c.Close()
			}
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Fatalf("dial %s: %v, want ECONNREFUSED", addr, err)
			}
		}
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []string{addr, "0.0.0.0:" + port} {
			if ln, err := net.Listen("tcp4", a); err == nil {
				ln.Close()
				t.Fatalf("listen on %s while RefusingAddr's socket is open: no error", a)
			} else if !errors.Is(err, syscall.EADDRINUSE) {
				t.Errorf("listen on %s: %v, want EADDRINUSE", a, err)
			}
		}
	})
	if n, _ := openFDs(); countable && n != before {
		t.Errorf("%d descriptors open after the test, want %d: RefusingAddr's socket left open", n, before)
	}
}

// openFDs counts the process's open descriptors where /dev/fd lists
// them (Linux, the BSDs, macOS); false where it does not.
func openFDs() (int, bool) {
	ents, err := os.ReadDir("/dev/fd")
	return len(ents), err == nil
}

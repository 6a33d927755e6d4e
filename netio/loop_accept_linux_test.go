package netio

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
)

// TestLoopsAcceptError: out of descriptors, accept(2) fails; OnAcceptError
// learns it, and the server accepts again once descriptors are free.
func TestLoopsAcceptError(t *testing.T) {
	errs := make(chan error, 16)
	s := startLoops(t, echo, &LoopOptions{Loops: 1, OnAcceptError: func(err error) {
		select {
		case errs <- err:
		default:
		}
	}})
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	// Room for the client's socket (and ReadDir's own descriptor, now
	// closed), not for the server's.
	low := lim
	low.Cur = uint64(len(fds))
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	restored := false
	restore := func() {
		if !restored {
			restored = true
			if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer restore()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := <-errs; !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("OnAcceptError learned %v, want EMFILE", err)
	}
	restore()
	c.Write([]byte("x"))
	got := make([]byte, 1)
	if _, err := io.ReadFull(c, got); err != nil || got[0] != 'x' {
		t.Fatalf("after the pause: %q, %v", got, err)
	}
}

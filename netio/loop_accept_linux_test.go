package netio

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLoopsAcceptError: out of descriptors, accept(2) fails; OnAcceptError
// learns it, in the same text on the epoll loops and the portable ones
// (whose error was net.Listener's Accept's *net.OpError: "netio: accept:
// accept tcp 127.0.0.1:PORT: accept4: too many open files"), and the
// server accepts again once descriptors are free.
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
	if err := <-errs; !errors.Is(err, syscall.EMFILE) || err.Error() != "netio: accept: "+syscall.EMFILE.Error() {
		t.Fatalf("OnAcceptError learned %q, want EMFILE, as \"netio: accept: %v\"", err, syscall.EMFILE)
	}
	restore()
	c.Write([]byte("x"))
	got := make([]byte, 1)
	if _, err := io.ReadFull(c, got); err != nil || got[0] != 'x' {
		t.Fatalf("after the pause: %q, %v", got, err)
	}
}

// TestLoopsAcceptedNoDelay: a connection accepted from a TCP listener has
// TCP_NODELAY, as package net's are, though the listener had none: the
// loops set it on the listener once, and Linux copies it to each
// connection the listener accepts.
func TestLoopsAcceptedNoDelay(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(addr, func(t *testing.T) {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				t.Skipf("no loopback %s: %v", addr, err)
			}
			if v := sockoptOf(t, ln.(*net.TCPListener), unix.IPPROTO_TCP, unix.TCP_NODELAY); v != 0 {
				t.Fatalf("the listener has TCP_NODELAY %d before Serve, want 0", v)
			}
			got := make(chan int, 1)
			s, err := Serve(ln, func(c *LoopConn, in []byte) int { return len(in) }, &LoopOptions{OnOpen: func(c *LoopConn) {
				v, err := unix.GetsockoptInt(c.FD(), unix.IPPROTO_TCP, unix.TCP_NODELAY)
				if err != nil {
					v = -1
				}
				got <- v
			}})
			if err != nil {
				ln.Close()
				t.Fatal(err)
			}
			defer s.Close()
			for range 2 {
				c, err := net.Dial("tcp", s.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if v := <-got; v != 1 {
					t.Fatalf("accepted connection's TCP_NODELAY: %d, want 1", v)
				}
			}
		})
	}
}

func sockoptOf(t *testing.T, sc syscall.Conn, level, opt int) int {
	t.Helper()
	rc, err := sc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) { v, gerr = unix.GetsockoptInt(int(fd), level, opt) }); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v
}

// TestLoopsCloseAfterReset: a Handler closes its connection after the
// peer's reset has arrived but before the loop has read it: the socket
// is closed at once (there is nothing to linger for), and OnClose learns
// the Close, nil.
func TestLoopsCloseAfterReset(t *testing.T) {
	reset := make(chan struct{})
	closed := make(chan error, 1)
	h := func(c *LoopConn, in []byte) int {
		<-reset
		for { // until the kernel has taken the reset in
			info, err := unix.GetsockoptTCPInfo(c.FD(), unix.IPPROTO_TCP, unix.TCP_INFO)
			if err != nil || info.State == unix.BPF_TCP_CLOSE {
				break
			}
			runtime.Gosched()
		}
		c.Close()
		return len(in)
	}
	s := startLoops(t, h, &LoopOptions{Loops: 1, OnClose: func(c *LoopConn, err error) { closed <- err }})
	c := dial(t, s)
	c.Write([]byte("x"))
	c.SetLinger(0)
	c.Close()
	close(reset)
	if err := <-closed; err != nil {
		t.Fatalf("OnClose learned %v, want nil", err)
	}
	if st := s.Stats(); st.Open != 0 {
		t.Fatalf("Stats after OnClose: %+v, want none open", st)
	}
}

// TestLoopsCloseUnreadNoReset: a connection closed while its reading is
// off, input waiting in its socket, throws that input away before it
// closes the socket (which would otherwise send a reset): the peer
// reads the end of the stream, and its socket waits for its own close
// (CLOSE_WAIT), unreset.
func TestLoopsCloseUnreadNoReset(t *testing.T) {
	held := make(chan *LoopConn, 1)
	h := func(c *LoopConn, in []byte) int {
		c.SetReading(false)
		held <- c
		return len(in)
	}
	closed := make(chan error, 1)
	s := startLoops(t, h, &LoopOptions{Loops: 1, OnClose: func(c *LoopConn, err error) { closed <- err }})
	c := dial(t, s)
	c.Write([]byte("a"))
	lc := <-held
	c.Write([]byte("more input, sent while the server does not read"))
	for { // until the input is in the server's socket, and the loop has seen its event
		queued := make(chan int, 1)
		if err := lc.Do(func(c *LoopConn) {
			n, err := unix.IoctlGetInt(c.FD(), unix.SIOCINQ)
			if err != nil {
				n = -1
			}
			queued <- n
		}); err != nil {
			t.Fatal(err)
		}
		if n := <-queued; n < 0 {
			t.Fatal("SIOCINQ failed")
		} else if n > 0 {
			break
		}
		runtime.Gosched()
	}
	s.Sync()
	if err := lc.Do(func(c *LoopConn) { c.Close() }); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || len(got) != 0 {
		t.Fatalf("the peer read %q, %v; want the end of the stream", got, err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("OnClose learned %v, want nil", err)
	}
	wantNotReset(t, c)
}

// wantNotReset fails t unless c, a peer's socket whose server has closed
// its end (OnClose has run), is in CLOSE_WAIT: ended by the server's
// FIN, not reset. Over loopback, a reset from the server's socket has
// reached c by the time the server's close(2) returns.
func wantNotReset(t *testing.T, c *net.TCPConn) {
	t.Helper()
	var info *unix.TCPInfo
	var err error
	rc, _ := c.SyscallConn()
	rc.Control(func(fd uintptr) { info, err = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) })
	if err != nil {
		t.Fatal(err)
	}
	if info.State != unix.BPF_TCP_CLOSE_WAIT {
		t.Fatalf("the peer's socket is in state %d, want CLOSE_WAIT (%d): the server reset it", info.State, unix.BPF_TCP_CLOSE_WAIT)
	}
}

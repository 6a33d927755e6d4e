package netio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// openFDs counts the process's open descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	return len(ents)
}

// echoPeer serves ln with a goroutine per connection that echoes.
func echoPeer(t testing.TB, ln net.Listener) {
	t.Helper()
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait() // its connections closed: the tests that count descriptors do not see them go
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				// Not io.Copy: its splice on Linux keeps a pipe pair in
				// a pool, closed only by the garbage collector, which
				// the tests that count descriptors would see go.
				b := make([]byte, 4096)
				for {
					n, err := c.Read(b)
					if _, werr := c.Write(b[:n]); err != nil || werr != nil {
						break
					}
				}
				c.Close()
			})
		}
	})
}

// TestLoopsDialEcho: a dialed connection is served as an accepted one:
// OnOpen runs before Dial returns (its greeting is the first thing the
// peer gets), the Handler gets what the peer sends, and Do works on it
// from the caller's goroutine. Over TCP and a Unix socket.
func TestLoopsDialEcho(t *testing.T) {
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ul, err := net.Listen("unix", filepath.Join(t.TempDir(), "peer"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ln := range []net.Listener{tl, ul} {
		t.Run(ln.Addr().Network(), func(t *testing.T) {
			echoPeer(t, ln)
			var opened atomic.Bool
			got := make(chan []byte, 1)
			closed := make(chan error, 1)
			var buf []byte
			s, err := NewLoops(func(c *LoopConn, in []byte) int {
				buf = append(buf, in...)
				if bytes.HasSuffix(buf, []byte("bye\n")) {
					got <- buf
					c.Close()
				}
				return len(in)
			}, &LoopOptions{
				OnOpen: func(c *LoopConn) {
					opened.Store(true)
					c.WriteString("hello\n")
				},
				OnClose: func(c *LoopConn, err error) { closed <- err },
			})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			addr := ln.Addr().String()
			if ln.Addr().Network() == "tcp" {
				// A name: resolved, its addresses tried in turn (::1 may
				// come first, and be refused).
				addr = net.JoinHostPort("localhost", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
			}
			c, err := s.Dial(context.Background(), ln.Addr().Network(), addr)
			if err != nil {
				t.Fatal(err)
			}
			if !opened.Load() {
				t.Fatal("Dial returned before OnOpen ran")
			}
			if c.RemoteAddr().String() != ln.Addr().String() {
				t.Fatalf("RemoteAddr %v, want %v", c.RemoteAddr(), ln.Addr())
			}
			if err := c.Do(func(c *LoopConn) { c.WriteString("bye\n") }); err != nil {
				t.Fatal(err)
			}
			if b := <-got; string(b) != "hello\nbye\n" {
				t.Fatalf("the Handler got %q, want the peer's echo of hello and bye", b)
			}
			if err := <-closed; err != nil {
				t.Fatalf("OnClose learned %v", err)
			}
			if st := s.Stats(); st.Dialed != 1 || st.Accepted != 0 || st.Open != 0 || st.Closed.Handler != 1 {
				t.Fatalf("Stats %+v, want one dialed connection, closed by the Handler", st)
			}
		})
	}
}

// TestLoopsDialRefused: a refused dial fails with ECONNREFUSED, its
// socket closed; Dial after Close fails with ErrServerClosed.
func TestLoopsDialRefused(t *testing.T) {
	addr := tooltest.RefusingAddr(t)
	path := filepath.Join(t.TempDir(), "s")
	ul, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ul.(*net.UnixListener).SetUnlinkOnClose(false)
	ul.Close() // the socket file stays, with no listener
	s, err := NewLoops(echo, &LoopOptions{Loops: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fds := openFDs(t)
	for _, d := range [][2]string{{"tcp", addr}, {"tcp4", addr}, {"unix", path}} {
		c, err := s.Dial(context.Background(), d[0], d[1])
		if !errors.Is(err, syscall.ECONNREFUSED) || c != nil {
			t.Fatalf("Dial(%s, %s): %v, %v; want ECONNREFUSED", d[0], d[1], c, err)
		}
	}
	if n := openFDs(t); n != fds {
		t.Fatalf("%d descriptors open after the refused dials, %d before", n, fds)
	}
	if st := s.Stats(); st.DialErrors != 3 || st.Dialed != 0 || st.Open != 0 {
		t.Fatalf("Stats %+v, want 3 dial errors", st)
	}
	if _, err := s.Dial(context.Background(), "udp", addr); err == nil {
		t.Fatal("Dial of udp succeeded")
	}
	s.Close()
	if _, err := s.Dial(context.Background(), "tcp", addr); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Dial after Close: %v, want ErrServerClosed", err)
	}
}

// fullListener returns the address of a TCP listener whose accept queue
// is full (backlog 0, one connection not accepted): the kernel drops the
// SYNs that come, so a connect to it waits, without end, for the test to
// end it.
func fullListener(t *testing.T) string {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*unix.SockaddrInet4).Port))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// The listener is readable once the connection is in its accept
	// queue: full from then on.
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		if n, err := unix.Poll(pfd, -1); n == 1 || (err != nil && err != unix.EINTR) {
			break
		}
	}
	return addr
}

// TestLoopsDialEnds: a dial that does not complete ends, its socket
// closed, at LoopOptions.DialTimeout on the loop's clock
// (os.ErrDeadlineExceeded), when its context is cancelled, and when the
// server closes.
func TestLoopsDialEnds(t *testing.T) {
	cases := []struct {
		name string
		end  func(s *Loops, clk *fakeClock, cancel context.CancelFunc)
		want error
	}{
		{"timeout", func(s *Loops, clk *fakeClock, _ context.CancelFunc) {
			clk.advance(s, time.Second) // 10 s after the dial began
		}, os.ErrDeadlineExceeded},
		{"cancel", func(_ *Loops, _ *fakeClock, cancel context.CancelFunc) { cancel() }, context.Canceled},
		{"close", func(s *Loops, _ *fakeClock, _ context.CancelFunc) { s.Close() }, ErrServerClosed},
		{"shutdown", func(s *Loops, _ *fakeClock, _ context.CancelFunc) { s.Shutdown(context.Background()) }, ErrServerClosed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr := fullListener(t)
			clk := newFakeClock()
			waiting := make(chan struct{}, 1)
			opt := &LoopOptions{Loops: 1, DialTimeout: 10 * time.Second}
			SetLoopClock(opt, clk.Now)
			SetDialingHook(opt, func() { waiting <- struct{}{} })
			fds := openFDs(t)
			s, err := NewLoops(echo, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := s.Dial(ctx, "tcp", addr)
				done <- err
			}()
			<-waiting
			if tc.name == "timeout" {
				clk.advance(s, 9*time.Second)
				select {
				case err := <-done:
					t.Fatalf("the dial ended (%v) before its timeout", err)
				default:
				}
			}
			tc.end(s, clk, cancel)
			err = <-done
			if !errors.Is(err, tc.want) {
				t.Fatalf("Dial: %v, want %v", err, tc.want)
			}
			if st := s.Stats(); st.DialErrors != 1 || st.Open != 0 {
				t.Fatalf("Stats %+v, want one dial error", st)
			}
			s.Close()
			if n := openFDs(t); n != fds {
				t.Fatalf("%d descriptors open once the server closed, %d before it started", n, fds)
			}
		})
	}
}

// TestLoopsDialCanceledText: a Dial whose context is cancelled, before
// it begins or while its connect is under way, fails as package net's
// Dial does, "dial tcp ADDR: operation was canceled", matching
// context.Canceled; both implementations said "context canceled".
func TestLoopsDialCanceledText(t *testing.T) {
	addr := fullListener(t) // a connect that cannot complete
	ln := listenUnix(t)
	waiting := make(chan struct{}, 1)
	opt := &LoopOptions{Loops: 1}
	SetDialingHook(opt, func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	})
	s, err := NewLoops(echo, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	want := func(network, address string) error {
		var nd net.Dialer
		_, err := nd.DialContext(done, network, address)
		if err == nil {
			t.Fatalf("package net's Dial(%q, %q) with a cancelled ctx connected", network, address)
		}
		return err
	}
	for _, d := range [][2]string{{"tcp", addr}, {"unix", ln.Addr().String()}} {
		c, err := s.Dial(done, d[0], d[1])
		if w := want(d[0], d[1]); c != nil || !errors.Is(err, context.Canceled) || err.Error() != w.Error() {
			t.Errorf("Dial(%q, %q) with a cancelled ctx: %v, want %v", d[0], d[1], err, w)
		}
	}
	select {
	case <-waiting: // a dial the ctx ended before it began (portable loops)
	default:
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-waiting // the connect is under way
		cancel()
	}()
	c, err := s.Dial(ctx, "tcp", addr)
	if w := want("tcp", addr); c != nil || !errors.Is(err, context.Canceled) || err.Error() != w.Error() {
		t.Errorf("Dial(%q) cancelled under way: %v, want %v", addr, err, w)
	}
}

// TestLoopsDialContextDeadline: a dial that its context's deadline ends
// fails as one DialTimeout ends, and as package net's Dial does: with a
// net.Error whose Timeout reports true, matching os.ErrDeadlineExceeded
// and context.DeadlineExceeded, its socket closed.
func TestLoopsDialContextDeadline(t *testing.T) {
	addr := fullListener(t) // the dial cannot complete: only the deadline ends it
	fds := openFDs(t)
	s, err := NewLoops(echo, &LoopOptions{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	c, err := s.Dial(ctx, "tcp", addr)
	if c != nil || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Dial: %v, %v; want os.ErrDeadlineExceeded and context.DeadlineExceeded", c, err)
	}
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("Dial: %v (%T) is not a net.Error that is a timeout", err, err)
	}
	if st := s.Stats(); st.DialErrors != 1 || st.Open != 0 {
		t.Fatalf("Stats %+v, want one dial error", st)
	}
	s.Close()
	if n := openFDs(t); n != fds {
		t.Fatalf("%d descriptors open once the server closed, %d before it started", n, fds)
	}
}

// endedCtx is a context whose deadline the test says has passed, when
// it closes done: a dial it ends under way needs no real time to pass.
type endedCtx struct {
	context.Context
	done chan struct{}
}

func (c endedCtx) Done() <-chan struct{} { return c.done }

func (c endedCtx) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// TestLoopsDialDeadlineText: a Dial whose context's deadline has passed,
// before it begins or while its connect is under way, fails as package
// net's Dial does: an *net.OpError that reads "dial tcp ADDR: i/o
// timeout", a net.Error whose Timeout reports true, matching
// context.DeadlineExceeded (and os.ErrDeadlineExceeded, as a
// DialTimeout's end does). Both implementations read "i/o timeout
// (context deadline exceeded)".
func TestLoopsDialDeadlineText(t *testing.T) {
	addr := fullListener(t) // a connect that cannot complete
	ln := listenUnix(t)
	waiting := make(chan struct{}, 1)
	opt := &LoopOptions{Loops: 1}
	SetDialingHook(opt, func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	})
	s, err := NewLoops(echo, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check := func(what string, c *LoopConn, err, want error) {
		t.Helper()
		var oe *net.OpError
		var ne net.Error
		if c != nil || !errors.As(err, &oe) || !errors.As(err, &ne) || !ne.Timeout() || err.Error() != want.Error() ||
			!errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%s: %v (%T), want %v, a timeout matching context.DeadlineExceeded and os.ErrDeadlineExceeded", what, err, err, want)
		}
	}
	past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for _, d := range [][2]string{{"tcp", addr}, {"unix", ln.Addr().String()}} {
		var nd net.Dialer
		_, want := nd.DialContext(past, d[0], d[1])
		if want == nil {
			t.Fatalf("package net's Dial(%q, %q) with a past deadline connected", d[0], d[1])
		}
		c, err := s.Dial(past, d[0], d[1])
		check(fmt.Sprintf("Dial(%q, %q) with a past deadline", d[0], d[1]), c, err, want)
		if !errors.Is(want, context.DeadlineExceeded) {
			t.Errorf("package net's Dial: %v, not context.DeadlineExceeded", want)
		}
	}
	select {
	case <-waiting: // a dial the ctx ended before it began (portable loops)
	default:
	}
	var nd net.Dialer
	_, want := nd.DialContext(past, "tcp", addr)
	ctx := endedCtx{context.Background(), make(chan struct{})}
	go func() {
		<-waiting // the connect is under way
		close(ctx.done)
	}()
	c, err := s.Dial(ctx, "tcp", addr)
	check(fmt.Sprintf("Dial(%q) whose deadline passed under way", addr), c, err, want)
}

// TestLoopsDialUnixBacklogFull: a Unix socket whose listener's backlog
// is full fails at once with EAGAIN, as package net's Dial does, its
// socket closed.
func TestLoopsDialUnixBacklogFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "full")
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	var filled []net.Conn
	defer func() {
		for _, c := range filled {
			c.Close()
		}
	}()
	var netErr error
	for netErr == nil && len(filled) < 8 {
		var c net.Conn
		if c, netErr = net.Dial("unix", path); netErr == nil {
			filled = append(filled, c)
		}
	}
	if !errors.Is(netErr, syscall.EAGAIN) {
		t.Fatalf("net.Dial of a full backlog: %v, want EAGAIN", netErr)
	}
	s, err := NewLoops(echo, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fds := openFDs(t)
	if _, err := s.Dial(context.Background(), "unix", path); !errors.Is(err, syscall.EAGAIN) {
		t.Fatalf("Dial of a full backlog: %v, want EAGAIN as net.Dial", err)
	}
	if n := openFDs(t); n != fds {
		t.Fatalf("%d descriptors open after the dial, %d before", n, fds)
	}
}

//go:build unix

package netio

import (
	"context"
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLoopsResetError: OnClose learns a peer's reset as the system's
// error number alone, ECONNRESET, text and all, on the epoll loops and the
// portable ones alike (whose net.Conn wrapped it in a *net.OpError with
// the addresses: another text for the same reset).
func TestLoopsResetError(t *testing.T) {
	closed := make(chan error, 1)
	s := startLoops(t, func(c *LoopConn, in []byte) int { return len(in) },
		&LoopOptions{Loops: 1, OnClose: func(c *LoopConn, err error) { closed <- err }})
	cc := dial(t, s)
	if _, err := cc.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	s.Sync()
	cc.SetLinger(0)
	cc.Close() // RST
	err := <-closed
	if !errors.Is(err, syscall.ECONNRESET) || err.Error() != syscall.ECONNRESET.Error() {
		t.Fatalf("OnClose learned %q, want %q", err, syscall.ECONNRESET)
	}
}

// TestLoopsDialMissingAddress: Dial of an empty address fails as package
// net's Dial does ("dial tcp: missing address"), on either implementation
// (the epoll loops said "missing port in address" for TCP, and tried
// connect(2) for a Unix socket: "connect: invalid argument").
func TestLoopsDialMissingAddress(t *testing.T) {
	s := startLoops(t, func(c *LoopConn, in []byte) int { return len(in) }, &LoopOptions{Loops: 1})
	ctx := context.Background()
	for _, network := range []string{"tcp", "tcp4", "tcp6", "unix"} {
		var d net.Dialer
		_, want := d.DialContext(ctx, network, "")
		c, err := s.Dial(ctx, network, "")
		if c != nil {
			t.Errorf("Dial(%q, \"\") made a connection", network)
		}
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "dial" || want == nil || err.Error() != want.Error() {
			t.Errorf("Dial(%q, \"\"): %v, want %v (as package net's Dial)", network, err, want)
		}
	}
	if st := s.Stats(); st.DialErrors != 4 {
		t.Errorf("%d dial errors counted, want 4", st.DialErrors)
	}
}

// TestLoopsWriteError: a write the peer's reset made fail closes the
// connection with the system's error number and ErrUnsent, the same text
// on the epoll loops and the portable ones (whose write wrapped the
// number in an *os.SyscallError: "write: broken pipe, and ..."). The
// peer ends its stream, then resets the connection (SO_LINGER 0); the
// Handler, called with the end of stream, waits until the reset has come
// (poll(2), which leaves SO_ERROR as it is) and writes: nothing reads
// the connection meanwhile, on either implementation.
func TestLoopsWriteError(t *testing.T) {
	atEOF := make(chan struct{})
	closed := make(chan error, 1)
	s := startLoops(t, func(c *LoopConn, in []byte) int {
		if !c.EOF() {
			return len(in)
		}
		close(atEOF)
		err := c.Control(func(fd uintptr) {
			// POLLERR and POLLHUP are reported whatever is asked for.
			unix.Poll([]unix.PollFd{{Fd: int32(fd)}}, int(time.Minute/time.Millisecond))
		})
		if err != nil {
			t.Error(err)
		}
		c.Write([]byte("too late"))
		return len(in)
	}, &LoopOptions{Loops: 1, OnClose: func(c *LoopConn, err error) { closed <- err }})
	cc := dial(t, s)
	if err := cc.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	<-atEOF
	cc.SetLinger(0)
	cc.Close() // RST
	err := <-closed
	var errno syscall.Errno
	if !errors.As(err, &errno) || !errors.Is(err, ErrUnsent) {
		t.Fatalf("OnClose learned %q, want a system's error and ErrUnsent", err)
	}
	if want := errno.Error() + ", and " + ErrUnsent.Error(); err.Error() != want {
		t.Fatalf("OnClose learned %q, want %q", err, want)
	}
	if errno != syscall.EPIPE && errno != syscall.ECONNRESET {
		t.Errorf("OnClose learned %v, want EPIPE or ECONNRESET", errno)
	}
}

// TestLoopsDialLocalName: a Dial of the local system (an empty host)
// that fails names the address as package net's Dial does, ":port", on
// either implementation (the epoll loops named the loopback address they
// had connected to: "dial tcp 127.0.0.1:0: connect: connection refused"
// where net's says "dial tcp :0: ..."). Port 0 is refused everywhere.
func TestLoopsDialLocalName(t *testing.T) {
	s := startLoops(t, func(c *LoopConn, in []byte) int { return len(in) }, &LoopOptions{Loops: 1})
	ctx := context.Background()
	for _, network := range []string{"tcp", "tcp4", "tcp6"} {
		for _, address := range []string{":", ":0"} {
			var d net.Dialer
			_, want := d.DialContext(ctx, network, address)
			c, err := s.Dial(ctx, network, address)
			if c != nil || want == nil {
				t.Fatalf("Dial(%q, %q) connected", network, address)
			}
			if err == nil || err.Error() != want.Error() {
				t.Errorf("Dial(%q, %q): %v, want %v (as package net's Dial)", network, address, err, want)
			}
		}
	}
}

// TestLoopsDialZone: Dial of an IPv6 address with a zone
// ("[fe80::1%eth0]:25") connects through that interface, as package
// net's Dial: the epoll loops dropped the zone (LookupNetIP does) and
// their connect(2) of a link-local address failed with EINVAL. A Dial
// that fails names the zone as it was given, as net's does.
func TestLoopsDialZone(t *testing.T) {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Skip(err)
	}
	s := startLoops(t, func(c *LoopConn, in []byte) int { return len(in) }, &LoopOptions{Loops: 1})
	ctx := context.Background()
	tried := false
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagUp == 0 {
			continue
		}
		// The loopback's fe80::1 (none on Linux: unreachable; refused
		// where it has one), by name and by index, as net's Dial: no
		// packet leaves the system. Zones net does not read as the
		// index (a sign, a number past 32 bits that wraps to it) fail
		// as net's do.
		for _, zone := range []string{ifi.Name, strconv.Itoa(ifi.Index), "+" + strconv.Itoa(ifi.Index), strconv.FormatInt(1<<32+int64(ifi.Index), 10), "-1"} {
			if ifi.Flags&net.FlagLoopback == 0 {
				break
			}
			address := net.JoinHostPort("fe80::1%"+zone, "0")
			var d net.Dialer
			_, want := d.DialContext(ctx, "tcp", address)
			c, err := s.Dial(ctx, "tcp", address)
			if c != nil || want == nil {
				t.Fatalf("Dial(%q) connected", address)
			}
			if err == nil || err.Error() != want.Error() {
				t.Errorf("Dial(%q): %v, want %v (as package net's Dial)", address, err, want)
			}
		}
		// The interface's own link-local address, if it has one: a
		// listener there takes the dial.
		addrs, _ := ifi.Addrs()
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || ipn.IP.To4() != nil || !ipn.IP.IsLinkLocalUnicast() || tried {
				continue
			}
			ln, err := net.Listen("tcp", net.JoinHostPort(ipn.IP.String()+"%"+ifi.Name, "0"))
			if err != nil {
				continue
			}
			defer ln.Close()
			tried = true
			address := net.JoinHostPort(ipn.IP.String()+"%"+ifi.Name, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
			c, err := s.Dial(ctx, "tcp", address)
			if err != nil {
				t.Errorf("Dial(%q): %v", address, err)
				continue
			}
			nc, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			nc.Close()
			c.Do(func(c *LoopConn) { c.Close() })
		}
	}
	if !tried {
		t.Log("no link-local address to listen on: only failed dials tried")
	}
}

// TestLoopsClosedListenerError: AddListener (and Serve) of a closed
// listener fails with net.ErrClosed and the same text on either
// implementation, "netio: listener ADDR: use of closed network
// connection" (the epoll loops returned the raw Control's error,
// "raw-control tcp ADDR: ...", the portable ones File's, "netio:
// listener: file tcp ADDR: ...").
func TestLoopsClosedListenerError(t *testing.T) {
	s := startLoops(t, func(c *LoopConn, in []byte) int { return len(in) }, &LoopOptions{Loops: 1})
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ul, err := net.Listen("unix", t.TempDir()+"/s")
	if err != nil {
		t.Fatal(err)
	}
	for _, ln := range []net.Listener{tl, ul} {
		ln.Close()
		want := "netio: listener " + ln.Addr().String() + ": " + net.ErrClosed.Error()
		if err := s.AddListener(ln); !errors.Is(err, net.ErrClosed) || err.Error() != want {
			t.Errorf("AddListener of a closed %s listener: %v, want %q", ln.Addr().Network(), err, want)
		}
		if s2, err := Serve(ln, func(c *LoopConn, in []byte) int { return len(in) }, nil); !errors.Is(err, net.ErrClosed) || err.Error() != want {
			if s2 != nil {
				s2.Close()
			}
			t.Errorf("Serve of a closed %s listener: %v, want %q", ln.Addr().Network(), err, want)
		}
	}
}

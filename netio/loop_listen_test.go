//go:build unix

package netio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// listenUnix listens on a Unix socket in the test's directory.
func listenUnix(t testing.TB) *net.UnixListener {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func dialAddr(t testing.TB, a net.Addr) net.Conn {
	t.Helper()
	c, err := net.Dial(a.Network(), a.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestLoopsUnixEcho: a Unix socket listener is served as a TCP one: its
// connections have Unix addresses, are echoed exactly, close in good
// order (the close lingers with SIOCOUTQ, which a Unix stream socket
// answers), and the socket file goes with the server.
func TestLoopsUnixEcho(t *testing.T) {
	ln := listenUnix(t)
	path := ln.Addr().String()
	type addrs struct{ remote, local net.Addr }
	opened := make(chan addrs, 1)
	closed := make(chan error, 1)
	s, err := Serve(ln, echo, &LoopOptions{
		OnOpen:  func(c *LoopConn) { opened <- addrs{c.RemoteAddr(), c.LocalAddr()} },
		OnClose: func(c *LoopConn, err error) { closed <- err },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if a, ok := s.Addr().(*net.UnixAddr); !ok || a.Name != path {
		t.Fatalf("Addr %#v, want the listener's %s", s.Addr(), path)
	}
	c := dialAddr(t, s.Addr())
	a := <-opened
	if r, ok := a.remote.(*net.UnixAddr); !ok || r.Net != "unix" {
		t.Fatalf("RemoteAddr %#v, want a *net.UnixAddr", a.remote)
	}
	if l, ok := a.local.(*net.UnixAddr); !ok || l.Name != path {
		t.Fatalf("LocalAddr %#v, want %s", a.local, path)
	}
	_, all := messages(1, 200, 4000)
	got := readAll(c)
	go func() {
		c.Write(all)
		c.(*net.UnixConn).CloseWrite()
	}()
	if b := <-got; !bytes.Equal(b, all) {
		t.Fatalf("echoed %d bytes, want the %d sent", len(b), len(all))
	}
	if err := <-closed; err != nil {
		t.Fatalf("OnClose learned %v, want nil", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the socket file is gone while served: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the socket file after Close: %v, want it removed", err)
	}
}

// TestLoopsUnixLingerUntilRead: a connection closed with output the peer
// has not read yet keeps its socket until the peer has read it all (a
// Unix socket's SIOCOUTQ counts what the peer has not read), so the
// output is not lost; and what the peer sends meanwhile is thrown away.
func TestLoopsUnixLingerUntilRead(t *testing.T) {
	if !lingerSeesAcks {
		t.Skip("the system does not tell what the peer has not read: the linger waits for its end of stream")
	}
	ln := listenUnix(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // 128 KiB: more than a socket buffer
	closed := make(chan error, 1)
	s, err := Serve(ln, func(c *LoopConn, in []byte) int { return len(in) }, &LoopOptions{
		OnOpen: func(c *LoopConn) {
			c.Write(big)
			c.Close()
		},
		OnClose: func(c *LoopConn, err error) { closed <- err },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := dialAddr(t, s.Addr())
	c.Write([]byte("ignored\n"))
	if b, err := io.ReadAll(c); err != nil || !bytes.Equal(b, big) {
		t.Fatalf("read %d bytes, %v; want the %d written, then EOF", len(b), err, len(big))
	}
	if err := <-closed; err != nil {
		t.Fatalf("OnClose learned %v, want nil", err)
	}
}

// TestLoopsSeveralListeners: one Loops serves a TCP and a Unix listener;
// Addr is the first's, Addrs both; Shutdown stops both.
func TestLoopsSeveralListeners(t *testing.T) {
	s, err := NewLoops(lines, &LoopOptions{Loops: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Addr() != nil || len(s.Addrs()) != 0 {
		t.Fatalf("no listener: Addr %v, Addrs %v", s.Addr(), s.Addrs())
	}
	tl, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	ul := listenUnix(t)
	for _, ln := range []net.Listener{tl, ul} {
		if err := s.AddListener(ln); err != nil {
			t.Fatal(err)
		}
	}
	addrs := s.Addrs()
	if len(addrs) != 2 || addrs[0].String() != tl.Addr().String() || addrs[1].String() != ul.Addr().String() || s.Addr() != addrs[0] {
		t.Fatalf("Addrs %v, Addr %v; want %v and %v", addrs, s.Addr(), tl.Addr(), ul.Addr())
	}
	if err := s.AddListener(tl); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a second AddListener of a TCP listener: %v, want net.ErrClosed", err)
	}
	if err := s.AddListener(ul); !errors.Is(err, os.ErrExist) {
		t.Fatalf("a second AddListener of a Unix listener: %v, want os.ErrExist", err)
	}
	var conns []net.Conn
	for _, a := range addrs {
		for range 3 {
			c := dialAddr(t, a)
			roundTrip(t, bufio.NewReader(c), c)
			conns = append(conns, c)
		}
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range conns {
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("after Shutdown, a connection read %v, want EOF", err)
		}
	}
	for _, a := range addrs {
		if c, err := net.Dial(a.Network(), a.String()); err == nil {
			c.Close()
			t.Fatalf("%v accepts a connection after Shutdown", a)
		}
	}
	if err := s.AddListener(listenUnix(t)); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("AddListener after Shutdown: %v, want ErrServerClosed", err)
	}
}

type otherListener struct{ net.Listener }

// TestLoopsListenerRefused: listeners the loops cannot serve are refused
// with errors.ErrUnsupported, nil ones with os.ErrInvalid.
func TestLoopsListenerRefused(t *testing.T) {
	tl, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	pl, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "p"), Net: "unixpacket"})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	for _, ln := range []net.Listener{otherListener{tl}, pl} {
		if s, err := Serve(ln, echo, nil); !errors.Is(err, errors.ErrUnsupported) {
			if s != nil {
				s.Close()
			}
			t.Fatalf("Serve(%T): %v, want errors.ErrUnsupported", ln, err)
		}
	}
	var nilTCP *net.TCPListener
	if _, err := Serve(nilTCP, echo, nil); !errors.Is(err, os.ErrInvalid) {
		t.Fatalf("Serve of a nil *net.TCPListener: %v, want os.ErrInvalid", err)
	}
	// The refused listener is left alone.
	c, err := net.Dial("tcp", tl.Addr().String())
	if err != nil {
		t.Fatalf("the refused listener was closed: %v", err)
	}
	c.Close()
}

// TestLoopsUnixListenerServedOnce: a Unix listener is served by one
// server: a second server's Serve of it fails with os.ErrExist, as the
// same server's AddListener does, and leaves it to the first, which
// closes it (its socket file going) when it closes. The second server
// polled it too, and the first one's Close removed the socket file from
// under it. Once the first has let it go, it is closed.
func TestLoopsUnixListenerServedOnce(t *testing.T) {
	ln := listenUnix(t)
	path := ln.Addr().String()
	s1, err := Serve(ln, echo, &LoopOptions{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	if s2, err := Serve(ln, echo, &LoopOptions{Loops: 1}); !errors.Is(err, os.ErrExist) {
		if s2 != nil {
			s2.Close()
		}
		t.Fatalf("a second server's Serve of the listener: %v, want os.ErrExist", err)
	}
	c := dialAddr(t, ln.Addr())
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(io.LimitReader(c, 4)); string(got) != "ping" {
		t.Fatalf("the first server echoed %q, %v", got, err)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the socket file after the server closed: %v, want it gone", err)
	}
	if s3, err := Serve(ln, echo, &LoopOptions{Loops: 1}); !errors.Is(err, net.ErrClosed) {
		if s3 != nil {
			s3.Close()
		}
		t.Fatalf("Serve of the listener the server closed: %v, want net.ErrClosed", err)
	}
}

// TestLoopsTCPListenerServedOnce: a TCP listener is served by one
// server even when two take it at once: a second server's AddListener
// made after the first has duplicated the listener's socket and before
// it has closed the listener (the hook orders the race) fails with
// os.ErrExist; it duplicated the socket too, and both served it. Once
// the first has closed it, a Serve of it fails with net.ErrClosed.
func TestLoopsTCPListenerServedOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s2, err := NewLoops(echo, &LoopOptions{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	var second error
	raced := false
	opt := &LoopOptions{Loops: 1}
	SetListeningHook(opt, func() {
		raced = true
		second = s2.AddListener(ln)
	})
	s1, err := Serve(ln, echo, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	if !raced {
		t.Fatal("the listening hook did not run")
	}
	if !errors.Is(second, os.ErrExist) {
		t.Fatalf("a second server's AddListener while the first took the listener: %v, want os.ErrExist", second)
	}
	if n := len(s2.Addrs()); n != 0 {
		t.Fatalf("the second server has %d listeners, want none", n)
	}
	if s3, err := Serve(ln, echo, &LoopOptions{Loops: 1}); !errors.Is(err, net.ErrClosed) {
		if s3 != nil {
			s3.Close()
		}
		t.Fatalf("Serve of the listener the first server closed: %v, want net.ErrClosed", err)
	}
	c := dialAddr(t, ln.Addr())
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(io.LimitReader(c, 4)); string(got) != "ping" {
		t.Fatalf("the first server echoed %q, %v", got, err)
	}
}

// TestLoopsUnixListenerClosedWhileServed: a Unix listener its user
// closes while a server holds it (against the godoc's advice) is closed:
// a second Serve of it fails with net.ErrClosed, not with os.ErrExist as
// while it is open.
func TestLoopsUnixListenerClosedWhileServed(t *testing.T) {
	ln := listenUnix(t)
	s, err := Serve(ln, echo, &LoopOptions{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s2, err := Serve(ln, echo, &LoopOptions{Loops: 1}); !errors.Is(err, os.ErrExist) {
		if s2 != nil {
			s2.Close()
		}
		t.Fatalf("a second Serve of the listener served: %v, want os.ErrExist", err)
	}
	ln.Close()
	if s2, err := Serve(ln, echo, &LoopOptions{Loops: 1}); !errors.Is(err, net.ErrClosed) {
		if s2 != nil {
			s2.Close()
		}
		t.Fatalf("a second Serve of the listener its user closed: %v, want net.ErrClosed", err)
	}
}

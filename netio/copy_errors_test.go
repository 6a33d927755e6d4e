//go:build unix

package netio

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadFromErrorKinds: a Writer's ReadFrom from a socket whose peer
// resets it, or to one whose peer resets it, returns the *net.OpError
// that the source's Read or the destination's Write returns, with its
// errno, whether it splices (Linux, a *net.TCPConn source) or copies
// through its buffer (a source of another type). The spliced steps
// returned a bare *os.SyscallError.
func TestReadFromErrorKinds(t *testing.T) {
	sources := map[string]func(c *net.TCPConn) io.Reader{
		"socket": func(c *net.TCPConn) io.Reader { return c },
		"buffer": func(c *net.TCPConn) io.Reader { return struct{ io.Reader }{c} },
	}
	for name, source := range sources {
		t.Run(name+"/read", func(t *testing.T) {
			a, b := tcpPair(t)
			c, d := tcpPair(t)
			go io.Copy(io.Discard, d)
			if _, err := b.Write(make([]byte, 4096)); err != nil {
				t.Fatal(err)
			}
			b.SetLinger(0)
			b.Close() // a reset
			w := NewWriter(c, nil)
			_, err := w.ReadFrom(source(a))
			checkOpError(t, err, "read", a, syscall.ECONNRESET)
		})
		t.Run(name+"/write", func(t *testing.T) {
			a, b := tcpPair(t)
			c, d := tcpPair(t)
			d.SetLinger(0)
			d.Close() // a reset
			go func() {
				b.Write(make([]byte, 4<<20))
				b.Close()
			}()
			w := NewWriter(c, nil)
			_, err := w.ReadFrom(source(a))
			checkOpError(t, err, "write", c, syscall.ECONNRESET, syscall.EPIPE)
		})
	}
}

// TestReadFromSocketDeadline: ReadFrom from a socket past its read
// deadline returns the error the socket's Read returns, text and all,
// spliced or not (spliced, the RawConn's "raw-read" error was wrapped in
// it).
func TestReadFromSocketDeadline(t *testing.T) {
	var texts [2]string
	for i, spliced := range []bool{true, false} {
		a, _ := tcpPair(t)
		c, d := tcpPair(t)
		go io.Copy(io.Discard, d)
		if err := a.SetReadDeadline(time.Unix(1, 0)); err != nil {
			t.Fatal(err)
		}
		var src io.Reader = a
		if !spliced {
			src = struct{ io.Reader }{a}
		}
		_, err := NewWriter(c, nil).ReadFrom(src)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("spliced %v: error %v, want past the deadline", spliced, err)
		}
		checkOpError(t, err, "read", a)
		texts[i] = strings.ReplaceAll(err.Error(), a.LocalAddr().String()+"->"+a.RemoteAddr().String(), "A->B")
	}
	if texts[0] != texts[1] {
		t.Errorf("spliced %q, copied %q", texts[0], texts[1])
	}
}

// TestReadFromPipeDeadline: ReadFrom from a pipe past its read deadline
// returns the *fs.PathError the pipe's Read returns, spliced or not.
func TestReadFromPipeDeadline(t *testing.T) {
	for _, spliced := range []bool{true, false} {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		defer pw.Close()
		c, d := tcpPair(t)
		go io.Copy(io.Discard, d)
		if err := pr.SetReadDeadline(time.Unix(1, 0)); err != nil {
			t.Fatal(err)
		}
		var src io.Reader = pr
		if !spliced {
			src = struct{ io.Reader }{pr}
		}
		_, err = NewWriter(c, nil).ReadFrom(src)
		var pe *fs.PathError
		if !errors.As(err, &pe) || pe.Op != "read" || pe.Path != pr.Name() || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("spliced %v: error %v (%T), want a *fs.PathError of read on %s, past the deadline", spliced, err, err, pr.Name())
		}
	}
}

// checkOpError fails t unless err is a *net.OpError of op on c's
// addresses that matches one of errnos, if any are given.
func checkOpError(t *testing.T, err error, op string, c net.Conn, errnos ...syscall.Errno) {
	t.Helper()
	var oe *net.OpError
	if !errors.As(err, &oe) {
		t.Fatalf("error %v (%T), want a *net.OpError", err, err)
	}
	if oe.Op != op || oe.Net != "tcp" || oe.Source.String() != c.LocalAddr().String() || oe.Addr.String() != c.RemoteAddr().String() {
		t.Errorf("error %q: Op %q Net %q Source %v Addr %v, want %q tcp %v %v", err, oe.Op, oe.Net, oe.Source, oe.Addr, op, c.LocalAddr(), c.RemoteAddr())
	}
	if len(errnos) == 0 {
		return
	}
	for _, e := range errnos {
		if errors.Is(err, e) {
			return
		}
	}
	t.Errorf("error %q matches none of %v", err, errnos)
}

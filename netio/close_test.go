package netio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// pipe returns the two ends of a net.Pipe, closed at the end of the test.
// It buffers nothing: a Write waits until the other end reads it, so a
// peer that does not read holds every byte in the Writer.
func pipe(t *testing.T) (client, server net.Conn) {
	c, s := net.Pipe()
	t.Cleanup(func() { c.Close(); s.Close() })
	return c, s
}

// A peer that reads: Close sends everything still queued, then closes.
func TestConnCloseCooperativePeer(t *testing.T) {
	cli, srv := pipe(t)
	c := NewConn(cli, &Options{Linger: time.Hour})
	_, want := messages(11, 2000, 500)
	if _, err := c.Write(want); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Written != 0 || s.Queued != len(want) {
		t.Fatalf("before the peer reads: %+v", s)
	}
	got := readAll(srv)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("peer got %d bytes, want %d; equal prefix %d", len(b), len(want), commonPrefix(b, want))
	}
	if s := c.Stats(); s.Written != s.Accepted || s.Queued != 0 {
		t.Fatalf("stats after Close: %+v", s)
	}
}

// A peer that never reads: Close gives up after the linger time (or at
// once for a negative one), closes the connection, which ends the writev
// in flight, and says data was dropped.
func TestConnCloseNonReadingPeer(t *testing.T) {
	for _, linger := range []time.Duration{time.Millisecond, -1} {
		cli, srv := pipe(t)
		c := NewConn(cli, &Options{Linger: linger})
		msg := make([]byte, 512<<10)
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); !errors.Is(err, ErrUnsent) {
			t.Fatalf("linger %v: Close: %v, want ErrUnsent", linger, err)
		}
		s := c.Stats()
		if s.Written != 0 || s.Queued != len(msg) || s.Accepted != int64(len(msg)) {
			t.Errorf("linger %v: stats after Close: %+v", linger, s)
		}
		// The connection is closed: the peer reads EOF.
		if b, err := io.ReadAll(srv); len(b) != 0 || err != nil {
			t.Errorf("linger %v: peer read %d bytes, then %v; want EOF at once", linger, len(b), err)
		}
	}
}

// TestConnWriteAfterClose: a Write after Close fails with ErrClosed, as
// documented, even when Close met a write error sending what was queued.
func TestConnWriteAfterClose(t *testing.T) {
	for _, linger := range []time.Duration{-1, 0} {
		_, server := tcpPair(t)
		c := NewConn(server, &Options{Linger: linger})
		c.Write(bytes.Repeat([]byte("x"), 64<<10))
		c.Close()
		if _, err := c.Write([]byte("after")); !errors.Is(err, ErrClosed) {
			t.Errorf("Linger %v: Write after Close: %v, want ErrClosed", linger, err)
		}
	}
}

// TestConnCloseWakesBlockedWrite: a Write waiting for room when Close
// runs fails with ErrClosed, as later ones do, not with the write error
// of the connection Close closed under it.
func TestConnCloseWakesBlockedWrite(t *testing.T) {
	for _, linger := range []time.Duration{-1, time.Millisecond} {
		cli, _ := pipe(t)
		c := NewConn(cli, &Options{MaxQueued: 64 << 10, Linger: linger})
		blocked := waits(c.w, 1)
		errs := make(chan error, 1)
		go func() {
			for {
				if _, err := c.Write(make([]byte, 8<<10)); err != nil {
					errs <- err
					return
				}
			}
		}()
		<-blocked
		c.Close()
		if err := <-errs; !errors.Is(err, ErrClosed) || !errors.Is(err, net.ErrClosed) {
			t.Errorf("linger %v: the Write waiting for room: %v, want ErrClosed, which matches net.ErrClosed", linger, err)
		}
	}
}

// TestClosedMatchesNetErrClosed: a Conn is a net.Conn, so an I/O call on
// it after Close, or waiting when Close runs, fails with an error matching
// net.ErrClosed, as a *net.TCPConn's does (the oracle), as well as
// ErrClosed; so does a Writer's after its Close.
func TestClosedMatchesNetErrClosed(t *testing.T) {
	_, oracle := tcpPair(t)
	oracle.Close()
	if _, err := oracle.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("oracle: *net.TCPConn Write after Close: %v", err)
	}

	both := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, net.ErrClosed) || !errors.Is(err, ErrClosed) {
			t.Errorf("%s: %v, want an error matching net.ErrClosed and ErrClosed", what, err)
		}
	}
	_, server := tcpPair(t)
	c := NewConn(server, nil)
	c.Close()
	_, err := c.Write([]byte("x"))
	both("Conn.Write after Close", err)
	_, err = c.WriteString("x")
	both("Conn.WriteString after Close", err)
	_, err = c.WriteContext(context.Background(), []byte("x"))
	both("Conn.WriteContext after Close", err)
	_, err = c.ReadFrom(strings.NewReader("x"))
	both("Conn.ReadFrom after Close", err)

	// A Write waiting for room when Close ran: TestConnCloseWakesBlockedWrite.

	w := NewWriter(io.Discard, nil)
	w.Close()
	_, err = w.Write([]byte("x"))
	both("Writer.Write after Close", err)
}

// TestConnCloseTwice: a second Close says the Conn is closed, as a
// net.Conn's does (an error matching net.ErrClosed), whatever the first
// said; it repeated the first's ErrUnsent.
func TestConnCloseTwice(t *testing.T) {
	for _, unsent := range []bool{false, true} {
		cli, srv := pipe(t)
		c := NewConn(cli, &Options{Linger: time.Millisecond})
		if unsent {
			c.WriteString("never read") // the pipe's peer does not read
		}
		first := c.Close()
		if unsent != errors.Is(first, ErrUnsent) {
			t.Fatalf("unsent %v: first Close: %v", unsent, first)
		}
		if err := c.Close(); !errors.Is(err, net.ErrClosed) || errors.Is(err, ErrUnsent) {
			t.Errorf("unsent %v: second Close: %v, want an error matching net.ErrClosed", unsent, err)
		}
		srv.Close()
	}
}

// TestConnCloseDuringClose: a Close made while the first is under way
// (here, from within it, once it has begun) returns ErrClosed at once and
// closes nothing, and the first closes the connection and returns nil.
// The second went through the whole close too: one of the two got the
// connection's own "use of closed network connection" error.
func TestConnCloseDuringClose(t *testing.T) {
	cli, srv := tcpPair(t)
	c := NewConn(cli, nil)
	var second error
	nested := false
	c.SetCloseHook(func() {
		if !nested {
			nested = true
			second = c.Close()
		}
	})
	if _, err := c.WriteString("last"); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("first Close: %v, want nil", err)
	}
	if second != ErrClosed {
		t.Errorf("Close during the first: %v, want ErrClosed", second)
	}
	if got, err := io.ReadAll(srv); string(got) != "last" || err != nil {
		t.Errorf("peer read %q, %v; want %q", got, err, "last")
	}
}

// TestConnFlushDuringClose: a Flush whose writev comes once a Close has
// closed the connection under it returns ErrClosed, as a Write does, not
// the socket's "use of closed network connection" (which matches
// net.ErrClosed but is not netio's error); so does a Flush after that
// Close. The hooks order it: the Flush's writev starts the Close and
// waits until the connection is closed.
func TestConnFlushDuringClose(t *testing.T) {
	cli, srv := tcpPair(t)
	c := NewConn(cli, &Options{Linger: -1})
	// After a Read, Writes are held for the next Read or Flush: the
	// Flush makes the writev, not the flusher.
	if _, err := srv.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteString("never sent"); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	c.SetClosedHook(func() { close(closed) })
	closeErr := make(chan error, 1)
	started := false
	c.Writer().SetFlushHook(func() {
		if !started {
			started = true
			go func() { closeErr <- c.Close() }()
			<-closed
		}
	})
	err := c.Flush()
	if !started {
		t.Fatal("the Flush made no writev")
	}
	if !errors.Is(err, ErrClosed) {
		t.Errorf("Flush during Close: %v, want ErrClosed", err)
	}
	if err := <-closeErr; !errors.Is(err, ErrUnsent) {
		t.Errorf("Close: %v, want ErrUnsent", err)
	}
	if err := c.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close: %v, want ErrClosed", err)
	}
}

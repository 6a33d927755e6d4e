package netio

import (
	"bytes"
	"errors"
	"io"
	"syscall"
	"testing"
	"time"
)

// closeWithin calls c.Close and fails the test if it has not returned within
// limit.
func closeWithin(t *testing.T, c *Conn, limit time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("Close did not return within %v: %+v", limit, c.Stats())
	}
	return nil
}

// A peer that reads: Close sends everything still queued, then closes.
func TestConnCloseCooperativePeer(t *testing.T) {
	cli, srv := tcpPair(t)
	SetSendBuffer(cli, 16<<10)
	SetRecvBuffer(srv, 16<<10)
	c := NewConn(cli, &Options{Linger: 20 * time.Second})
	_, want := messages(11, 2000, 500)
	if _, err := c.Write(want); err != nil {
		t.Fatal(err)
	}
	if c.Stats().Queued == 0 {
		t.Fatal("nothing queued: the test would not exercise Close's flush")
	}
	got := readAll(srv)
	if err := closeWithin(t, c, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("peer got %d bytes, want %d; equal prefix %d", len(b), len(want), commonPrefix(b, want))
	}
	if s := c.Stats(); s.Written != s.Accepted || s.Queued != 0 {
		t.Fatalf("stats after Close: %+v", s)
	}
}

// A peer that never reads: Close gives up after the linger time, closes the
// connection (which ends the writev in flight) and says data was dropped.
func TestConnCloseNonReadingPeer(t *testing.T) {
	for _, linger := range []time.Duration{100 * time.Millisecond, -1} {
		cli, srv := tcpPair(t)
		SetSendBuffer(cli, 16<<10)
		SetRecvBuffer(srv, 16<<10)
		c := NewConn(cli, &Options{Linger: linger})
		msg := make([]byte, 512<<10) // more than the socket buffers hold
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err := closeWithin(t, c, 20*time.Second)
		if !errors.Is(err, ErrUnsent) {
			t.Fatalf("linger %v: Close: %v, want ErrUnsent", linger, err)
		}
		if d := time.Since(start); linger > 0 && d < linger {
			t.Errorf("linger %v: Close returned after %v", linger, d)
		}
		s := c.Stats()
		if s.Written >= s.Accepted || s.Written+int64(s.Queued) != s.Accepted {
			t.Errorf("linger %v: stats after Close: %+v", linger, s)
		}
		// The connection is closed: the peer reads what reached it, then
		// EOF (or a reset).
		srv.SetReadDeadline(time.Now().Add(20 * time.Second))
		n, err := io.Copy(io.Discard, srv)
		if n > s.Written || (err != nil && !isReset(err)) {
			t.Errorf("linger %v: peer read %d bytes (written %d), then %v", linger, n, s.Written, err)
		}
	}
}

func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

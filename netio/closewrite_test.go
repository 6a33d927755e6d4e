package netio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// halfCloser is what a proxy looks for on a connection to half-close it.
type halfCloser interface{ CloseWrite() error }

// TestConnCloseWrite: a Conn half-closes as a *net.TCPConn does. What was
// written, held for the next Read included, reaches the peer before its
// end of stream; the Conn still reads what the peer sends after it; and
// Writes from then on fail with ErrWriteClosed, sending nothing.
func TestConnCloseWrite(t *testing.T) {
	for _, held := range []bool{false, true} {
		name := "queued"
		if held {
			name = "held"
		}
		t.Run(name, func(t *testing.T) {
			cli, srv := tcpPair(t)
			c := NewConn(srv, &Options{MaxHold: 0})
			if held {
				// After a Read, a Write waits for the next Read.
				cli.Write([]byte("q"))
				if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
					t.Fatal(err)
				}
			}
			_, want := messages(3, 200, 3000)
			if _, err := c.Write(want); err != nil {
				t.Fatal(err)
			}
			got := readAll(cli)
			hc, ok := any(c).(halfCloser)
			if !ok {
				t.Fatal("*Conn has no CloseWrite")
			}
			if err := hc.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			if b := <-got; !bytes.Equal(b, want) {
				t.Fatalf("peer got %d bytes before its end of stream, want %d; equal prefix %d", len(b), len(want), commonPrefix(b, want))
			}
			if _, err := c.Write([]byte("late")); !errors.Is(err, ErrWriteClosed) {
				t.Fatalf("Write after CloseWrite: %v, want ErrWriteClosed", err)
			}
			if _, err := c.WriteString("late"); !errors.Is(err, ErrWriteClosed) {
				t.Fatalf("WriteString after CloseWrite: %v, want ErrWriteClosed", err)
			}
			if _, err := c.ReadFrom(bytes.NewReader([]byte("late"))); !errors.Is(err, ErrWriteClosed) {
				t.Fatalf("ReadFrom after CloseWrite: %v, want ErrWriteClosed", err)
			}
			// The reading side is open.
			go func() { cli.Write([]byte("back")); cli.CloseWrite() }()
			b, err := io.ReadAll(c)
			if err != nil || string(b) != "back" {
				t.Fatalf("Read after CloseWrite: %q, %v", b, err)
			}
			if s := c.Stats(); s.Accepted != int64(len(want)) || s.Written != s.Accepted || s.Queued != 0 {
				t.Fatalf("stats: %+v", s)
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close after CloseWrite: %v", err)
			}
		})
	}
}

// TestConnCloseWriteUnsent: when the queue cannot be sent (a peer that
// does not read, a write deadline), CloseWrite fails with the deadline's
// error and shuts nothing: once the peer reads, it gets everything, then
// more Writes, and no end of stream in front of them.
func TestConnCloseWriteUnsent(t *testing.T) {
	tcli, tsrv := tcpPair(t)
	tc := NewConn(tsrv, &Options{MaxQueued: 64 << 20})
	want := make([]byte, 24<<20) // accepted whole, more than the socket buffers take
	for i := range want {
		want[i] = byte(i % 251)
	}
	if _, err := tc.Write(want); err != nil {
		t.Fatal(err)
	}
	tc.SetWriteDeadline(time.Now().Add(-time.Second))
	if err := tc.CloseWrite(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("CloseWrite with the queue stuck: %v, want os.ErrDeadlineExceeded", err)
	}
	tc.SetWriteDeadline(time.Time{})
	got := readAll(tcli)
	if _, err := tc.Write([]byte("more")); err != nil {
		t.Fatalf("Write after a failed CloseWrite: %v", err)
	}
	if err := tc.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, append(want, "more"...)) {
		t.Fatalf("peer got %d bytes, want %d; equal prefix %d", len(b), len(want)+4, commonPrefix(b, want))
	}
}

// TestConnCloseWriteUnsupported: a connection without CloseWrite (a
// net.Pipe) gives errors.ErrUnsupported, and its Writes go on.
func TestConnCloseWriteUnsupported(t *testing.T) {
	cli, srv := pipe(t)
	c := NewConn(srv, nil)
	got := readAll(cli)
	if err := c.CloseWrite(); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("CloseWrite of a net.Pipe: %v, want errors.ErrUnsupported", err)
	}
	if _, err := c.Write([]byte("still")); err != nil {
		t.Fatalf("Write after an unsupported CloseWrite: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "still" {
		t.Fatalf("peer got %q", b)
	}
}

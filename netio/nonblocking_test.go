package netio

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// NonBlocking: a message larger than the current window is accepted whole
// when the queue is empty (the adaptive window may have shrunk to MinWindow),
// and refused with ErrQueueFull otherwise; a message larger than MaxQueued can
// never fit and fails with ErrTooLarge.
func TestNonBlockingLargerThanWindow(t *testing.T) {
	var out bytes.Buffer
	const maxQ = 64 << 10
	w := NewWriter(&out, &Options{MaxQueued: maxQ, MinWindow: 4 << 10, TargetDelay: time.Millisecond, NonBlocking: true})
	w.SetWindow(4 << 10) // as after adapting to a slow peer
	release := w.Stall()

	_, msgs := messages(5, 40, 800) // about 16 KiB
	if len(msgs) <= 4<<10 || len(msgs) > maxQ {
		t.Fatalf("test message of %d bytes", len(msgs))
	}
	if n, err := w.Write(msgs); n != len(msgs) || err != nil {
		t.Fatalf("message of %d bytes, window 4 KiB, empty queue: %d, %v; want it accepted", len(msgs), n, err)
	}
	if n, err := w.Write([]byte("x")); !errors.Is(err, ErrQueueFull) || n != 0 {
		t.Fatalf("Write past the window: %d, %v; want 0, ErrQueueFull", n, err)
	}
	release()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	// Empty again: a message of exactly MaxQueued fits, one byte more never
	// will.
	release = w.Stall()
	if n, err := w.Write(make([]byte, maxQ+1)); !errors.Is(err, ErrTooLarge) || errors.Is(err, ErrQueueFull) || n != 0 {
		t.Fatalf("message larger than MaxQueued: %d, %v; want 0, ErrTooLarge", n, err)
	}
	big := bytes.Repeat([]byte("y"), maxQ)
	if n, err := w.Write(big); n != maxQ || err != nil {
		t.Fatalf("message of MaxQueued bytes, empty queue: %d, %v", n, err)
	}
	if h := w.HeldBytes(); h > maxQ+chunkSize {
		t.Fatalf("holding %d bytes, bound %d", h, maxQ+chunkSize)
	}
	release()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if want := append(msgs, big...); !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("output %d bytes, want %d; equal prefix %d", out.Len(), len(want), commonPrefix(out.Bytes(), want))
	}
}

// TestNonBlockingHeldQueueFull: on a Conn, Writes made between two Reads
// are held for the next Read. A NonBlocking Write refused with ErrQueueFull
// because held Writes fill the queue sends them, as a blocking Write that
// must wait for room does, so that the queue drains while the peer reads
// and no Read comes (a broadcaster writing to a Conn whose reader is busy
// elsewhere); before, nothing was sent until the next Read, and every
// NonBlocking Write failed meanwhile.
func TestNonBlockingHeldQueueFull(t *testing.T) {
	cli, srv := tcpPair(t)
	const maxQ = 4 << 10
	c := NewConnForTest(srv, &Options{MaxQueued: maxQ, NonBlocking: true, Linger: -1}, &FakeHold{})
	defer c.Close()
	cli.Write([]byte("r"))
	if _, err := c.Read(make([]byte, 8)); err != nil { // no Read from now on
		t.Fatal(err)
	}
	_, want := messages(9, 4, 1<<10)
	want = append(want, make([]byte, maxQ-len(want))...)
	if n, err := c.Write(want); n != maxQ || err != nil {
		t.Fatalf("Write of the window: %d, %v", n, err)
	}
	if c.w.FlusherStarted() {
		t.Fatal("the flusher sent a held Write")
	}
	if n, err := c.Write([]byte("x")); n != 0 || !errors.Is(err, ErrQueueFull) {
		t.Fatalf("Write on a queue full of held Writes: %d, %v; want 0, ErrQueueFull", n, err)
	}
	// A bound for a failing test, not a wait for the passing one.
	cli.SetReadDeadline(time.Now().Add(time.Minute))
	got := make([]byte, maxQ)
	if _, err := io.ReadFull(cli, got); err != nil {
		t.Fatalf("peer, with no Read on the Conn: %v (the held Writes were not sent)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("peer received other bytes than the held Writes")
	}
}

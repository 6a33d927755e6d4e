package netio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fillUntilBlocked writes msg in a goroutine until a Write blocks for a
// while; it returns when the writer is stuck, with the bytes accepted so far
// appended to *sent.
func waitQueued(t *testing.T, w *Writer, atLeast int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for w.Stats().Queued < atLeast {
		if time.Now().After(deadline) {
			t.Fatalf("queue never reached %d bytes: %+v", atLeast, w.Stats())
		}
		time.Sleep(time.Millisecond)
	}
}

// A peer that stops reading: memory stays under the bound, blocked writers
// wake when the peer drains, and everything arrives in order.
func TestBackpressureBoundAndWake(t *testing.T) {
	cli, srv := tcpPair(t)
	SetSendBuffer(cli, 16<<10)
	SetRecvBuffer(srv, 16<<10)
	const max = 128 << 10
	w := NewWriter(cli, &Options{MaxQueued: max})
	defer w.Close()

	// Writers push 64-byte messages; the peer is not reading yet.
	const writers, per = 3, 4000
	var (
		mu   sync.Mutex
		sent = map[int][]byte{}
		wg   sync.WaitGroup
	)
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []byte
			for i := 0; i < per; i++ {
				m := bytes.Repeat([]byte{byte('a' + g)}, 63)
				m = append(m, byte(i))
				if _, err := w.Write(m); err != nil {
					t.Error(err)
					return
				}
				mine = append(mine, m...)
			}
			mu.Lock()
			sent[g] = mine
			mu.Unlock()
		}()
	}
	waitQueued(t, w, max/2)
	// Let the writers pile up against the bound, sampling it.
	for i := 0; i < 50; i++ {
		s := w.Stats()
		if s.Queued > max {
			t.Fatalf("queued %d bytes, bound %d", s.Queued, max)
		}
		if h := w.heldBytes(); h > max+chunkSize {
			t.Fatalf("holding %d bytes of chunks, bound %d", h, max+chunkSize)
		}
		time.Sleep(time.Millisecond)
	}
	if s := w.Stats(); s.Accepted >= writers*per*64 {
		t.Fatalf("all writes accepted although the peer reads nothing: %+v", s)
	}
	// Now drain: every blocked writer must finish.
	got := readAll(srv)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("blocked writers did not wake after the peer drained")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cli.CloseWrite()
	b := <-got
	if len(b) != writers*per*64 {
		t.Fatalf("peer got %d bytes, want %d", len(b), writers*per*64)
	}
	// Each writer's messages, filtered out of the interleaving, are its own
	// stream: messages are atomic and ordered per writer.
	per64 := map[byte][]byte{}
	for i := 0; i < len(b); i += 64 {
		per64[b[i]] = append(per64[b[i]], b[i:i+64]...)
	}
	for g := 0; g < writers; g++ {
		if !bytes.Equal(per64[byte('a'+g)], sent[g]) {
			t.Errorf("writer %d: stream differs", g)
		}
	}
}

func (w *Writer) heldBytes() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.chunks) * w.chunk
}

// With the peer stalled: deadlines fire, contexts cancel, NonBlocking fails
// fast, and nothing partial is accepted for a message that fits the window.
func TestBackpressureDeadlineContextNonBlocking(t *testing.T) {
	cli, srv := tcpPair(t)
	SetSendBuffer(cli, 16<<10)
	SetRecvBuffer(srv, 16<<10)
	const max = 64 << 10
	w := NewWriter(cli, &Options{MaxQueued: max})
	msg := make([]byte, 1000)
	// Write until the queue is full and stays full: a Write then hits its
	// deadline, accepting nothing.
	var err error
	for i := 0; err == nil; i++ {
		if i > 100000 {
			t.Fatalf("the queue never filled: %+v", w.Stats())
		}
		w.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		start := time.Now()
		var n int
		n, err = w.Write(msg)
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) || n != 0 {
				t.Fatalf("Write past deadline: %d, %v; want 0, os.ErrDeadlineExceeded", n, err)
			}
			if d := time.Since(start); d < 40*time.Millisecond || d > 10*time.Second {
				t.Fatalf("deadline fired after %v, want about 50ms", d)
			}
		}
	}
	if s := w.Stats(); s.Queued+len(msg) <= max-max/2 {
		t.Fatalf("deadline fired with room in the queue: %+v", s)
	}
	if err := w.Flush(); !errors.Is(err, os.ErrDeadlineExceeded) {
		// The flusher is stuck in writev, so Flush waits and times out.
		t.Fatalf("Flush past deadline: %v", err)
	}
	w.SetWriteDeadline(time.Time{})

	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	// A message as large as the window needs an empty queue: it cannot fit
	// while the peer reads nothing.
	if n, err := w.WriteContext(ctx, make([]byte, max)); !errors.Is(err, context.Canceled) || n != 0 {
		t.Fatalf("WriteContext after cancel: %d, %v", n, err)
	}

	nb := NewWriter(io.Discard, &Options{MaxQueued: 4 << 10, NonBlocking: true})
	nb.busy = true // as if a writev were stuck: nothing drains
	for i := 0; i < 4; i++ {
		if _, err := nb.Write(make([]byte, 1<<10)); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := nb.Write([]byte("x")); !errors.Is(err, ErrQueueFull) || n != 0 {
		t.Fatalf("NonBlocking Write on a full queue: %d, %v", n, err)
	}
	if n, err := nb.Write(make([]byte, 5<<10)); !errors.Is(err, ErrTooLarge) || n != 0 {
		t.Fatalf("NonBlocking Write larger than MaxQueued: %d, %v", n, err)
	}
	nb.mu.Lock()
	nb.busy = false
	nb.kickLocked()
	nb.mu.Unlock()
	if err := nb.Close(); err != nil {
		t.Fatal(err)
	}

	// Closing the connection unblocks the stuck flusher; Close reports it.
	cli.Close()
	if err := w.Close(); err == nil {
		t.Fatal("Close after the connection was closed under a full queue: nil error")
	}
	s := w.Stats()
	if s.Written+int64(s.Queued) != s.Accepted {
		t.Fatalf("accounting: %+v", s)
	}
}

// The peer resets the connection mid-stream: the writer reports the error,
// keeps reporting it, and its accounting is exact: the peer received a
// prefix of what was written, and written + dropped = accepted.
func TestPeerResetMidBatch(t *testing.T) {
	cli, srv := tcpPair(t)
	w := NewWriter(cli, &Options{MaxQueued: 256 << 10})
	defer w.Close()
	_, stream := messages(3, 4000, 1000)

	const readBeforeReset = 300 << 10
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, readBeforeReset)
		n, _ := io.ReadFull(srv, b)
		srv.SetLinger(0) // close with RST
		srv.Close()
		got <- b[:n]
	}()

	var accepted int64
	var werr error
	for off := 0; off < len(stream) && werr == nil; {
		end := min(off+1000, len(stream))
		var n int
		n, werr = w.Write(stream[off:end])
		accepted += int64(n)
		off += n
		if werr == nil && off == len(stream) {
			off = 0 // keep writing the same stream until the reset shows
			stream = append(stream[:0:0], stream...)
		}
	}
	received := <-got
	if !errors.Is(werr, syscall.ECONNRESET) && !errors.Is(werr, syscall.EPIPE) {
		t.Fatalf("error after reset: %v; want ECONNRESET or EPIPE", werr)
	}
	if _, err := w.Write([]byte("more")); !errors.Is(err, werr) && err.Error() != werr.Error() {
		t.Fatalf("error not sticky: %v then %v", werr, err)
	}
	if err := w.Flush(); err == nil {
		t.Fatal("Flush after reset: nil error")
	}
	s := w.Stats()
	if s.Accepted != accepted {
		t.Fatalf("Stats.Accepted %d, Writes returned %d", s.Accepted, accepted)
	}
	if s.Written+int64(s.Queued) != s.Accepted {
		t.Fatalf("written %d + dropped %d != accepted %d", s.Written, s.Queued, s.Accepted)
	}
	if int64(len(received)) > s.Written {
		t.Fatalf("peer received %d bytes, more than the %d written", len(received), s.Written)
	}
	if !bytes.Equal(received, stream[:len(received)]) {
		t.Fatalf("peer received a corrupted prefix (equal for %d of %d bytes)", commonPrefix(received, stream), len(received))
	}
}

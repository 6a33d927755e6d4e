package netio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"time"
)

// gate is a peer that takes nothing until released: every Write blocks
// until release, then succeeds (appending to buf) or fails with the error
// given to release.
type gate struct {
	entered chan struct{} // one token when the first Write blocks
	open    chan struct{}
	once    sync.Once
	err     error
	mu      sync.Mutex
	buf     bytes.Buffer
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}, 1), open: make(chan struct{})}
}

func (g *gate) Write(p []byte) (int, error) {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.open
	if g.err != nil {
		return 0, g.err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

func (g *gate) release(err error) {
	g.once.Do(func() { g.err = err; close(g.open) })
}

// waits returns a channel that receives a token each time a Write on w is
// about to wait for room (up to n tokens are kept).
func waits(w *Writer, n int) <-chan struct{} {
	ch := make(chan struct{}, n)
	w.SetWaitHook(func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	return ch
}

// A peer that takes nothing: writers block at the bound, memory stays
// under it, the blocked writers wake when the peer drains, and every
// writer's messages arrive whole and in order.
func TestBackpressureBoundAndWake(t *testing.T) {
	const maxQ = 128 << 10
	peer := newGate()
	w := NewWriter(peer, &Options{MaxQueued: maxQ})
	blocked := waits(w, 16)

	// Each writer has more to send than the bound, so each must block.
	const writers, per = 3, 4000
	var (
		mu   sync.Mutex
		sent = map[int][]byte{}
		wg   sync.WaitGroup
	)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []byte
			for i := range per {
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
	// Nothing drains until release, so nothing wakes a writer: each waits
	// exactly once. The flusher's writev is stuck in the peer.
	for range writers {
		<-blocked
	}
	<-peer.entered
	s := w.Stats()
	if s.Queued > maxQ || s.Written != 0 || s.Accepted != int64(s.Queued) || s.Flushes != 1 {
		t.Fatalf("all writers blocked: %+v, want at most %d queued, nothing written, one writev in flight", s, maxQ)
	}
	if maxQ-s.Queued >= 64 {
		t.Fatalf("writers blocked with room in the queue: %+v", s)
	}
	if h := w.HeldBytes(); h > maxQ+chunkSize {
		t.Fatalf("holding %d bytes of chunks, bound %d", h, maxQ+chunkSize)
	}

	peer.release(nil)
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := peer.buf.Bytes()
	if len(b) != writers*per*64 {
		t.Fatalf("peer got %d bytes, want %d", len(b), writers*per*64)
	}
	// Each writer's messages, filtered out of the interleaving, are its own
	// stream: messages are atomic and ordered per writer.
	per64 := map[byte][]byte{}
	for i := 0; i < len(b); i += 64 {
		per64[b[i]] = append(per64[b[i]], b[i:i+64]...)
	}
	for g := range writers {
		if !bytes.Equal(per64[byte('a'+g)], sent[g]) {
			t.Errorf("writer %d: stream differs", g)
		}
	}
}

// With the peer stalled: deadlines and contexts end the wait of a Write
// that does not fit, accepting nothing of it; a new deadline wakes a
// blocked Write; NonBlocking fails at once.
func TestBackpressureDeadlineContextNonBlocking(t *testing.T) {
	const maxQ, size = 64 << 10, 1000
	peer := newGate()
	w := NewWriter(peer, &Options{MaxQueued: maxQ})
	blocked := waits(w, 1)
	msg := make([]byte, size)

	// A deadline already past fails a Write only when it would wait: the
	// queue takes exactly what fits.
	w.SetWriteDeadline(time.Now().Add(-time.Second))
	accepted := 0
	for {
		n, err := w.Write(msg)
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) || n != 0 {
				t.Fatalf("Write past deadline: %d, %v; want 0, os.ErrDeadlineExceeded", n, err)
			}
			break
		}
		accepted += n
	}
	<-blocked
	<-peer.entered // the flusher's writev is stuck in the peer
	if accepted != maxQ/size*size {
		t.Fatalf("accepted %d bytes before the deadline, want %d", accepted, maxQ/size*size)
	}
	// The flusher is stuck in writev: Flush waits, and the deadline ends it.
	if err := w.Flush(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Flush past deadline: %v", err)
	}

	// A deadline reached while waiting: the Write's timer fires.
	w.SetWriteDeadline(time.Now().Add(time.Millisecond))
	if n, err := w.Write(msg); !errors.Is(err, os.ErrDeadlineExceeded) || n != 0 {
		t.Fatalf("Write until a deadline: %d, %v; want 0, os.ErrDeadlineExceeded", n, err)
	}
	<-blocked

	// A deadline set while a Write waits (none before) wakes it.
	w.SetWriteDeadline(time.Time{})
	done := make(chan error, 1)
	go func() { _, err := w.Write(msg); done <- err }()
	<-blocked
	w.SetWriteDeadline(time.Now().Add(-time.Second))
	if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write woken by a past deadline: %v", err)
	}
	w.SetWriteDeadline(time.Time{})

	// A context cancelled while WriteContext waits. A message as large as
	// the window needs an empty queue: it cannot fit while the peer takes
	// nothing.
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		n   int
		err error
	}
	ctxDone := make(chan result, 1)
	go func() { n, err := w.WriteContext(ctx, make([]byte, maxQ)); ctxDone <- result{n, err} }()
	<-blocked
	cancel()
	if r := <-ctxDone; !errors.Is(r.err, context.Canceled) || r.n != 0 {
		t.Fatalf("WriteContext after cancel: %d, %v", r.n, r.err)
	}
	if s := w.Stats(); s.Accepted != int64(accepted) {
		t.Fatalf("failed writes accepted something: %+v, want %d accepted", s, accepted)
	}

	nb := NewWriter(io.Discard, &Options{MaxQueued: 4 << 10, NonBlocking: true})
	release := nb.Stall()
	for range 4 {
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
	release()
	if err := nb.Close(); err != nil {
		t.Fatal(err)
	}

	// The peer fails the stuck writev: Close reports that error, and the
	// accounting holds.
	lost := errors.New("connection lost")
	peer.release(lost)
	if err := w.Close(); !errors.Is(err, lost) {
		t.Fatalf("Close after the peer failed: %v, want %v", err, lost)
	}
	s := w.Stats()
	if s.Written != 0 || int64(s.Queued) != s.Accepted {
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
	if !isResetWrite(werr) {
		t.Fatalf("error after reset: %v; want ECONNRESET or EPIPE", werr)
	}
	if _, err := w.Write([]byte("more")); !errors.Is(err, werr) {
		t.Fatalf("error not sticky: %v then %v", werr, err)
	}
	if err := w.Flush(); !errors.Is(err, werr) {
		t.Fatalf("Flush after reset: %v, want %v", err, werr)
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

// TestConnWriteDeadlineRefresh: a write deadline that passes while the
// peer does not read fails the Writes, Flush included, with
// os.ErrDeadlineExceeded; as on a *net.TCPConn (the oracle), a new
// deadline lets the connection go on, and the peer then receives every
// byte the Writes accepted, in order, with no gap where the deadline
// passed (mid-writev, most likely).
func TestConnWriteDeadlineRefresh(t *testing.T) {
	ocli, osrv := tcpPair(t)
	osrv.SetWriteDeadline(time.Now().Add(-time.Second))
	if _, err := osrv.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("oracle: Write past deadline: %v", err)
	}
	osrv.SetWriteDeadline(time.Time{})
	if _, err := osrv.Write([]byte("y")); err != nil {
		t.Fatalf("oracle: Write after a new deadline: %v", err)
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(ocli, b); err != nil || b[0] != 'y' {
		t.Fatalf("oracle: peer read %q, %v", b, err)
	}

	cli, srv := tcpPair(t)
	c := NewConn(srv, &Options{MaxQueued: 64 << 10})
	defer c.Close()
	_, stream := messages(5, 64, 4000)
	var sent []byte
	// A deadline may pass while the kernel still takes what is queued:
	// then Flush succeeds. Once the socket is full, it cannot.
	for {
		c.SetWriteDeadline(time.Now().Add(20 * time.Millisecond))
		for {
			n, err := c.Write(stream)
			sent = append(sent, stream[:n]...)
			if err != nil {
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("Write past the deadline: %v", err)
				}
				break
			}
		}
		err := c.Flush()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatalf("Flush past the deadline: %v", err)
		}
	}

	c.SetWriteDeadline(time.Time{})
	got := readAll(cli)
	n, err := c.Write([]byte("after"))
	sent = append(sent, "after"[:n]...)
	if err != nil {
		t.Fatalf("Write after a new deadline: %v", err)
	}
	if err := c.Flush(); err != nil {
		t.Fatalf("Flush after a new deadline: %v", err)
	}
	if s := c.Stats(); s.Written != int64(len(sent)) || s.Accepted != s.Written || s.Queued != 0 {
		t.Errorf("stats %+v, want %d bytes accepted and written", s, len(sent))
	}
	srv.CloseWrite()
	if r := <-got; !bytes.Equal(r, sent) {
		t.Fatalf("peer received %d bytes, equal to the %d accepted for %d", len(r), len(sent), commonPrefix(r, sent))
	}
}

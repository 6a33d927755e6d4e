package netio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

var (
	_ net.Conn        = (*Conn)(nil)
	_ io.StringWriter = (*Conn)(nil)
	_ io.ReaderFrom   = (*Conn)(nil)
	_ io.StringWriter = (*Writer)(nil)
	_ io.ReaderFrom   = (*Writer)(nil)
)

// A Conn is a net.Conn whose writes go through a coalescing [Writer]. Its
// Read sends what is queued when it is about to wait (see [Conn.Read]);
// everything else goes straight to the wrapped connection.
type Conn struct {
	net.Conn
	w    *Writer
	r    rawReader
	rbuf *[]byte // ReadPooled's buffer, until its next call
}

// NewConn wraps c. If opt is nil, defaults apply.
func NewConn(c net.Conn, opt *Options) *Conn {
	nc := &Conn{Conn: c, w: NewWriter(c, opt)}
	nc.r.init(nc)
	if w := nc.w; w.opt.MaxHold > 0 {
		// Made here, stopped: making it on the first hold would allocate
		// deep in the connection goroutine's stack.
		w.hold = w.afterFunc(w.opt.MaxHold, w.holdExpired)
		w.hold.Stop()
	}
	return nc
}

// Read reads from the connection. Once Read has been called, a Write made
// while no Read is in progress is held for the next Read, which sends
// everything queued with one writev, in the calling goroutine, before it
// can wait for data: on a *net.TCPConn before reading if the last read
// drained the socket (returned less than its buffer), else when the socket
// has nothing more to read; elsewhere before reading. So a
// request/response server runs no flusher goroutine, and the responses to
// requests read in one go leave together. Writes made while a Read waits,
// and what a full socket does not take, go to the flusher goroutine.
//
// So a handler that writes and then waits for something other than this
// connection must Flush first (or set Options.MaxHold): what it wrote
// waits for its next Read, Flush or Close.
func (c *Conn) Read(p []byte) (int, error) {
	pending, drained := c.w.beginRead()
	var n int
	var err error
	switch {
	case !pending || len(p) == 0:
		n, err = c.Conn.Read(p)
	case c.r.ok:
		n, _, err = c.r.read(p, true, drained)
	default:
		c.w.flushForRead()
		n, err = c.Conn.Read(p)
	}
	c.w.endRead(n < len(p))
	return n, err
}

// ReadPooled is Read into a buffer of its own, taken from a pool once the
// socket has data (on a *net.TCPConn; elsewhere before reading), so a
// connection waiting for data holds no read buffer. The bytes returned, at
// most 16 KiB, are valid until the next ReadPooled; as with Read, check
// them before the error. Calls must not overlap.
func (c *Conn) ReadPooled() ([]byte, error) {
	if c.rbuf != nil {
		putRead(c.rbuf)
		c.rbuf = nil
	}
	pending, drained := c.w.beginRead()
	var n int
	var err error
	if c.r.ok {
		n, c.rbuf, err = c.r.read(nil, pending, drained)
		drained = n < chunkSize
	} else {
		if pending {
			c.w.flushForRead()
		}
		c.rbuf = getRead()
		n, err = c.Conn.Read((*c.rbuf)[:cap(*c.rbuf)])
		if n == 0 {
			putRead(c.rbuf)
			c.rbuf = nil
		}
	}
	c.w.endRead(drained)
	if c.rbuf == nil {
		return nil, err
	}
	return (*c.rbuf)[:n], err
}

// Write queues a copy of p; see [Writer.Write].
func (c *Conn) Write(p []byte) (int, error) { return c.w.Write(p) }

// WriteString queues a copy of s; see [Writer.WriteString].
func (c *Conn) WriteString(s string) (int, error) { return c.w.WriteString(s) }

// WriteContext queues a copy of p, waiting for room until ctx is done.
func (c *Conn) WriteContext(ctx context.Context, p []byte) (int, error) {
	return c.w.WriteContext(ctx, p)
}

// Flush waits until everything written so far is in the kernel. If Close
// closes the connection before that (during this Flush, or before it with
// data left unsent), it returns ErrClosed, as a Write would.
func (c *Conn) Flush() error { return c.w.Flush() }

// Writer returns the coalescing writer of c.
func (c *Conn) Writer() *Writer { return c.w }

// Stats returns the writer's counters.
func (c *Conn) Stats() Stats { return c.w.Stats() }

// SetWriteDeadline bounds both waiting for queue space and the writev
// system calls of the flusher. As on a net.Conn, a write that failed for
// the deadline does not fail the Conn after a new SetWriteDeadline (see
// [Writer.SetWriteDeadline]): what it did not write is still queued.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	err := c.Conn.SetWriteDeadline(t) // first: the Writer may write at once
	c.w.SetWriteDeadline(t)
	return err
}

// SetDeadline sets the read and write deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	err := c.Conn.SetDeadline(t)
	c.w.SetWriteDeadline(t)
	return err
}

// ReadFrom flushes the queue, then copies r to the connection, with
// sendfile or splice where the kernel allows, in steps that Close stops:
// it returns ErrClosed (see [Writer.ReadFrom]).
func (c *Conn) ReadFrom(r io.Reader) (int64, error) { return c.w.ReadFrom(r) }

// Close waits up to Options.Linger (default [DefaultLinger]) for the queue
// to reach the kernel, then closes the connection, which also ends a writev
// blocked on a peer that does not read, and stops the writer. It returns nil
// when everything written went out and the connection closed cleanly;
// [ErrUnsent] when it closed with data still queued (linger over, or
// negative); the write deadline's os.ErrDeadlineExceeded if that came first;
// or the writer's earlier write error. A Close after the first returns
// ErrClosed (which matches net.ErrClosed), as on a net.Conn.
func (c *Conn) Close() error {
	if !c.w.beginConnClose() {
		// As a net.Conn's second Close: whatever the first said, even
		// while the first is still under way.
		return ErrClosed
	}
	if c.w.closeHook != nil {
		c.w.closeHook()
	}
	var err error
	if linger := c.w.opt.Linger; linger > 0 && !c.w.idle() {
		ctx, cancel := context.WithTimeout(context.Background(), linger)
		err = c.w.FlushContext(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			err = ErrUnsent
		}
	}
	c.w.shutWrites()
	cerr := c.Conn.Close()
	if c.w.closedHook != nil {
		c.w.closedHook()
	}
	c.w.Close() // quick now: a writev on the closed connection fails at once
	if err == nil && c.w.Stats().Queued > 0 {
		err = ErrUnsent // negative Linger, or written by others meanwhile
	}
	if err == nil {
		err = cerr
	}
	return err
}

// CloseWrite sends what is queued, then shuts down the writing side of
// the wrapped connection (its CloseWrite: *net.TCPConn, *net.UnixConn and
// *tls.Conn have one), so that the peer reads the end of the stream while
// this side still reads: a proxy's half-close, or a client that ends its
// request. Writes from then on fail with ErrWriteClosed. The queue is
// sent as by Flush (bounded by the write deadline); if that fails,
// CloseWrite returns the error and shuts nothing, so the peer never reads
// an end of stream in front of data it was sent, and Writes go on as
// before. A connection without CloseWrite gives an error matching
// errors.ErrUnsupported.
func (c *Conn) CloseWrite() error {
	cw, ok := c.Conn.(interface{ CloseWrite() error })
	if !ok {
		return fmt.Errorf("netio: CloseWrite of a %T: %w", c.Conn, errors.ErrUnsupported)
	}
	c.w.setWriteShut(true) // Writes from now on are not sent
	if err := c.w.Flush(); err != nil {
		c.w.setWriteShut(false)
		return err
	}
	return cw.CloseWrite()
}

// setWriteShut makes Writes, those waiting for room included, fail with
// ErrWriteClosed, or lets them go on again.
func (w *Writer) setWriteShut(shut bool) {
	w.mu.Lock()
	w.writeShut = shut
	w.broadcastLocked()
	w.mu.Unlock()
}

// shutWrites makes Writes, those waiting for room included, fail with
// ErrClosed from now on, before Close closes the connection under them
// (whose write error they would report otherwise).
func (w *Writer) shutWrites() {
	w.mu.Lock()
	w.shut = true
	w.broadcastLocked()
	w.mu.Unlock()
}

// beginConnClose marks Conn.Close begun and reports whether this call is
// the first. The first also stops a ReadFrom in progress, as Writer.Close
// does, without waiting for its write (a ReadFrom waiting for its source
// does not hold Close): Conn.Close bounds that wait by the linger time,
// then ends it by closing the connection.
func (w *Writer) beginConnClose() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.connClose {
		return false
	}
	w.connClose = true
	w.closing = true
	w.stopCopyLocked(false)
	return true
}

// idle reports whether the writer has nothing queued or in flight and no
// error: Close has nothing to wait for.
func (w *Writer) idle() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queued == 0 && !w.busy && w.err == nil
}

// readPool holds ReadPooled's buffers. It has no New: on a socket, a miss
// is met in rawReader.read, higher up the stack than the read callback.
var readPool sync.Pool

// getRead and putRead take and return ReadPooled's buffers.
func getRead() *[]byte {
	if b, _ := readPool.Get().(*[]byte); b != nil {
		return b
	}
	b := make([]byte, 0, chunkSize)
	return &b
}

func putRead(b *[]byte) {
	*b = (*b)[:0]
	readPool.Put(b)
}

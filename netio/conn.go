package netio

import (
	"context"
	"errors"
	"io"
	"net"
	"time"
)

// A Conn is a net.Conn whose writes go through a coalescing [Writer]. Reads
// and everything else go straight to the wrapped connection.
type Conn struct {
	net.Conn
	w *Writer
}

// NewConn wraps c. If opt is nil, defaults apply.
func NewConn(c net.Conn, opt *Options) *Conn {
	return &Conn{Conn: c, w: NewWriter(c, opt)}
}

// Write queues a copy of p; see [Writer.Write].
func (c *Conn) Write(p []byte) (int, error) { return c.w.Write(p) }

// WriteString queues a copy of s; see [Writer.WriteString].
func (c *Conn) WriteString(s string) (int, error) { return c.w.WriteString(s) }

// WriteContext queues a copy of p, waiting for room until ctx is done.
func (c *Conn) WriteContext(ctx context.Context, p []byte) (int, error) {
	return c.w.WriteContext(ctx, p)
}

// Flush waits until everything written so far is in the kernel.
func (c *Conn) Flush() error { return c.w.Flush() }

// Writer returns the coalescing writer of c.
func (c *Conn) Writer() *Writer { return c.w }

// Stats returns the writer's counters.
func (c *Conn) Stats() Stats { return c.w.Stats() }

// SetWriteDeadline bounds both waiting for queue space and the writev
// system calls of the flusher.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.w.SetWriteDeadline(t)
	return c.Conn.SetWriteDeadline(t)
}

// SetDeadline sets the read and write deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	c.w.SetWriteDeadline(t)
	return c.Conn.SetDeadline(t)
}

// ReadFrom flushes the queue, then copies r to the connection, with
// sendfile or splice where the kernel allows (see [Copy]).
func (c *Conn) ReadFrom(r io.Reader) (int64, error) { return c.w.ReadFrom(r) }

// Close flushes the queue (bounded by the write deadline, if one is set),
// stops the writer and closes the connection. It returns the first error.
func (c *Conn) Close() error {
	err := c.w.Close()
	if cerr := c.Conn.Close(); err == nil || errors.Is(err, net.ErrClosed) {
		err = cerr
	}
	return err
}

//go:build unix && (netio_portable || !linux)

package netio

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestLoopsPausedDetachReset: the portable loops' watch of a paused
// connection takes the peer's reset from the socket (SO_ERROR); when the
// connection is detached just then, the detached connection's reads end
// with that reset after the unused input, not with a clean end of stream
// (the socket's reads, its error taken, end so).
func TestLoopsPausedDetachReset(t *testing.T) {
	paused := make(chan *LoopConn, 1)
	s := startLoops(t, func(c *LoopConn, in []byte) int {
		c.SetReading(false)
		paused <- c
		return 0
	}, &LoopOptions{Loops: 1})
	cc := dial(t, s)
	cc.Write([]byte("hello"))
	lc := <-paused
	type result struct {
		b   []byte
		err error
	}
	got := make(chan result, 1)
	lc.Do(func(c *LoopConn) {
		cc.SetLinger(0)
		cc.Close() // RST
		// The loop is here, so the watch's report waits in its tasks.
		for {
			c.l.mu.Lock()
			n := len(c.l.tasks)
			c.l.mu.Unlock()
			if n > 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		nc, err := c.Detach()
		if err != nil {
			got <- result{err: err}
			return
		}
		go func() {
			defer nc.Close()
			b, err := io.ReadAll(nc)
			got <- result{b, err}
		}()
	})
	r := <-got
	var op *net.OpError
	if string(r.b) != "hello" || !errors.Is(r.err, syscall.ECONNRESET) || !errors.As(r.err, &op) || op.Op != "read" {
		t.Fatalf("detached, read %q, %v; want %q, then net.Conn's read error, ECONNRESET", r.b, r.err, "hello")
	}
}

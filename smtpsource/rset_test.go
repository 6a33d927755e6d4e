package smtpsource

import (
	"bytes"
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// spentConn is a client connection whose deadline runs out the moment a
// read returns the bytes of trigger: a reply that came just before the
// deadline, with no time left after it. A read or a write is then a
// timeout, until a deadline is set anew. So a test has a late reply
// without a real-time window: nothing depends on how fast it runs.
type spentConn struct {
	net.Conn
	trigger []byte
	mu      sync.Mutex
	spent   bool
}

func spentDial(trigger string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &spentConn{Conn: c, trigger: []byte(trigger)}, nil
	}
}

func (c *spentConn) timeout(op string) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.ErrDeadlineExceeded}
}

func (c *spentConn) isSpent() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spent
}

func (c *spentConn) Read(p []byte) (int, error) {
	if c.isSpent() {
		return 0, c.timeout("read")
	}
	n, err := c.Conn.Read(p)
	if bytes.Contains(p[:n], c.trigger) {
		c.mu.Lock()
		c.spent = true
		c.mu.Unlock()
	}
	return n, err
}

func (c *spentConn) Write(p []byte) (int, error) {
	if c.isSpent() {
		return 0, c.timeout("write")
	}
	return c.Conn.Write(p)
}

func (c *spentConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.spent = false
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *spentConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.spent = false
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

// A refusal that comes just before the message's Timeout runs out: the
// RSET (-d, after a refused RCPT or DATA) or QUIT after it is an exchange of its own, with a Timeout
// of its own, and the refused message is one error, its refusal. Before,
// the RSET ran under what was left of the message's time and timed out
// at once: a second error (an I/O error, "rset: ... timeout") for the
// one refused message, and the kept connection lost, the next message
// going out on a new one.
func TestRefusalAtTimeout(t *testing.T) {
	for _, verb := range []string{"MAIL", "RCPT", "DATA", "."} {
		for _, reuse := range []bool{true, false} {
			name := replyPhase[verb] + "/reuse=false"
			if reuse {
				name = replyPhase[verb] + "/reuse=true"
			}
			t.Run(name, func(t *testing.T) {
				first := true
				var mu sync.Mutex
				f := &fakeServer{reply: func(v, arg string) string {
					mu.Lock()
					defer mu.Unlock()
					if v == verb && first {
						first = false
						return "550 5.7.1 refused at the last moment"
					}
					return ""
				}}
				cfg := base(f.start(t))
				cfg.Messages, cfg.Reuse = 2, reuse
				res, err := RunWith(context.Background(), cfg, spentDial("550 5.7.1 refused at the last moment"), nil)
				if err != nil {
					t.Fatal(err)
				}
				accounted(t, res)
				phase := replyPhase[verb]
				if res.Delivered != 1 || res.Failed != 1 || res.Errors != 1 || res.Rejections != 1 || res.Replies[phase][550] != 1 ||
					!strings.Contains(res.FirstError, "550 5.7.1") {
					t.Fatalf("delivered %d, failed %d, errors %d (I/O %d, rejections %d), first %q; want 1, 1, 1 (0, 1), the 550",
						res.Delivered, res.Failed, res.Errors, res.IOErrors, res.Rejections, res.FirstError)
				}
				// A refused RCPT or DATA leaves a transaction to reset; a
				// refused MAIL or end of data none.
				rsets := int64(0)
				if reuse && (verb == "RCPT" || verb == "DATA") {
					rsets = 1
				}
				if reuse && res.Connections != 1 || res.Replies["rset"][250] != rsets {
					t.Errorf("%d connections, RSET replies %v; want 1 (-d), %d 250", res.Connections, res.Replies["rset"], rsets)
				}
			})
		}
	}
}

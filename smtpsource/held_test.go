package smtpsource

import (
	"context"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"
)

// heldConn is a client connection whose deadlines are held off until the
// server stalls on it where the test means it to: until then a deadline
// the client sets is a minute away on the socket (a guard against a
// hang), and from the stall on the deadlines the client set apply as it
// set them. A server that answers nothing, or cuts a line short, has the
// client wait for the rest: its deadlines apply at once. One that stalls
// after an answer has the client read the answer first: its write
// deadline applies at once (to a write already blocked too), its read
// deadline from its next write on. So a Timeout of milliseconds runs out
// at the stall, not in an exchange before it, however slowly those go
// on a loaded machine.
type heldConn struct {
	net.Conn
	mu      sync.Mutex
	held    bool
	atWrite bool      // release at the next write
	rd, wd  time.Time // the deadlines the client set
}

func (c *heldConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	w := c.atWrite
	c.mu.Unlock()
	if w {
		c.release()
	}
	return c.Conn.Write(p)
}

func (c *heldConn) SetDeadline(t time.Time) error      { return c.set(t, true, true) }
func (c *heldConn) SetReadDeadline(t time.Time) error  { return c.set(t, true, false) }
func (c *heldConn) SetWriteDeadline(t time.Time) error { return c.set(t, false, true) }

func (c *heldConn) set(t time.Time, read, write bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if read {
		c.rd = t
	}
	if write {
		c.wd = t
	}
	if c.held && !t.IsZero() {
		t = time.Now().Add(time.Minute)
	}
	switch {
	case read && write:
		return c.Conn.SetDeadline(t)
	case read:
		return c.Conn.SetReadDeadline(t)
	}
	return c.Conn.SetWriteDeadline(t)
}

// release applies the deadlines the client set, and those it sets later
// as it sets them.
func (c *heldConn) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held, c.atWrite = false, false
	c.Conn.SetReadDeadline(c.rd)
	c.Conn.SetWriteDeadline(c.wd)
}

// answered is the stall after an answer: the write deadline now, the
// rest at the next write.
func (c *heldConn) answered() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held {
		c.atWrite = true
		c.Conn.SetWriteDeadline(c.wd)
	}
}

// SyscallConn is the socket's, so that the client looks at the socket as
// it does undisguised (pending).
func (c *heldConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, syscall.EINVAL
	}
	return sc.SyscallConn()
}

// holder dials heldConns and releases each when f stalls on it.
type holder struct {
	mu      sync.Mutex
	conns   map[string]*heldConn // by the client's address
	stalled map[string]bool      // stalls on connections not yet known: answered
}

// holdDeadlines makes f's stalls release the deadlines of the run's
// connections (see heldConn). Call it before f.start.
func holdDeadlines(f *fakeServer) *holder {
	h := &holder{conns: map[string]*heldConn{}, stalled: map[string]bool{}}
	f.stalls = func(client net.Addr, answered bool) {
		h.mu.Lock()
		c := h.conns[client.String()]
		if c == nil { // the server stalls before the dial has returned
			h.stalled[client.String()] = answered
		}
		h.mu.Unlock()
		switch {
		case c == nil:
		case answered:
			c.answered()
		default:
			c.release()
		}
	}
	return h
}

// run is runOK with the deadlines held.
func (h *holder) run(t *testing.T, cfg Config) *Result {
	t.Helper()
	dial := dialer(&cfg)
	res, err := RunWith(context.Background(), cfg, func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(true) // as the client sets it on a connection it sees is TCP
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		a := nc.LocalAddr().String()
		answered, stalled := h.stalled[a]
		delete(h.stalled, a)
		c := &heldConn{Conn: nc, held: !stalled || answered, atWrite: stalled && answered}
		h.conns[a] = c
		return c, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	accounted(t, res)
	return res
}

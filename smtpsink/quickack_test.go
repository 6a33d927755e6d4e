package smtpsink

import (
	"bufio"
	"net"
	"strings"
	"sync/atomic"
	"testing"
)

// ackCounter counts the quick-ACK requests of a session.
type ackCounter struct{ n atomic.Int64 }

func (a *ackCounter) hook() func() { return func() { a.n.Add(1) } }

// pipeClient drives a pipeSession. net.Pipe's Write returns only when the
// sink has read all of it, and the sink may reply in between: send
// writes from a goroutine, and each send waits for the one before.
type pipeClient struct {
	t       *testing.T
	c       net.Conn
	br      *bufio.Reader
	written chan error
}

func newPipeClient(t *testing.T, cfg Config, h hooks) *pipeClient {
	c, br, _ := pipeSession(t, cfg, h)
	p := &pipeClient{t: t, c: c, br: br, written: make(chan error, 1)}
	p.written <- nil
	return p
}

func (p *pipeClient) send(s string) {
	p.t.Helper()
	if err := <-p.written; err != nil {
		p.t.Fatal(err)
	}
	go func() { _, err := p.c.Write([]byte(s)); p.written <- err }()
}

// expect reads one reply, all its lines, and checks that its last line
// starts with prefix.
func (p *pipeClient) expect(prefix string) {
	p.t.Helper()
	for {
		line, err := p.br.ReadString('\n')
		if err != nil {
			p.t.Fatal(err)
		}
		if len(line) >= 4 && line[3] == '-' {
			continue
		}
		if !strings.HasPrefix(line, prefix) {
			p.t.Fatalf("got %q, want %s", line, prefix)
		}
		return
	}
}

// A message that takes several reads asks for quick ACKs once, before its
// second read, and commands never do; a message read in one read does
// not (net.Pipe hands each Write to one Read, so the reads are exact).
func TestQuickAckDuringData(t *testing.T) {
	body := strings.Repeat("a line of a message\r\n", 50) // 1050 bytes
	for _, tc := range []struct {
		name    string
		readBuf int
		min     int64 // ACK requests for the data, at least
		max     int64 // and at most
	}{
		{"one read", 0, 0, 0},
		{"many reads", 64, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var acks ackCounter
			p := newPipeClient(t, Config{}, hooks{readBuf: tc.readBuf, ackNow: acks.hook()})
			p.send("EHLO c\r\n")
			p.expect("250 ")
			p.send("MAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\nDATA\r\n")
			p.expect("250 2.1.0")
			p.expect("250 2.1.5")
			p.expect("354 ")
			if n := acks.n.Load(); n != 0 {
				t.Fatalf("%d ACK requests before the data", n)
			}
			p.send(body + ".\r\n")
			p.expect("250 2.0.0 Ok: queued")
			n := acks.n.Load()
			if n < tc.min || n > tc.max {
				t.Errorf("%d ACK requests for the data, want %d to %d", n, tc.min, tc.max)
			}
			p.send("NOOP\r\n")
			p.expect("250 ")
			if m := acks.n.Load(); m != n {
				t.Errorf("%d ACK requests after the data, want none", m-n)
			}
		})
	}
}

// So does a BDAT chunk.
func TestQuickAckDuringBDAT(t *testing.T) {
	var acks ackCounter
	p := newPipeClient(t, Config{}, hooks{readBuf: 64, ackNow: acks.hook()})
	p.send("EHLO c\r\n")
	p.expect("250 ")
	p.send("MAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\nBDAT 1000 LAST\r\n" + strings.Repeat("x", 1000))
	p.expect("250 2.1.0")
	p.expect("250 2.1.5")
	p.expect("250 2.0.0 Ok: queued")
	if n := acks.n.Load(); n != 1 {
		t.Errorf("%d ACK requests for a 1000-byte chunk read 64 bytes at a time, want 1", n)
	}
	p.send("QUIT\r\n")
	p.expect("221 ")
}

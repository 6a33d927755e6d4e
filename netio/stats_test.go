//go:build unix

package netio

import (
	"bufio"
	"bytes"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestLoopsStats drives each cause of a close through the public API, one
// connection at a time, and checks the counts after each.
func TestLoopsStats(t *testing.T) {
	clk := newFakeClock()
	closed := make(chan error, 1)
	waiting := make(chan struct{}, 1)
	detached := make(chan net.Conn, 1)
	h := func(c *LoopConn, in []byte) int {
		used := 0
		for {
			k := bytes.IndexByte(in[used:], '\n')
			if k < 0 {
				if c.EOF() {
					c.Close()
				}
				return used
			}
			line := in[used : used+k+1]
			used += k + 1
			switch string(line) {
			case "quit\n":
				c.Close()
				return len(in)
			case "panic\n":
				panic("on purpose")
			case "deadline\n":
				c.SetDeadline(clk.Now().Add(time.Minute))
			case "detach\n":
				if nc, err := c.Detach(); err == nil {
					detached <- nc
				}
				return used
			case "big\n":
				c.Write(bytes.Repeat([]byte("b"), 1<<20))
			default:
				c.Write(line)
			}
		}
	}
	opt := &LoopOptions{Loops: 2, IdleTimeout: time.Hour, WriteTimeout: time.Minute, MaxInput: 1 << 10,
		OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetLoopClock(opt, clk.Now)
	SetSentHook(opt, func(out, written int) {
		if written < out {
			waiting <- struct{}{}
		}
	})
	s := serveOn(t, listenTCP(t, map[int]int{syscall.SO_SNDBUF: 16 << 10}), h, opt)
	var want LoopStats
	check := func(step string) {
		t.Helper()
		if got := s.Stats(); got != want {
			t.Fatalf("after %s: Stats\n%+v, want\n%+v", step, got, want)
		}
	}
	// open dials a connection and waits until it is served.
	open := func() (*net.TCPConn, *bufio.Reader) {
		c := dialSmallWindow(t, s)
		r := bufio.NewReader(c)
		roundTrip(t, r, c)
		want.Accepted++
		want.Open++
		check("accept")
		return c, r
	}
	closes := func(step string, count *int64) {
		t.Helper()
		<-closed
		*count++
		want.Open--
		check(step)
	}
	check("start")

	c, _ := open()
	c.Write([]byte("quit\n"))
	closes("quit", &want.Closed.Handler)

	c, _ = open()
	c.CloseWrite() // the echo closes at the end of the stream
	closes("end of stream", &want.Closed.Peer)

	c, _ = open()
	c.SetLinger(0)
	c.Close() // a reset
	closes("reset", &want.Closed.Peer)

	open()
	clk.advance(s, time.Hour)
	closes("idle", &want.Closed.Idle)

	c, r := open()
	c.Write([]byte("deadline\n"))
	c.Write([]byte("ping\n"))
	r.ReadString('\n') // the deadline is set
	clk.advance(s, time.Minute)
	closes("deadline", &want.Closed.Deadline)

	c, _ = open()
	c.Write(bytes.Repeat([]byte("x"), 2<<10)) // no newline: more than MaxInput unused
	closes("input too large", &want.Closed.InputTooLarge)

	c, _ = open()
	c.Write([]byte("panic\n"))
	closes("panic", &want.Closed.Error)

	c, _ = open()
	c.Write([]byte("detach\n"))
	(<-detached).Close()
	<-closed
	want.Detached++
	want.Open--
	check("detach")

	c, _ = open() // and never read
	c.Write([]byte("big\n"))
	<-waiting
	s.Sync() // the loop has queued what the socket did not take
	if q := s.Stats().Queued; q <= 0 || q >= 1<<20 {
		t.Fatalf("Queued %d while 1 MiB is written to a peer that does not read", q)
	}
	// The kernel may still move bytes into the peer's receive buffer after
	// the loop's last write: progress, which puts the timeout off
	// (peerTook); a single minute's advance left the test waiting.
	advanceToWriteTimeout(t, s, clk, time.Minute, closed)
	want.Closed.WriteTimeout++
	want.Open--
	check("write timeout")

	open()
	open()
	go s.Close()
	<-closed
	<-closed
	want.Closed.Server += 2
	want.Open -= 2
	s.Close()
	check("Close")
	if got := want.Closed.Total(); got != want.Accepted-want.Detached {
		t.Fatalf("Total %d, want %d", got, want.Accepted-want.Detached)
	}
}

//go:build unix

package smtpsink

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// spinSignal returns hooks whose spinEmpty signals the channel (at most one
// signal pending).
func spinSignal() (hooks, chan struct{}) {
	spun := make(chan struct{}, 1)
	return hooks{spinEmpty: func() {
		select {
		case spun <- struct{}{}:
		default:
		}
	}}, spun
}

// A spinning session serves a whole conversation, pipelined group and
// message data included, from reads that polled the socket: the first
// command is sent only once the sink has found the socket empty, and with
// an hour to spin it never waits for input any other way.
func TestSpinSession(t *testing.T) {
	var got messages
	h, spun := spinSignal()
	s := startSink(t, Config{Spin: time.Hour, OnMessage: got.add}, h)
	c := dial(t, s)
	<-spun
	c.cmd(250, "EHLO c")
	c.send("MAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\nDATA\r\n")
	if codes := c.codes(3); codes != "250 250 354" {
		t.Errorf("pipelined group: %s", codes)
	}
	c.send("hello\r\n..dot\r\n.\r\n")
	c.expect(250)
	c.cmd(221, "QUIT")
	c.raw.Close()
	s.Close()
	m := got.all()
	if len(m) != 1 || m[0].Size != int64(len("hello\r\n.dot\r\n")) || m[0].From != "a@b" {
		t.Errorf("messages %+v", m)
	}
}

// When the spin is over the session waits for input as without it.
func TestSpinThenWait(t *testing.T) {
	h, spun := spinSignal()
	s := startSink(t, Config{Spin: time.Nanosecond}, h)
	c := dial(t, s)
	<-spun // the spin is over: the sink waits in the poller
	c.cmd(250, "EHLO c")
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(221, "QUIT")
	if st := s.Stats(); st.Sessions != 1 {
		t.Errorf("stats %+v", st)
	}
}

// A peer that leaves while the sink spins ends the session; so does a
// read deadline (Timeout), which also ends the spin.
func TestSpinEnds(t *testing.T) {
	ends := make(chan SessionInfo, 2)
	h, spun := spinSignal()
	s := startSink(t, Config{Spin: time.Hour, OnSessionEnd: func(i SessionInfo) { ends <- i }}, h)
	c := dial(t, s)
	<-spun
	c.raw.Close()
	if i := <-ends; i.Quit {
		t.Errorf("left without QUIT: %+v", i)
	}

	h, spun = spinSignal()
	s = startSink(t, Config{Spin: time.Hour, Timeout: time.Millisecond, OnSessionEnd: func(i SessionInfo) { ends <- i }}, h)
	c = dial(t, s)
	<-spun
	if i := <-ends; i.Quit { // an hour's spin ended at the deadline
		t.Errorf("timed out: %+v", i)
	}
}

// Close ends a spinning session with 421.
func TestSpinClose(t *testing.T) {
	h, spun := spinSignal()
	s := startSink(t, Config{Spin: time.Hour}, h)
	c := dial(t, s)
	<-spun
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	c.expect(421)
	if err := <-closed; err != nil {
		t.Error(err)
	}
}

// Only TCP connections spin, and only with a positive Spin; a negative one
// is refused.
func TestSpinConfig(t *testing.T) {
	s := newServer(Config{Spin: time.Second}, hooks{})
	p, q := net.Pipe()
	defer p.Close()
	defer q.Close()
	if r := newSpinner(p, s); r != nil {
		t.Errorf("net.Pipe spins: %T", r)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if r := newSpinner(tc, s); r == nil {
		t.Error("TCP with Spin: no spinner")
	}
	if r := newSpinner(tc, newServer(Config{}, hooks{})); r != nil {
		t.Error("TCP without Spin spins")
	}
	_, err = Listen(context.Background(), Config{Addr: "127.0.0.1:0", Spin: -time.Second})
	if err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("Spin -1s: %v", err)
	}
}

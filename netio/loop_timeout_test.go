//go:build unix

package netio

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A fakeClock is a loop clock that moves only when the test says.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

// advance moves the clock by d and makes s's loops look at it.
func (f *fakeClock) advance(s *Loops, d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
	s.Sync() // every loop has looked at the clock and its timeouts
}

// roundTrip checks that c is still served by the echo handler.
func roundTrip(t *testing.T, r *bufio.Reader, w io.Writer) {
	t.Helper()
	w.Write([]byte("ping\n"))
	if line, err := r.ReadString('\n'); line != "ping\n" {
		t.Fatalf("round trip: %q, %v", line, err)
	}
}

// TestLoopsIdleTimeout: a connection that sends nothing for IdleTimeout is
// closed with ErrIdleTimeout; input read moves the timeout on.
func TestLoopsIdleTimeout(t *testing.T) {
	clk := newFakeClock()
	closed := make(chan error, 1)
	opt := &LoopOptions{IdleTimeout: 5 * time.Minute, OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetLoopClock(opt, clk.Now)
	s := startLoops(t, echo, opt)
	c := dial(t, s)
	r := bufio.NewReader(c)
	roundTrip(t, r, c)
	clk.advance(s, 4*time.Minute)
	roundTrip(t, r, c) // input at 4 min: idle until 9
	clk.advance(s, 4*time.Minute+59*time.Second)
	roundTrip(t, r, c)
	select {
	case err := <-closed:
		t.Fatalf("closed (%v) before its idle timeout", err)
	default:
	}
	clk.advance(s, 5*time.Minute)
	if err := <-closed; !errors.Is(err, ErrIdleTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("OnClose learned %v, want ErrIdleTimeout", err)
	}
	if _, err := r.ReadByte(); err != io.EOF {
		t.Fatalf("the client read %v after the idle timeout, want EOF", err)
	}
}

// TestLoopsNoTimeouts: negative timeouts are none.
func TestLoopsNoTimeouts(t *testing.T) {
	clk := newFakeClock()
	closed := make(chan error, 1)
	opt := &LoopOptions{IdleTimeout: -1, WriteTimeout: -1, OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetLoopClock(opt, clk.Now)
	s := startLoops(t, echo, opt)
	c := dial(t, s)
	r := bufio.NewReader(c)
	roundTrip(t, r, c)
	clk.advance(s, 1000*time.Hour)
	roundTrip(t, r, c)
	select {
	case err := <-closed:
		t.Fatalf("closed (%v) with no timeouts", err)
	default:
	}
}

// TestLoopsHugeTimeouts: timeouts as long as a Duration holds are
// none in practice: adding one to the loop's clock does not overflow
// into a time already past (a deadline set after some time had passed
// rescheduled the connection at its idle time, wrapped negative, and
// closed it at once with ErrIdleTimeout).
func TestLoopsHugeTimeouts(t *testing.T) {
	clk := newFakeClock()
	closed := make(chan error, 1)
	opt := &LoopOptions{Loops: 1, IdleTimeout: math.MaxInt64, WriteTimeout: math.MaxInt64,
		HandshakeTimeout: math.MaxInt64, DialTimeout: math.MaxInt64,
		OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetLoopClock(opt, clk.Now)
	h := func(c *LoopConn, in []byte) int {
		c.SetDeadline(c.Now().Add(time.Hour))
		return echo(c, in)
	}
	s := startLoops(t, h, opt)
	c := dial(t, s)
	r := bufio.NewReader(c)
	clk.advance(s, time.Second)
	roundTrip(t, r, c)
	clk.advance(s, time.Second)
	roundTrip(t, r, c)
	select {
	case err := <-closed:
		t.Fatalf("closed (%v) with timeouts of 292 years", err)
	default:
	}
}

// TestLoopsWriteTimeout: output that waits for room with no progress for
// WriteTimeout closes the connection with ErrWriteTimeout, whatever the
// idle timeout.
func TestLoopsWriteTimeout(t *testing.T) {
	clk := newFakeClock()
	closed := make(chan error, 1)
	waiting := make(chan struct{})
	var once sync.Once
	opt := &LoopOptions{IdleTimeout: time.Hour, WriteTimeout: time.Minute,
		OnOpen:  func(c *LoopConn) { c.Write(bytes.Repeat([]byte("w"), 1<<20)) },
		OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetSentHook(opt, func(out, written int) {
		if written < out {
			once.Do(func() { close(waiting) })
		}
	})
	SetLoopClock(opt, clk.Now)
	s := serveOn(t, listenTCP(t, map[int]int{syscall.SO_SNDBUF: 16 << 10}), echo, opt)
	dialSmallWindow(t, s) // and never read
	<-waiting
	clk.advance(s, 59*time.Second)
	select {
	case err := <-closed:
		t.Fatalf("closed (%v) before the write timeout", err)
	default:
	}
	advanceToWriteTimeout(t, s, clk, time.Second, closed)
}

// advanceToWriteTimeout moves clk on a step at a time until OnClose
// (which sends to closed) learns ErrWriteTimeout. The output of a peer
// that reads nothing may still move on for a while after it first
// waited, in the loop's time, as the peer's acknowledgements free the
// socket's buffer (heard of late on the portable loops); each such
// progress puts the timeout off, but not for long. It returns what
// OnClose learned.
func advanceToWriteTimeout(t *testing.T, s *Loops, clk *fakeClock, step time.Duration, closed <-chan error) error {
	t.Helper()
	for waited := time.Duration(0); waited < 10*time.Minute; waited += step {
		clk.advance(s, step)
		select {
		case err := <-closed:
			if !errors.Is(err, ErrWriteTimeout) {
				t.Fatalf("OnClose learned %v, want ErrWriteTimeout", err)
			}
			return err
		default:
		}
	}
	t.Fatal("a peer that never reads outlived the write timeout by ten minutes")
	return nil
}

// TestLoopsDeadline: a deadline for a complete command, set at each
// command, ends a peer that drips bytes (which the idle timeout never
// would), after OnTimeout's farewell.
func TestLoopsDeadline(t *testing.T) {
	clk := newFakeClock()
	closed := make(chan error, 1)
	h := func(c *LoopConn, in []byte) int {
		k := bytes.LastIndexByte(in, '\n') + 1
		if k > 0 {
			c.Write(in[:k])
			c.SetDeadline(clk.Now().Add(30 * time.Second))
		}
		return k
	}
	opt := &LoopOptions{
		OnOpen:    func(c *LoopConn) { c.SetDeadline(clk.Now().Add(30 * time.Second)) },
		OnTimeout: func(c *LoopConn, err error) { c.WriteString("421 timeout\r\n") },
		OnClose:   func(c *LoopConn, err error) { closed <- err },
	}
	SetLoopClock(opt, clk.Now)
	s := startLoops(t, h, opt)
	c := dial(t, s)
	r := bufio.NewReader(c)
	roundTrip(t, r, c)
	// One byte every 10 s: never idle, but no line in 30 s.
	for i := range 3 {
		c.Write([]byte("x"))
		clk.advance(s, 10*time.Second)
		if i < 2 {
			select {
			case err := <-closed:
				t.Fatalf("closed (%v) after %d s", err, 10*(i+1))
			default:
			}
		}
	}
	if line, err := r.ReadString('\n'); line != "421 timeout\r\n" {
		t.Fatalf("got %q, %v; want OnTimeout's farewell", line, err)
	}
	if _, err := r.ReadByte(); err != io.EOF {
		t.Fatalf("read %v after the farewell, want EOF", err)
	}
	// The server may linger for the dripped input to end.
	c.Close()
	if err := <-closed; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("OnClose learned %v, want os.ErrDeadlineExceeded", err)
	}
}

// TestLoopsOnWritable: a producer refused with ErrQueueFull is told when
// it can write again, and what it writes all arrives.
func TestLoopsOnWritable(t *testing.T) {
	const total = 8 << 20
	chunk := bytes.Repeat([]byte("q"), 16<<10)
	sent := 0
	writable := 0
	push := func(c *LoopConn) {
		for sent < total {
			if _, err := c.Write(chunk); err != nil {
				if !errors.Is(err, ErrQueueFull) {
					c.Close()
				}
				return
			}
			sent += len(chunk)
		}
		c.Close()
	}
	opt := &LoopOptions{MaxQueued: 64 << 10, OnOpen: push,
		OnWritable: func(c *LoopConn) { writable++; push(c) }}
	s := startLoops(t, echo, opt)
	c := dialSmallWindow(t, s)
	n, err := io.Copy(io.Discard, c)
	if err != nil || n != total {
		t.Fatalf("received %d bytes, %v; want %d", n, err, total)
	}
	s.Close()
	if writable == 0 {
		t.Fatal("OnWritable never ran")
	}
}

// TestLoopsShutdown: Shutdown stops accepting at once, sends what is
// queued, closes idle connections, and returns when all are closed.
func TestLoopsShutdown(t *testing.T) {
	conns := make(chan *LoopConn, 2)
	closed := make(chan error, 2)
	waiting := make(chan struct{})
	var once sync.Once
	opt := &LoopOptions{OnOpen: func(c *LoopConn) { conns <- c }, OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetSentHook(opt, func(out, written int) {
		if written < out {
			once.Do(func() { close(waiting) })
		}
	})
	s := serveOn(t, listenTCP(t, map[int]int{syscall.SO_SNDBUF: 16 << 10}), echo, opt)
	idle := dial(t, s)
	<-conns
	busy := dialSmallWindow(t, s)
	lb := <-conns
	big := bytes.Repeat([]byte("s"), 1<<20)
	lb.Do(func(c *LoopConn) { c.Write(big) })
	<-waiting
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	if _, err := idle.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle connection: %v, want EOF", err)
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) with output still queued", err)
	default:
	}
	got, err := io.ReadAll(busy)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("busy connection got %d bytes, %v; want all %d queued", len(got), err, len(big))
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for range 2 {
		if err := <-closed; err != nil {
			t.Fatalf("OnClose learned %v, want nil", err)
		}
	}
	if c, err := dialErr(s); err == nil {
		c.Close()
		t.Fatal("the listener still accepts after Shutdown")
	}
}

// TestLoopsShutdownOnShutdown: with OnShutdown, a connection whose reply
// a worker still owes stays until the worker's Do closes it; a context
// that ends first closes what is left.
func TestLoopsShutdownOnShutdown(t *testing.T) {
	conns := make(chan *LoopConn, 2)
	closed := make(chan error, 2)
	told := make(chan *LoopConn, 2)
	opt := &LoopOptions{
		OnOpen:     func(c *LoopConn) { conns <- c },
		OnClose:    func(c *LoopConn, err error) { closed <- err },
		OnShutdown: func(c *LoopConn) { told <- c },
	}
	s := startLoops(t, echo, opt)
	a, b := dial(t, s), dial(t, s)
	la, lb := <-conns, <-conns
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(ctx) }()
	<-told
	<-told
	la.Do(func(c *LoopConn) { c.WriteString("reply\n"); c.Close() })
	if got, err := io.ReadAll(a); string(got) != "reply\n" || err != nil {
		t.Fatalf("got %q, %v; want the worker's reply", got, err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("OnClose: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) with a connection open", err)
	default:
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown: %v, want context.Canceled", err)
	}
	if err := <-closed; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("the connection left: %v, want ErrServerClosed", err)
	}
	if _, err := b.Read(make([]byte, 1)); err == nil {
		t.Fatal("the connection left is still open")
	}
	_ = lb
}

func dialErr(s *Loops) (net.Conn, error) { return net.Dial("tcp", s.Addr().String()) }

// TestLoopsSetReading: a connection that is not read gets no Handler
// call, whatever its peer sends, until reading is on again: then the
// Handler has all of it, and EOF after it.
func TestLoopsSetReading(t *testing.T) {
	conns := make(chan *LoopConn, 1)
	var got []byte
	eof := make(chan []byte, 1)
	h := func(c *LoopConn, in []byte) int {
		got = append(got, in...)
		if c.EOF() {
			eof <- got
		}
		return len(in)
	}
	s := startLoops(t, h, &LoopOptions{OnOpen: func(c *LoopConn) {
		c.SetReading(false)
		conns <- c
	}})
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	lc := <-conns
	want := bytes.Repeat([]byte("r"), 200<<10)
	nc.Write(want)
	nc.(*net.TCPConn).CloseWrite()
	s.Sync() // the loop has had the chance to read, twice
	s.Sync()
	read := make(chan int, 1)
	lc.Do(func(c *LoopConn) { read <- len(got) })
	if n := <-read; n != 0 {
		t.Fatalf("%d bytes read while reading was off", n)
	}
	lc.Do(func(c *LoopConn) { c.SetReading(true) })
	if b := <-eof; !bytes.Equal(b, want) {
		t.Fatalf("read %d bytes, want %d", len(b), len(want))
	}
}

// TestLoopsNotifyWritable: a Handler that asks is told once its output
// has been sent, on the same turn if the socket took it all.
func TestLoopsNotifyWritable(t *testing.T) {
	told := make(chan int, 4)
	queued := -1
	h := func(c *LoopConn, in []byte) int {
		c.Write(in)
		c.NotifyWritable()
		return len(in)
	}
	s := startLoops(t, h, &LoopOptions{OnWritable: func(c *LoopConn) {
		queued = c.Queued()
		told <- queued
	}})
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write([]byte("ping"))
	if q := <-told; q != 0 {
		t.Errorf("OnWritable with %d bytes still queued", q)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(nc, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("%q %v", buf, err)
	}
	s.Sync()
	select {
	case <-told:
		t.Error("OnWritable ran twice for one request")
	default:
	}
}

// TestLoopsShutdownOnShutdownLate: a connection a loop takes while it
// drains (accepted just before Shutdown, handed over just after) is told
// of the Shutdown too, and so can end on its own terms, as the others.
func TestLoopsShutdownOnShutdownLate(t *testing.T) {
	conns := make(chan *LoopConn, 2)
	told := make(chan *LoopConn, 2)
	opt := &LoopOptions{
		Loops:      1,
		OnOpen:     func(c *LoopConn) { conns <- c },
		OnShutdown: func(c *LoopConn) { told <- c },
	}
	s := startLoops(t, echo, opt)
	a := dial(t, s)
	la := <-conns
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	if c := <-told; c != la {
		t.Fatal("OnShutdown for another connection")
	}
	// A connection of the test's own, handed to the draining loop.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.HandOff(srv.(*net.TCPConn)); err != nil {
		t.Fatal(err)
	}
	srv.Close() // the loop has its own descriptor
	lb := <-conns
	if c := <-told; c != lb {
		t.Fatal("OnShutdown for another connection")
	}
	for _, c := range []*LoopConn{la, lb} {
		c.Do(func(c *LoopConn) { c.WriteString("bye\n"); c.Close() })
	}
	for _, nc := range []net.Conn{a, peer} {
		if got, err := io.ReadAll(nc); string(got) != "bye\n" || err != nil {
			t.Fatalf("got %q, %v; want the farewell", got, err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestLoopsIdleNotRead: the idle timeout counts only while a connection
// is read: not while SetReading(false) holds it (though the peer sends),
// and not after the peer's end of stream, while replies still go out.
func TestLoopsIdleNotRead(t *testing.T) {
	clk := newFakeClock()
	conns := make(chan *LoopConn, 2)
	closed := make(chan error, 2)
	eof := make(chan struct{}, 2)
	given := make(chan int, 64) // how much input each call had
	h := func(c *LoopConn, in []byte) int {
		if c.EOF() {
			eof <- struct{}{}
		}
		if len(in) > 0 {
			given <- len(in)
		}
		return len(in) // no close at EOF: it answers later, by Do
	}
	opt := &LoopOptions{IdleTimeout: 200 * time.Millisecond,
		OnOpen:  func(c *LoopConn) { conns <- c },
		OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetLoopClock(opt, clk.Now)
	s := startLoops(t, h, opt)
	noClose := func(what string) {
		t.Helper()
		select {
		case err := <-closed:
			t.Fatalf("%s: closed with %v", what, err)
		default:
		}
	}

	// Not read for 600 ms, the peer sending.
	held := dial(t, s)
	lh := <-conns
	onLoop(t, lh, func(c *LoopConn) { c.SetReading(false) })
	for range 6 {
		held.Write([]byte("more\n"))
		clk.advance(s, 100*time.Millisecond)
	}
	noClose("not read")
	onLoop(t, lh, func(c *LoopConn) { c.SetReading(true) })
	for n := 0; n < 6*len("more\n"); n += <-given {
		// The input held is read, at 600 ms: on the portable loops, by
		// reads that may end after SetReading(true) has returned.
	}
	clk.advance(s, 199*time.Millisecond)
	noClose("read again, 199 ms")
	clk.advance(s, time.Millisecond)
	if err := <-closed; !errors.Is(err, ErrIdleTimeout) {
		t.Fatalf("read again and idle: %v, want ErrIdleTimeout", err)
	}

	// After the peer's end of stream, replies going out for 600 ms.
	ended := dial(t, s)
	le := <-conns
	ended.CloseWrite()
	<-eof
	r := bufio.NewReader(ended)
	for i := range 6 {
		clk.advance(s, 100*time.Millisecond)
		le.Do(func(c *LoopConn) { fmt.Fprintf(c, "reply %d\n", i) })
		if line, err := r.ReadString('\n'); line != fmt.Sprintf("reply %d\n", i) {
			t.Fatalf("reply %d after EOF: %q, %v", i, line, err)
		}
	}
	noClose("after EOF")
}

// TestLoopsShutdownStopsAccepting: Shutdown stops accepting at once, even
// while every loop is busy: a dial after it is refused, and no new
// connection is opened.
func TestLoopsShutdownStopsAccepting(t *testing.T) {
	conns := make(chan *LoopConn, 4)
	stopped := make(chan struct{})
	opt := &LoopOptions{Loops: 1, OnOpen: func(c *LoopConn) { conns <- c }}
	SetStoppedHook(opt, func() { close(stopped) })
	s := startLoops(t, echo, opt)
	dial(t, s)
	lc := <-conns
	running, release := make(chan struct{}), make(chan struct{})
	lc.Do(func(*LoopConn) { close(running); <-release })
	<-running // the only loop is busy
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	<-stopped
	if c, err := dialErr(s); err == nil {
		c.Close()
		t.Error("a dial after Shutdown was accepted")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case <-conns:
		t.Fatal("a connection dialled after Shutdown was opened")
	default:
	}
}

// TestLoopsShutdownAcceptQuiet: a loop that is still accepting when
// Shutdown shuts the listener (here it opens a connection meanwhile)
// finds the listener shut, and accept fails: that is the listener's end,
// not an error for OnAcceptError.
func TestLoopsShutdownAcceptQuiet(t *testing.T) {
	opened, stopped := make(chan struct{}), make(chan struct{})
	var first sync.Once
	errs := make(chan error, 8)
	opt := &LoopOptions{
		Loops: 1,
		OnOpen: func(*LoopConn) {
			first.Do(func() {
				close(opened)
				<-stopped // the listener is shut meanwhile
			})
		},
		OnAcceptError: func(err error) { errs <- err },
	}
	SetStoppedHook(opt, func() { close(stopped) })
	s := startLoops(t, echo, opt)
	dial(t, s)
	<-opened
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case err := <-errs:
		t.Fatalf("OnAcceptError during Shutdown: %v", err)
	default:
	}
}

// TestLoopConnNow: in a call, Now is the loop's clock at its wake-up, not
// read again as the clock moves during the call; outside a call on the
// connection (here, another connection's Handler) it is the clock; the
// next wake-up reads the clock anew.
func TestLoopConnNow(t *testing.T) {
	clk := newFakeClock()
	t0 := clk.Now()
	type seen struct{ at, later, other time.Time }
	got := make(chan seen, 2)
	opened := make(chan *LoopConn, 2)
	var first *LoopConn
	h := func(c *LoopConn, in []byte) int {
		var s seen
		s.at = c.Now()
		clk.mu.Lock()
		clk.t = clk.t.Add(time.Second) // time passes during the call
		clk.mu.Unlock()
		s.later, s.other = c.Now(), first.Now()
		got <- s
		return len(in)
	}
	opt := &LoopOptions{Loops: 1, OnOpen: func(c *LoopConn) {
		if first == nil {
			first = c
		}
		opened <- c
	}}
	SetLoopClock(opt, clk.Now)
	s := startLoops(t, h, opt)
	dial(t, s)
	<-opened
	b := dial(t, s)
	<-opened
	for i, want := range []time.Time{t0, t0.Add(time.Second)} {
		b.Write([]byte("x"))
		g := <-got
		if !g.at.Equal(want) || !g.later.Equal(want) {
			t.Errorf("call %d: Now %v, then %v after the clock moved; want %v both times", i, g.at, g.later, want)
		}
		if next := want.Add(time.Second); !g.other.Equal(next) {
			t.Errorf("call %d: another connection's Now %v, want the clock's %v", i, g.other, next)
		}
	}
}

// TestLoopsDeadlineAfterWrite passes a connection's deadline right after
// its Handler wrote a reply, in the same call or from a timer at once:
// the reply is sent before the connection closes, as SetDeadline says,
// and OnClose learns the deadline alone. The portable loops closed the
// socket while their writing goroutine still held the reply (the peer
// read a clean end and nothing).
func TestLoopsDeadlineAfterWrite(t *testing.T) {
	for _, later := range []bool{false, true} {
		t.Run(fmt.Sprintf("timer=%v", later), func(t *testing.T) {
			for range 10 {
				closed := make(chan error, 1)
				s := startLoops(t, func(c *LoopConn, in []byte) int {
					c.WriteString("bye")
					if later {
						c.AfterFunc(0, func(c *LoopConn) { c.SetDeadline(time.Now()) })
					} else {
						c.SetDeadline(time.Now())
					}
					return len(in)
				}, &LoopOptions{Loops: 1, OnClose: func(_ *LoopConn, err error) { closed <- err }})
				cc := dial(t, s)
				cc.Write([]byte("a"))
				got, err := io.ReadAll(cc)
				if string(got) != "bye" || err != nil {
					t.Fatalf("the peer read %q, %v; want the reply and the end", got, err)
				}
				if err := <-closed; !errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, ErrUnsent) {
					t.Fatalf("OnClose learned %v, want the deadline alone", err)
				}
				s.Close()
			}
		})
	}
}

// TestLoopsTimeoutRefusesEscape: OnTimeout cannot keep the connection
// from closing by taking it away: Detach and StartTLS fail there with
// ErrClosed (the connection closes whatever OnTimeout does), the farewell
// is still sent, and OnClose learns the timeout. Detach used to succeed
// and hand the client to a goroutine, the timeout void, OnClose learning
// ErrDetached; StartTLS used to start a handshake that the close then
// failed.
func TestLoopsTimeoutRefusesEscape(t *testing.T) {
	for _, which := range []string{"Detach", "StartTLS"} {
		t.Run(which, func(t *testing.T) {
			clk := newFakeClock()
			closed := make(chan error, 1)
			refused := make(chan error, 1)
			opt := &LoopOptions{
				IdleTimeout: time.Minute,
				OnTimeout: func(c *LoopConn, err error) {
					c.WriteString("421 idle\r\n")
					if which == "Detach" {
						nc, err := c.Detach()
						if nc != nil {
							go nc.Close()
						}
						refused <- err
					} else {
						refused <- c.StartTLS(&tls.Config{})
					}
				},
				OnClose: func(c *LoopConn, err error) { closed <- err },
			}
			SetLoopClock(opt, clk.Now)
			s := startLoops(t, echo, opt)
			c := dial(t, s)
			r := bufio.NewReader(c)
			roundTrip(t, r, c)
			clk.advance(s, 2*time.Minute)
			if err := <-refused; !errors.Is(err, ErrClosed) {
				t.Fatalf("%s in OnTimeout: %v, want ErrClosed", which, err)
			}
			all, err := io.ReadAll(r)
			if string(all) != "421 idle\r\n" || err != nil {
				t.Fatalf("client read %q, %v; want the farewell and EOF", all, err)
			}
			if err := <-closed; !errors.Is(err, ErrIdleTimeout) {
				t.Fatalf("OnClose learned %v, want ErrIdleTimeout", err)
			}
			if st := s.Stats(); st.Closed.Idle != 1 || st.Detached != 0 {
				t.Fatalf("stats %+v, want one idle close and no detach", st)
			}
		})
	}
}

// A Close whose output the peer does not take before the write timeout
// tells OnClose so: the timeout, with ErrUnsent (it said the timeout
// alone, though OnClose's doc promises ErrUnsent after Close when the
// peer did not take all of the output in time).
func TestLoopsCloseWriteTimeoutUnsent(t *testing.T) {
	clk := newFakeClock()
	closed := make(chan error, 1)
	waiting := make(chan struct{})
	var once sync.Once
	opt := &LoopOptions{IdleTimeout: time.Hour, WriteTimeout: time.Minute,
		OnOpen: func(c *LoopConn) {
			c.Write(bytes.Repeat([]byte("w"), 1<<20))
			c.Close()
		},
		OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetSentHook(opt, func(out, written int) {
		if written < out {
			once.Do(func() { close(waiting) })
		}
	})
	SetLoopClock(opt, clk.Now)
	s := serveOn(t, listenTCP(t, map[int]int{syscall.SO_SNDBUF: 16 << 10}), echo, opt)
	dialSmallWindow(t, s) // and never read
	<-waiting
	err := advanceToWriteTimeout(t, s, clk, time.Second, closed)
	if !errors.Is(err, ErrUnsent) {
		t.Errorf("OnClose learned %v, want ErrUnsent with the write timeout", err)
	}
	if st := s.Stats(); st.Closed.WriteTimeout != 1 {
		t.Errorf("Stats.Closed %+v, want the close counted as a write timeout", st.Closed)
	}
}

// A deadline that passes while a Close waits for its output changes
// nothing: OnTimeout is not called, and a peer that does not take the
// output by the write timeout makes OnClose learn ErrUnsent, as after a
// Close without a deadline. The deadline called OnTimeout and replaced
// Close's nil: OnClose learned the write timeout without ErrUnsent.
func TestLoopsCloseDeadlineUnsent(t *testing.T) {
	clk := newFakeClock()
	closed := make(chan error, 1)
	timedOut := make(chan error, 1)
	waiting := make(chan struct{})
	var once sync.Once
	opt := &LoopOptions{IdleTimeout: time.Hour, WriteTimeout: time.Minute,
		OnOpen: func(c *LoopConn) {
			c.SetDeadline(clk.Now().Add(10 * time.Second))
			c.Write(bytes.Repeat([]byte("w"), 1<<20))
			c.Close()
		},
		OnTimeout: func(c *LoopConn, err error) {
			select {
			case timedOut <- err:
			default:
			}
		},
		OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetSentHook(opt, func(out, written int) {
		if written < out {
			once.Do(func() { close(waiting) })
		}
	})
	SetLoopClock(opt, clk.Now)
	s := serveOn(t, listenTCP(t, map[int]int{syscall.SO_SNDBUF: 16 << 10}), echo, opt)
	dialSmallWindow(t, s) // and never read
	<-waiting
	clk.advance(s, 20*time.Second) // past the deadline, short of the write timeout
	s.Sync()
	select {
	case err := <-timedOut:
		t.Errorf("OnTimeout(%v) for a connection Close closes", err)
	default:
	}
	if err := advanceToWriteTimeout(t, s, clk, time.Second, closed); !errors.Is(err, ErrUnsent) {
		t.Errorf("OnClose learned %v, want ErrUnsent with the write timeout", err)
	}
}

// OnTimeout's farewell that the peer does not take by the write timeout,
// or that its reset cuts short, is output lost: OnClose learns
// ErrUnsent, with the timeout that closed the connection and what cut
// the farewell short, and Stats counts the close under the timeout that
// closed it (Idle or Deadline), as a MaxInput close is counted as
// InputTooLarge. After the write timeout, OnClose learned the write
// timeout alone, without ErrUnsent, and the close counted as a write
// timeout; after the reset, it learned neither timeout, and the close
// counted as the peer's.
func TestLoopsFarewellUnsent(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deadline bool
		why      error
		count    func(LoopCloses) int64
	}{
		{"idle", false, ErrIdleTimeout, func(c LoopCloses) int64 { return c.Idle }},
		{"deadline", true, os.ErrDeadlineExceeded, func(c LoopCloses) int64 { return c.Deadline }},
	} {
		for _, reset := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/reset=%v", tc.name, reset), func(t *testing.T) {
				clk := newFakeClock()
				closed := make(chan error, 1)
				timedOut := make(chan error, 1)
				opened := make(chan struct{})
				waiting := make(chan struct{})
				var once sync.Once
				opt := &LoopOptions{IdleTimeout: 10 * time.Second, WriteTimeout: time.Minute,
					OnOpen: func(c *LoopConn) {
						if tc.deadline {
							c.SetDeadline(clk.Now().Add(5 * time.Second))
						}
						close(opened)
					},
					OnTimeout: func(c *LoopConn, err error) {
						timedOut <- err
						c.Write(bytes.Repeat([]byte("421 farewell\r\n"), 1<<16))
					},
					OnClose: func(c *LoopConn, err error) { closed <- err }}
				SetSentHook(opt, func(out, written int) {
					if written < out {
						once.Do(func() { close(waiting) })
					}
				})
				SetLoopClock(opt, clk.Now)
				s := serveOn(t, listenTCP(t, map[int]int{syscall.SO_SNDBUF: 16 << 10}), echo, opt)
				c := dialSmallWindow(t, s) // which reads nothing
				<-opened
				clk.advance(s, 20*time.Second)
				if err := <-timedOut; err != tc.why {
					t.Fatalf("OnTimeout learned %v, want %v", err, tc.why)
				}
				<-waiting
				var err error
				if reset {
					c.SetLinger(0)
					c.Close()
					err = <-closed
				} else {
					err = advanceToWriteTimeout(t, s, clk, time.Second, closed)
				}
				if !errors.Is(err, ErrUnsent) || !errors.Is(err, tc.why) {
					t.Errorf("OnClose learned %v, want %v and ErrUnsent", err, tc.why)
				}
				if st := s.Stats(); tc.count(st.Closed) != 1 || st.Closed.Total() != 1 {
					t.Errorf("Stats.Closed %+v, want the close counted as %s", st.Closed, tc.name)
				}
			})
		}
	}
}

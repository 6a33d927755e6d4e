//go:build linux

package netio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// waitInq waits until the kernel holds n unread bytes on c: the test's way
// to have pipelined requests all arrive before the server reads.
func waitInq(t *testing.T, c *net.TCPConn, n int) {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for {
		var inq int
		var ierr error
		if err := rc.Control(func(fd uintptr) { inq, ierr = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); err != nil || ierr != nil {
			t.Fatal(err, ierr)
		}
		if inq >= n {
			return
		}
		runtime.Gosched()
	}
}

// Request/response: the response written between two Reads is sent by the
// second Read, with one writev, no flusher goroutine and no timer. The last
// response, which no Read follows, waits for Flush; with Options.MaxHold, for
// the hold timer, which hands it to the flusher.
func TestConnReadSendsHeld(t *testing.T) {
	for _, timer := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "maxhold"}[timer], func(t *testing.T) {
			cli, srv := tcpPair(t)
			hold := &FakeHold{}
			var opt Options
			if timer {
				opt.MaxHold = time.Second // fired by the test
			}
			c := NewConnForTest(srv, &opt, hold)
			defer c.Close()
			req := make([]byte, 4)
			done := make(chan error, 1)
			go func() {
				for i := 0; i < 3; i++ {
					if _, err := io.ReadFull(c, req); err != nil {
						done <- err
						return
					}
					if _, err := c.Write(bytes.ToUpper(req)); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			resp := make([]byte, 4)
			for i, r := range []string{"abc\n", "def\n", "ghi\n"} {
				if _, err := cli.Write([]byte(r)); err != nil {
					t.Fatal(err)
				}
				if i == 2 {
					// The last response is held: no Read follows.
					if err := <-done; err != nil {
						t.Fatal(err)
					}
					if s := c.Stats(); s.Flushes != 2 || s.Queued != 4 {
						t.Fatalf("stats %+v before the last response was sent", s)
					}
					if armed, _ := hold.Armed(); armed != timer {
						t.Fatalf("hold timer armed: %v", armed)
					}
					if timer {
						hold.Fire()
					} else if err := c.Flush(); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := io.ReadFull(cli, resp); err != nil || string(resp) != strings.ToUpper(r) {
					t.Fatalf("response %d: %q, %v", i, resp, err)
				}
			}
			c.Flush() // the flusher counts its writev once it returns
			if s := c.Stats(); s.Flushes != 3 || s.Written != 12 {
				t.Fatalf("stats %+v, want 3 writev of 12 bytes", s)
			}
			// Only the expired hold starts the flusher.
			if c.Writer().FlusherStarted() != timer {
				t.Fatalf("flusher started: %v", !timer)
			}
			want := 0
			if timer {
				want = 3
			}
			if _, arms := hold.Armed(); arms != want {
				t.Fatalf("hold armed %d times, want %d", arms, want)
			}
		})
	}
}

// No flusher goroutine at all while every Write is followed by a Read.
func TestConnReadNoFlusher(t *testing.T) {
	cli, srv := tcpPair(t)
	hold := &FakeHold{}
	c := NewConnForTest(srv, nil, hold)
	done := make(chan error, 1)
	go func() {
		b := make([]byte, 64)
		for {
			n, err := c.Read(b)
			if err != nil {
				done <- err
				return
			}
			c.Write(b[:n])
		}
	}()
	msg, resp := []byte("ping"), make([]byte, 4)
	for i := 0; i < 100; i++ {
		cli.Write(msg)
		if _, err := io.ReadFull(cli, resp); err != nil || !bytes.Equal(resp, msg) {
			t.Fatalf("round trip %d: %q, %v", i, resp, err)
		}
	}
	cli.Close()
	if err := <-done; err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want io.EOF", err)
	}
	if c.Writer().FlusherStarted() {
		t.Fatal("a flusher goroutine was started")
	}
	if s := c.Stats(); s.Flushes != 100 {
		t.Fatalf("%d writev for 100 responses", s.Flushes)
	}
	c.Close()
}

// Pipelined requests already in the socket are all read before the
// responses go, in one writev, although each request has its own Read.
func TestConnReadCoalescesPipelined(t *testing.T) {
	cli, srv := tcpPair(t)
	c := NewConnForTest(srv, nil, &FakeHold{})
	defer c.Close()
	const n, size = 16, 8
	all := bytes.Repeat([]byte("request\n"), n)
	// The first request alone, so that a Read has been made (and a
	// response held) before the rest arrive.
	cli.Write(all[:size])
	b := make([]byte, size)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatal(err)
	}
	c.Write(b)
	cli.Write(all[size:])
	waitInq(t, srv, len(all)-size)
	go func() {
		for {
			if _, err := io.ReadFull(c, b); err != nil {
				return
			}
			c.Write(b)
		}
	}()
	got := make([]byte, len(all))
	if _, err := io.ReadFull(cli, got); err != nil || !bytes.Equal(got, all) {
		t.Fatalf("responses %q, %v", got, err)
	}
	if s := c.Stats(); s.Flushes != 1 {
		t.Fatalf("%d writev for %d pipelined responses, want 1", s.Flushes, n)
	}
}

// Writes made while a Read waits go out without a Read or the hold timer
// (the flusher sends them).
func TestConnWriteWhileReading(t *testing.T) {
	cli, srv := tcpPair(t)
	c := NewConnForTest(srv, nil, &FakeHold{})
	defer c.Close()
	cli.Write([]byte("x"))
	b := make([]byte, 1)
	if _, err := c.Read(b); err != nil {
		t.Fatal(err)
	}
	readErr := make(chan error, 1)
	go func() { _, err := c.Read(b); readErr <- err }()
	for i := 0; i < 50; i++ {
		c.Write([]byte("push"))
		resp := make([]byte, 4)
		if _, err := io.ReadFull(cli, resp); err != nil {
			t.Fatal(err)
		}
	}
	cli.Close()
	if err := <-readErr; err != io.EOF {
		t.Fatalf("%v, want io.EOF", err)
	}
}

// A Write that must wait for room does not wait for a Read or the timer:
// what is held goes to the flusher.
func TestConnHeldWriteWaitsForRoom(t *testing.T) {
	cli, srv := tcpPair(t)
	hold := &FakeHold{}
	c := NewConnForTest(srv, &Options{MaxQueued: 64 << 10}, hold)
	defer c.Close()
	cli.Write([]byte("x"))
	if _, err := c.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	got := readAll(cli)
	msgs, want := messages(7, 400, 1000)
	for _, m := range msgs {
		if _, err := c.Write(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("peer got %d bytes, want %d", len(b), len(want))
	}
}

// Read reports what (*net.TCPConn).Read reports, with or without something
// queued for it to send first: io.EOF, the deadline, a closed connection.
func TestConnReadErrors(t *testing.T) {
	for _, pending := range []bool{false, true} {
		name := "idle"
		if pending {
			name = "pending"
		}
		t.Run(name, func(t *testing.T) {
			cli, srv := tcpPair(t)
			c := NewConnForTest(srv, &Options{Linger: -1}, &FakeHold{})
			b := make([]byte, 8)
			prime := func() {
				if pending {
					cli.Write([]byte("r"))
					if _, err := c.Read(b); err != nil {
						t.Fatal(err)
					}
					c.Write([]byte("held"))
				}
			}
			prime()
			c.SetReadDeadline(time.Now().Add(-time.Second))
			_, err := c.Read(b)
			var oe *net.OpError
			if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &oe) || oe.Op != "read" {
				t.Fatalf("past deadline: %v, want a read OpError matching os.ErrDeadlineExceeded", err)
			}
			c.SetReadDeadline(time.Time{})
			prime()
			cli.Close()
			if n, err := c.Read(b); n != 0 || err != io.EOF {
				t.Fatalf("after the peer closed: %d, %v; want io.EOF", n, err)
			}
			c.Close()
			if _, err := c.Read(b); !errors.Is(err, net.ErrClosed) {
				t.Fatalf("after Close: %v, want net.ErrClosed", err)
			}
		})
	}
}

// A read error other than EOF is wrapped as the net package wraps it.
func TestConnReadReset(t *testing.T) {
	cli, srv := tcpPair(t)
	c := NewConnForTest(srv, nil, &FakeHold{})
	defer c.Close()
	cli.Write([]byte("r"))
	// One-byte reads fill their buffer, so every Read reads before it
	// sends what is held: the reset reaches a read, not the write.
	b := make([]byte, 1)
	if _, err := c.Read(b); err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("held"))
	cli.SetLinger(0)
	cli.Write([]byte("more"))
	waitInq(t, srv, 4)
	cli.Close() // RST
	var err error
	for err == nil {
		_, err = c.Read(b)
	}
	var oe *net.OpError
	if !errors.Is(err, syscall.ECONNRESET) || !errors.As(err, &oe) || oe.Op != "read" {
		t.Fatalf("%v, want a read OpError matching ECONNRESET", err)
	}
}

// MaxHold < 0: nothing is held, every Write goes to the flusher.
func TestConnNoHold(t *testing.T) {
	cli, srv := tcpPair(t)
	hold := &FakeHold{}
	c := NewConnForTest(srv, &Options{MaxHold: -1}, hold)
	defer c.Close()
	cli.Write([]byte("x"))
	if _, err := c.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("resp"))
	resp := make([]byte, 4)
	if _, err := io.ReadFull(cli, resp); err != nil {
		t.Fatal(err)
	}
	if _, arms := hold.Armed(); arms != 0 || !c.Writer().FlusherStarted() {
		t.Fatalf("hold armed %d times, flusher %v", arms, c.Writer().FlusherStarted())
	}
}

// A request/response exchange through a Conn allocates nothing per message.
func TestConnReadWriteAllocs(t *testing.T) {
	cli, srv := tcpPair(t)
	c := NewConn(srv, nil)
	defer c.Close()
	go func() {
		b := make([]byte, 64)
		for {
			n, err := c.Read(b)
			if err != nil {
				return
			}
			c.Write(b[:n])
		}
	}()
	msg, resp := make([]byte, 64), make([]byte, 64)
	roundTrip := func() {
		cli.Write(msg)
		if _, err := io.ReadFull(cli, resp); err != nil {
			t.Fatal(err)
		}
	}
	roundTrip() // the hold timer is made once
	if a := testing.AllocsPerRun(200, roundTrip); a != 0 && !raceEnabled {
		t.Fatalf("%v allocations per round trip", a)
	}
}

// ReadPooled: echo through pooled buffers, no allocation per message; a
// response larger than the socket takes leaves partly from the Read and the
// rest from the flusher, in order.
func TestConnReadPooled(t *testing.T) {
	cli, srv := tcpPair(t)
	srv.SetWriteBuffer(16 << 10)
	cli.SetReadBuffer(16 << 10)
	c := NewConnForTest(srv, nil, &FakeHold{})
	defer c.Close()
	go func() {
		for {
			b, err := c.ReadPooled()
			if len(b) > 0 {
				if b[0] == 'B' { // big: 2 MB back
					c.Write(bytes.Repeat([]byte("0123456789abcdef"), 128<<10))
				} else {
					c.Write(b)
				}
			}
			if err != nil {
				return
			}
		}
	}()
	msg, resp := make([]byte, 64), make([]byte, 64)
	roundTrip := func() {
		cli.Write(msg)
		if _, err := io.ReadFull(cli, resp); err != nil || !bytes.Equal(resp, msg) {
			t.Fatalf("%q, %v", resp, err)
		}
	}
	roundTrip()
	if a := testing.AllocsPerRun(200, roundTrip); a != 0 && !raceEnabled {
		t.Fatalf("%v allocations per round trip", a)
	}
	cli.Write([]byte("B"))
	big := make([]byte, 2<<20)
	if _, err := io.ReadFull(cli, big); err != nil || !bytes.Equal(big, bytes.Repeat([]byte("0123456789abcdef"), 128<<10)) {
		t.Fatalf("big response: %v", err)
	}
	roundTrip()
	if !c.Writer().FlusherStarted() {
		t.Error("a full socket did not hand the rest to the flusher")
	}
}

// ReadPooled reports EOF, deadlines and closing as Read does, on TCP and on
// a connection without a socket (net.Pipe).
func TestConnReadPooledErrors(t *testing.T) {
	t.Run("tcp", func(t *testing.T) {
		cli, srv := tcpPair(t)
		c := NewConnForTest(srv, &Options{Linger: -1}, &FakeHold{})
		cli.Write([]byte("abc"))
		if b, err := c.ReadPooled(); string(b) != "abc" || err != nil {
			t.Fatalf("%q, %v", b, err)
		}
		c.Write([]byte("held"))
		c.SetReadDeadline(time.Now().Add(-time.Second))
		var oe *net.OpError
		if b, err := c.ReadPooled(); b != nil || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &oe) || oe.Op != "read" {
			t.Fatalf("%q, %v", b, err)
		}
		c.SetReadDeadline(time.Time{})
		cli.Close()
		if b, err := c.ReadPooled(); b != nil || err != io.EOF {
			t.Fatalf("after the peer closed: %q, %v", b, err)
		}
		c.Close()
		if _, err := c.ReadPooled(); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("after Close: %v", err)
		}
	})
	t.Run("pipe", func(t *testing.T) {
		a, b := net.Pipe()
		c := NewConnForTest(b, nil, &FakeHold{})
		go a.Write([]byte("abc"))
		if got, err := c.ReadPooled(); string(got) != "abc" || err != nil {
			t.Fatalf("%q, %v", got, err)
		}
		c.Write([]byte("held")) // sent before the next read waits
		resp := make([]byte, 4)
		go func() { io.ReadFull(a, resp); a.Close() }()
		if got, err := c.ReadPooled(); got != nil || err != io.EOF {
			t.Fatalf("%q, %v", got, err)
		}
		if string(resp) != "held" {
			t.Fatalf("peer got %q", resp)
		}
		c.Close()
	})
}

// After a read that drained the socket (returned less than its buffer),
// the next Read sends what is held before it reads, even with data waiting:
// the responses to one read's requests are not held back by the next
// requests. After a read that filled its buffer, it reads first.
func TestConnReadDrainedSendsFirst(t *testing.T) {
	cli, srv := tcpPair(t)
	c := NewConnForTest(srv, nil, &FakeHold{})
	defer c.Close()
	b := make([]byte, 8)
	cli.Write([]byte("a"))
	if n, err := c.Read(b); n != 1 || err != nil { // drained
		t.Fatal(n, err)
	}
	c.Write([]byte("A"))
	cli.Write([]byte("bbbbbbbb"))
	waitInq(t, srv, 8)
	if n, err := c.Read(b); n != 8 || err != nil { // sends "A" first; fills b
		t.Fatal(n, err)
	}
	if s := c.Stats(); s.Flushes != 1 || s.Written != 1 {
		t.Fatalf("stats %+v: the held response did not go before the read", s)
	}
	c.Write([]byte("B"))
	cli.Write([]byte("c"))
	waitInq(t, srv, 1)
	if n, err := c.Read(b); n != 1 || err != nil { // full before: reads first
		t.Fatal(n, err)
	}
	if s := c.Stats(); s.Flushes != 1 {
		t.Fatalf("stats %+v: sent before reading after a full read", s)
	}
	resp := make([]byte, 1)
	if _, err := io.ReadFull(cli, resp); err != nil || resp[0] != 'A' {
		t.Fatalf("%q, %v", resp, err)
	}
}

// TestConnConcurrentReads: a net.Conn may be read by several goroutines at
// once, as a *net.TCPConn may; a Conn's Reads (and ReadPooled beside them)
// share no state outside the Writer's lock (under -race, the old
// Conn.drained was a data race), and every byte read and echoed arrives.
func TestConnConcurrentReads(t *testing.T) {
	cli, srv := tcpPair(t)
	c := NewConnForTest(srv, nil, &FakeHold{})
	const total = 4000
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := make([]byte, 3)
			for {
				var p []byte
				var err error
				if g == 2 {
					p, err = c.ReadPooled()
				} else {
					var n int
					n, err = c.Read(b)
					p = b[:n]
				}
				if len(p) > 0 {
					if _, werr := c.Write(p); werr != nil {
						t.Error(werr)
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
	got := readAll(cli)
	if _, err := cli.Write(bytes.Repeat([]byte("abcd"), total/4)); err != nil {
		t.Fatal(err)
	}
	cli.CloseWrite()
	wg.Wait()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; len(b) != total || bytes.Count(b, []byte("a")) != total/4 {
		t.Fatalf("echoed %d bytes (%d a's), want %d (%d)", len(b), bytes.Count(b, []byte("a")), total, total/4)
	}
}

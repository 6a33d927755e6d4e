package smtpsink

import (
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Whatever the peer sends, a session holds a bounded amount: a 16 MiB
// command line, a 16 MiB message line and thousands of recipients
// allocate far less than they weigh.
func TestMemoryBounded(t *testing.T) {
	s := startSink(t, Config{MaxRecipients: 100}, hooks{})
	c := dial(t, s)
	c.cmd(250, "EHLO c")
	chunk := []byte(strings.Repeat("x", 64<<10))
	var rcpts strings.Builder
	for range 5000 {
		rcpts.WriteString("RCPT TO:<" + strings.Repeat("r", 200) + "@b>\r\n")
	}
	rcptBytes := []byte(rcpts.String())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	errc := make(chan error, 1)
	go func() {
		w := func(b []byte) {
			if _, err := c.raw.Write(b); err != nil {
				errc <- err
			}
		}
		for range 256 {
			w(chunk)
		}
		w([]byte("\r\nMAIL FROM:<a@b>\r\n"))
		w(rcptBytes)
		w([]byte("DATA\r\n"))
		for range 256 {
			w(chunk)
		}
		w([]byte("\r\n.\r\n"))
		errc <- nil
	}()
	if got := c.codes(2); got != "500 250" {
		t.Fatalf("got %s", got)
	}
	for i := range 5000 {
		want := 250
		if i >= 100 {
			want = 452
		}
		c.expect(want)
	}
	c.expect(354)
	c.expect(250)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// 33 MiB and 1 MiB of recipients went in; the client's reading of
	// 5000 replies allocates too. Under the race detector the pools drop
	// buffers at random, which read 3.7 to 11 MiB here: the bound is
	// checked in the runs without it.
	switch alloc := after.TotalAlloc - before.TotalAlloc; {
	case raceEnabled:
		t.Logf("%d KiB allocated (not checked under -race)", alloc>>10)
	case alloc > 8<<20:
		t.Errorf("%d MiB allocated", alloc>>20)
	default:
		t.Logf("%d KiB allocated", alloc>>10)
	}
	c.cmd(221, "QUIT")
}

// A session that sends nothing for Timeout gets 421 and is closed.
func TestTimeout(t *testing.T) {
	s := startSink(t, Config{Timeout: 20 * time.Millisecond}, hooks{})
	c := dial(t, s)
	c.expect(421)
	if _, err := c.R.ReadByte(); err != io.EOF {
		t.Errorf("idle session: %v, want EOF", err)
	}
	s.Close()
	if st := s.Stats(); st.Aborted != 1 || st.Errors[421] != 1 {
		t.Errorf("stats %+v", st)
	}
}

// Sessions reuse their read and write buffers (68 KiB): a client that
// connects for each message makes no buffer's worth of garbage each time.
func TestSessionBuffersPooled(t *testing.T) {
	s := startSink(t, Config{}, hooks{})
	session := func() {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte("QUIT\r\n")); err != nil {
			t.Fatal(err)
		}
		var buf [256]byte
		for {
			if _, err := c.Read(buf[:]); err != nil {
				break
			}
		}
	}
	session()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n = 200
	for range n {
		session()
	}
	runtime.ReadMemStats(&after)
	// Without the pools it is over 68 KiB; with them about 3 KiB, and
	// about 18 KiB under the race detector, whose sync.Pool drops a
	// quarter of what it is given.
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 40<<10 {
		t.Errorf("%d KiB allocated per session", per>>10)
	} else {
		t.Logf("%d bytes allocated per session, client included", per)
	}
}

// On the loops engine an idle session (greeted, then silent) holds no
// buffer: the Go heap grows by less than 4 KiB a session (the goroutine
// engine's hold a 64 KiB read buffer, a 4 KiB reply buffer and a stack).
func TestIdleSessionsLoops(t *testing.T) {
	if netioPortable {
		t.Skip("netio's portable Serve holds a read buffer and two goroutines per connection")
	}
	t.Run("greeted", func(t *testing.T) { idleSessions(t, "", 0) })
	// Between the chunks of a BDAT message too, where the session also
	// holds the textproto.Reader its next chunk is read through (480
	// bytes on amd64): no buffer still, as a 4 KiB one would pass the
	// bound.
	t.Run("between chunks", func(t *testing.T) {
		idleSessions(t, "EHLO c\r\nMAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\nBDAT 3\r\nabc", 512)
	})
}

// idleSessions checks that an idle session, after first, takes at most
// 4 KiB plus more bytes of heap, its client's included.
func idleSessions(t *testing.T, first string, more int64) {
	const n = 200
	s := startSink(t, Config{Engine: EngineLoops, MaxConns: -1}, hooks{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	conns := make([]*client, n)
	for i := range conns {
		conns[i] = dial(t, s) // greeted
		if first != "" {
			conns[i].send(first)
			if got := conns[i].codes(4); got != "250 250 250 250" {
				t.Fatalf("got %s", got)
			}
		}
	}
	conns[n-1].cmd(250, "NOOP") // each session is served by now
	runtime.GC()
	runtime.ReadMemStats(&after)
	if st := s.Stats(); st.Active != n {
		t.Fatalf("%d sessions active, want %d", st.Active, n)
	}
	// The clients' own side (net.Conn, textproto.Conn, bufio) is in the
	// same heap: it counts against the bound too.
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d bytes of heap per idle session and its client", per)
	if per > 4<<10+more {
		t.Errorf("%d bytes of heap per idle session (and its client), want at most %d", per, 4<<10+more)
	}
}

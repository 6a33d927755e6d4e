package smtpsink

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	nettextproto "net/textproto"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// Implicit TLS with MaxConns: a connection that waits for a slot
// completes its handshake once the slot comes (its ClientHello, sent at
// once, was dropped when the session was detached).
func TestLoopsImplicitTLSWaiting(t *testing.T) {
	srv, cli := testTLS(t)
	s := startSink(t, Config{TLS: srv, TLSImplicit: true, MaxConns: 1, Timeout: time.Minute}, hooks{})
	a, err := tls.Dial("tcp", s.Addr().String(), cli)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ca := &client{t: t, Conn: nettextproto.NewConn(a), raw: a}
	ca.expect(220)

	raw, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	b := tls.Client(raw, cli)
	hs := make(chan error, 1)
	go func() { hs <- b.Handshake() }() // its ClientHello arrives while it waits
	// Let the sink see the second connection wait before the slot frees.
	if s.cfg.Engine == EngineLoops {
		awaitWaiting(s, 1)
	}
	ca.cmd(221, "QUIT")
	raw.SetDeadline(time.Now().Add(time.Minute)) // a hang guard only
	if err := <-hs; err != nil {
		t.Fatalf("the waiting client's handshake: %v", err)
	}
	cb := &client{t: t, Conn: nettextproto.NewConn(b), raw: b}
	cb.expect(220)
}

// A Delay on the loops engine is a timer on the session's loop: the reply
// never leaves before its time. A session closed while it waits drops the
// timer with its connection (under -race: the timer and the session's end
// share nothing).
func TestLoopsPause(t *testing.T) {
	const d = 25 * time.Millisecond
	s := startSink(t, Config{Engine: EngineLoops, Delay: map[string]time.Duration{"NOOP": d}}, hooks{})
	c := dial(t, s)
	for range 3 {
		start := time.Now()
		c.cmd(250, "NOOP")
		if got := time.Since(start); got < d {
			t.Errorf("NOOP answered after %v, before its delay of %v", got, d)
		}
	}
	for range 20 {
		c := dial(t, s)
		c.send("NOOP\r\n")
		c.raw.(*net.TCPConn).SetLinger(0)
		c.raw.Close() // a reset: the session ends while it is paused
	}
	for s.Stats().Active != 1 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(2 * d) // the timers' time passes
	c.cmd(250, "NOOP")
}

// Waiting connections whose clients leave before their turn pass the
// slot on when it comes to them (reset, or closed with input unread): the
// next client is served. (A waiting connection is not read: its end is
// seen once it has the slot.)
func TestLoopsWaitingLeftFreesSlot(t *testing.T) {
	s := startSink(t, Config{Engine: EngineLoops, MaxConns: 1}, hooks{})
	a := dial(t, s)
	var gone []net.Conn
	for i := range 2 {
		b, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		awaitWaiting(s, i+1)
		gone = append(gone, b)
	}
	gone[0].(*net.TCPConn).SetLinger(0)
	gone[0].Close()
	gone[1].Write(bytes.Repeat([]byte("x"), 100<<10))
	gone[1].Close()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a.cmd(221, "QUIT")
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard only
	line, err := nettextproto.NewReader(bufio.NewReader(c)).ReadLine()
	if err != nil || !strings.HasPrefix(line, "220") {
		s.mu.Lock()
		slots, waiting := s.slots, len(s.waiting)
		s.mu.Unlock()
		t.Fatalf("the third client: %q %v (slots in use %d, waiting %d, Stats %+v)", line, err, slots, waiting, s.Stats())
	}
}

// Trace: the input of a connection that waited for a slot is traced with
// its session's number (not 0: the number comes with the slot).
func TestLoopsTraceWaiting(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	s := startSink(t, Config{MaxConns: 1, Trace: lockedWriter{&mu, &buf}}, hooks{})
	a := dial(t, s)
	b, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.Write([]byte("NOOP\r\n"))
	a.cmd(221, "QUIT")
	cb := &client{t: t, Conn: nettextproto.NewConn(b), raw: b}
	cb.expect(220)
	cb.expect(250)
	cb.cmd(221, "QUIT")
	mu.Lock()
	defer mu.Unlock()
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(line, "0 ") {
			t.Errorf("trace line of session 0: %q\n%s", line, buf.String())
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A pipelining client that sends a batch of commands whose replies add
// up to more than netio's MaxQueued (1 MiB) in one read gets them all, on
// both engines: the loops engine stops taking input while its replies
// wait (it closed the session once ErrQueueFull came).
func TestPipelinedRepliesOverQueue(t *testing.T) {
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		t.Run(string(e), func(t *testing.T) {
			srv, _ := testTLS(t)
			s := startSink(t, Config{Engine: e, TLS: srv, Auth: true, MaxSize: 10240000}, hooks{})
			c := dial(t, s)
			c.PrintfLine("EHLO c")
			_, msg, _ := c.ReadResponse(250)
			t.Logf("EHLO reply %d bytes", len(msg)+5*strings.Count(msg, "\n")+9)
			const n = 2 << 20 / 8
			go c.raw.Write(bytes.Repeat([]byte("EHLO c\r\n"), n))
			for i := range n {
				code, _, err := c.ReadResponse(250)
				if err != nil {
					t.Fatalf("reply %d of %d: %d %v", i+1, n, code, err)
				}
			}
		})
	}
}

// A Delay on BDAT with the chunk pipelined behind the command: both
// engines read the chunk after the wait (the loops engine stops reading
// while paused; it held the input, and closed the session past 64 KiB).
func TestDelayBDATChunk(t *testing.T) {
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		t.Run(string(e), func(t *testing.T) {
			s := startSink(t, Config{Engine: e, Delay: map[string]time.Duration{"BDAT": time.Second}},
				hooks{sleep: func(time.Duration) {}})
			c := dial(t, s)
			c.cmd(250, "EHLO c")
			c.cmd(250, "MAIL FROM:<a@b>")
			c.cmd(250, "RCPT TO:<a@b>")
			const size = 100 << 10
			go c.raw.Write(append([]byte(fmt.Sprintf("BDAT %d LAST\r\n", size)), bytes.Repeat([]byte("x"), size)...))
			c.expect(250)
		})
	}
}

// BDAT and DATA fed one byte per read, on both engines:
// the same replies and digests.
func TestEnginesDribbleParity(t *testing.T) {
	type tc struct {
		name string
		cfg  Config
		in   string
	}
	hdr := "EHLO c\r\nMAIL FROM:<a@b>\r\nRCPT TO:<a@b>\r\n"
	cases := []tc{
		{"zero", Config{}, hdr + "BDAT 0 LAST\r\n"},
		{"crlf-split", Config{}, hdr + "BDAT 3\r\nab\rBDAT 0\r\nBDAT 3 LAST\r\n\ncd"},
		{"bare-cr-end", Config{}, hdr + "BDAT 3\r\nab\rBDAT 2 LAST\r\nxy"},
		{"bare-lf", Config{Bare: dot.BareNormalize}, hdr + "BDAT 4\r\na\nb\rBDAT 3 LAST\r\n\nc\r"},
		{"too-large", Config{MaxSize: 5}, hdr + "BDAT 4\r\nabcdBDAT 4\r\nefghBDAT 2 LAST\r\nij"},
		{"line-long", Config{MaxDataLineBytes: 4}, hdr + "BDAT 3\r\nabcBDAT 3 LAST\r\nde\n"},
		{"discard", Config{MaxSize: 2, MaxDiscardBytes: 6}, hdr + "BDAT 4\r\nabcdBDAT 4\r\nefghBDAT 2 LAST\r\nij"},
		{"refused", Config{}, "EHLO c\r\nBDAT 5\r\nabcdeNOOP\r\n" + hdr[8:] + "BDAT x\r\nBDAT 3 LAST foo\r\nabcBDAT 1 LAST\r\nz"},
		{"data", Config{}, hdr + "DATA\r\n..a\r\nb\r\n.\r\n"},
		{"data-discard", Config{MaxSize: 2, MaxDiscardBytes: 12}, hdr + "DATA\r\nabcdef\r\n.\r\n"},
	}
	run := func(e Engine, c tc) string {
		var got messages
		reads := make(chan int, 1<<12)
		cfg := c.cfg
		cfg.Engine, cfg.Digest, cfg.OnMessage = e, digest.SHA1, got.add
		s := startSink(t, cfg, hooks{read: func(n int) { reads <- n }})
		cl := dial(t, s)
		in := c.in + "QUIT\r\n"
		go func() {
			for i := range len(in) {
				if _, err := cl.raw.Write([]byte{in[i]}); err != nil {
					return
				}
				if n := <-reads; n != 1 {
					t.Errorf("%s: a read of %d", e, n)
				}
			}
		}()
		var b strings.Builder
		for {
			code, msg, err := cl.ReadResponse(0)
			if code == 0 {
				break
			}
			fmt.Fprintf(&b, "%d %s|", code, msg)
			_ = err
		}
		for _, m := range got.all() {
			fmt.Fprintf(&b, " msg size %d chunks %d digest %x", m.Size, m.Chunks, m.Digest)
		}
		return b.String()
	}
	for _, c := range cases {
		g, l := run(EngineGoroutine, c), run(EngineLoops, c)
		if g != l {
			t.Errorf("%s:\ngoroutine %s\nloops     %s", c.name, g, l)
		}
	}
}

// MaxDiscardBytes counts DATA's discarded input from the byte after the
// problem's, the end marker included, on both engines and whatever the
// reads: with MaxSize 10 the 11th data byte is the problem (a stuffing dot
// before it is not data), so a bound of exactly what follows it keeps the
// session, and one byte less ends it. (The loops engine counted the
// stuffing dot too, and ended it at the exact bound.)
func TestMaxDiscardBytesExact(t *testing.T) {
	const upTo = "..0123456789" // "." and "0" to "8" are the 10 bytes kept
	body := upTo + "ABCDEF\r\nx\r\n.\r\n"
	discard := int64(len(body) - len(upTo))
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		for _, bound := range []int64{discard - 1, discard, discard + 1} {
			for _, split := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/bound%d/split%v", e, bound, split), func(t *testing.T) {
					reads := make(chan int, 64)
					s := startSink(t, Config{Engine: e, MaxSize: 10, MaxDiscardBytes: bound},
						hooks{read: func(n int) { reads <- n }})
					c := dial(t, s)
					c.cmd(250, "EHLO c")
					c.cmd(250, "MAIL FROM:<a@b>")
					c.cmd(250, "RCPT TO:<a@b>")
					if split {
						// The problem and two bytes after it in one read,
						// the rest in another.
						c.cmd(354, "DATA")
						first := upTo + "AB"
						c.send(first)
						for n := range reads {
							if n == len(first) {
								break
							}
						}
						c.send(body[len(first):] + "NOOP\r\n")
					} else {
						c.send("DATA\r\n" + body + "NOOP\r\n")
						c.expect(354)
					}
					want := "552 250"
					if bound < discard {
						want = "421"
					}
					if got := c.codes(strings.Count(want, " ") + 1); got != want {
						t.Fatalf("got %s, want %s", got, want)
					}
				})
			}
		}
	}
}

// STARTTLS with commands behind it in the same write, in the clear, over
// TCP on both engines (the loops engine runs TLS on its loop): they are
// thrown away unread, and only what comes over TLS is answered.
func TestStartTLSInjectionEngines(t *testing.T) {
	srv, cli := testTLS(t)
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		t.Run(string(e), func(t *testing.T) {
			var tr strings.Builder
			var mu sync.Mutex
			s := startSink(t, Config{Engine: e, TLS: srv, Trace: lockedWriter{&mu, &tr}}, hooks{})
			c := dial(t, s)
			c.cmd(250, "EHLO c")
			c.send("STARTTLS\r\nRSET\r\nMAIL FROM:<a@b>\r\n")
			c.expect(220)
			if n := c.R.Buffered(); n > 0 {
				t.Fatalf("%d bytes after the 220", n)
			}
			tc := tls.Client(c.raw, cli)
			if err := tc.Handshake(); err != nil {
				t.Fatal(err)
			}
			tc.Write([]byte("HELP\r\nQUIT\r\n"))
			out, err := io.ReadAll(tc)
			if err != nil {
				t.Fatalf("over TLS: %v", err)
			}
			if !strings.HasPrefix(string(out), "214 ") || !strings.Contains(string(out), "\r\n221 ") || strings.Count(string(out), "\r\n") != 2 {
				t.Errorf("replies over TLS %q", out)
			}
			mu.Lock()
			defer mu.Unlock()
			if strings.Contains(tr.String(), "2.1.0") || strings.Contains(tr.String(), "250 2.0.0") {
				t.Errorf("an injected command was answered:\n%s", tr.String())
			}
		})
	}
}

// A client that stops in the middle of a TLS handshake is ended by the
// command deadline, and one still in it does not hold up Close: on both
// engines.
func TestStalledHandshake(t *testing.T) {
	srv, _ := testTLS(t)
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		for _, implicit := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/implicit%v", e, implicit), func(t *testing.T) {
				// The deadline is the sink's own, and the stalled
				// handshake waits it out: 2 s, so that the sink's steps
				// before the handshake fit in it with a wide margin; the
				// cases run side by side.
				t.Parallel()
				var logged, logged2 tooltest.Buffer
				ended := make(chan SessionInfo, 1)
				cfg := Config{Engine: e, TLS: srv, TLSImplicit: implicit, Timeout: 2 * time.Second, ErrorLog: log.New(&logged, "", 0),
					OnSessionEnd: func(i SessionInfo) { ended <- i }}
				s := startSink(t, cfg, hooks{})
				br := stallHandshake(t, s, implicit)
				rest, _ := io.ReadAll(br)
				if len(rest) > 0 {
					t.Errorf("%q in the clear after the handshake stopped", rest)
				}
				// One more, which Close ends (the deadline is far off).
				s2 := startSink(t, Config{Engine: e, TLS: srv, TLSImplicit: implicit, ErrorLog: log.New(&logged2, "", 0)}, hooks{})
				br2 := stallHandshake(t, s2, implicit)
				if err := s2.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				io.ReadAll(br2)
				// The timeout is logged as the handshake's failure, before
				// the session's end (on the loops engine netio tells the
				// handshake's end after the connection's close, which the
				// client sees); Close's end is not logged.
				<-ended
				if got := logged.String(); !strings.Contains(got, "smtpsink: session 1: TLS handshake") || !strings.Contains(got, "timeout") {
					t.Errorf("ErrorLog %q, want the handshake's timeout", got)
				}
				if got := logged2.String(); got != "" {
					t.Errorf("ErrorLog %q after Close ended a handshake, want nothing", got)
				}
			})
		}
	}
}

// stallHandshake connects to s, starts TLS (at once with implicit TLS,
// or after the greeting and STARTTLS's 220), and sends the start of a
// record header and no more; it returns what reads the connection,
// closed when the test ends.
func stallHandshake(t *testing.T, s *Server, implicit bool) *bufio.Reader {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	br := bufio.NewReader(nc)
	if !implicit {
		// STARTTLS goes with the connect, so that no wait of the test's
		// on a slow machine runs into the deadline before the handshake
		// (past it, the handshake stalls all the same).
		nc.Write([]byte("STARTTLS\r\n"))
		if l, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(l, "220 ") {
			t.Fatalf("greeting %q %v", l, err)
		}
		if l, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(l, "220 ") {
			t.Fatalf("STARTTLS: %q %v", l, err)
		}
	}
	nc.Write([]byte{22, 3, 1})
	return br
}

// A tls.Config callback sees hello.Conn, on both engines with the
// connection's own address (the loops engine's was nil, and
// hello.Conn.LocalAddr().String() panicked on the handshake goroutine).
func TestTLSLocalAddrEngines(t *testing.T) {
	srv, cli := testTLS(t)
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		t.Run(string(e), func(t *testing.T) {
			var mu sync.Mutex
			var local net.Addr
			cfg := srv.Clone()
			cfg.GetConfigForClient = func(h *tls.ClientHelloInfo) (*tls.Config, error) {
				mu.Lock()
				local = h.Conn.LocalAddr()
				mu.Unlock()
				return nil, nil
			}
			s := startSink(t, Config{Engine: e, TLS: cfg, TLSImplicit: true}, hooks{})
			tc, err := tls.Dial("tcp", s.Addr().String(), cli)
			if err != nil {
				t.Fatal(err)
			}
			defer tc.Close()
			mu.Lock()
			defer mu.Unlock()
			if local == nil || local.String() != s.Addr().String() {
				t.Errorf("ClientHelloInfo.Conn.LocalAddr() = %v, want %v", local, s.Addr())
			}
		})
	}
}

// coalescing passes the first Write (the ClientHello) and holds the
// others until flush: the client's Finished and its first command reach
// the sink in one segment, as a fast client's often do.
type coalescing struct {
	net.Conn
	mu     sync.Mutex
	n      int
	held   []byte
	direct bool
}

func (c *coalescing) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if c.n == 1 || c.direct {
		return c.Conn.Write(p)
	}
	c.held = append(c.held, p...)
	return len(p), nil
}

func (c *coalescing) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Conn.Write(c.held)
	c.held, c.direct = nil, true
}

// Implicit TLS with a CONNECT delay: a command that came with the
// client's last handshake flight is served after the greeting, on both
// engines (the loops engine left it in its tls.Conn until more came).
func TestImplicitTLSDelayFirstCommand(t *testing.T) {
	srv, cli := testTLS(t)
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		t.Run(string(e), func(t *testing.T) {
			s := startSink(t, Config{Engine: e, TLS: srv, TLSImplicit: true,
				Delay: map[string]time.Duration{"CONNECT": 20 * time.Millisecond}}, hooks{})
			var cc *coalescing
			tc, nc := dialTLS(t, s, cli, func(c net.Conn) net.Conn { cc = &coalescing{Conn: c}; return cc })
			tc.Write([]byte("NOOP\r\n"))
			cc.flush()
			nc.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard only
			c := &client{t: t, Conn: nettextproto.NewConn(tc), raw: tc}
			c.expect(220)
			c.expect(250)
		})
	}
}

// records counts the TLS records the client receives once counting is on.
type records struct {
	net.Conn
	mu    sync.Mutex
	on    bool
	buf   []byte
	count int
}

func (r *records) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	r.mu.Lock()
	if r.on {
		r.buf = append(r.buf, p[:n]...)
		for len(r.buf) >= 5 {
			l := 5 + (int(r.buf[3])<<8 | int(r.buf[4]))
			if len(r.buf) < l {
				break
			}
			r.buf = r.buf[l:]
			r.count++
		}
	}
	r.mu.Unlock()
	return n, err
}

// A TLS session out of time gets its 421 and then close_notify, on both
// engines (the loops engine closed the connection without it).
func TestTimeoutCloseNotify(t *testing.T) {
	srv, cli := testTLS(t)
	cli = cli.Clone()
	cli.SessionTicketsDisabled = true
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		t.Run(string(e), func(t *testing.T) {
			// The session waits out the whole Timeout: one that leaves
			// the handshake and the greeting a wide margin (qemu
			// included); the engines run side by side.
			t.Parallel()
			s := startSink(t, Config{Engine: e, TLS: srv, TLSImplicit: true, Timeout: 2 * time.Second}, hooks{})
			var rc *records
			tc, nc := dialTLS(t, s, cli, func(c net.Conn) net.Conn { rc = &records{Conn: c}; return rc })
			br := bufio.NewReader(tc)
			if l, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(l, "220") {
				t.Fatalf("greeting %q %v", l, err)
			}
			rc.mu.Lock()
			rc.on, rc.buf, rc.count = true, nil, 0
			rc.mu.Unlock()
			rest, _ := io.ReadAll(br)
			if !strings.HasPrefix(string(rest), "421 ") {
				t.Fatalf("after the greeting %q", rest)
			}
			io.ReadAll(nc)
			rc.mu.Lock()
			defer rc.mu.Unlock()
			if rc.count < 2 {
				t.Errorf("%d record(s) after the greeting: the 421 without close_notify", rc.count)
			}
		})
	}
}

// dialTLS connects to s with implicit TLS over wrap of the TCP connection
// (a test's view of the bytes) and returns the client after its
// handshake, and the TCP connection, closed when the test ends.
func dialTLS(t *testing.T, s *Server, cli *tls.Config, wrap func(net.Conn) net.Conn) (*tls.Conn, net.Conn) {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	tc := tls.Client(wrap(nc), cli)
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	return tc, nc
}

// awaitWaiting returns once n connections wait for a slot on the loops
// engine: Stats cannot tell, so it polls the server's waiting list.
func awaitWaiting(s *Server, n int) {
	for {
		s.mu.Lock()
		k := len(s.waiting)
		s.mu.Unlock()
		if k == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// Under implicit TLS a connection that gets no session is closed with
// nothing said: its client reads TLS records, and a 421 in the clear
// would be a bad one. Over MaxConns with RefuseOverMaxConns on both
// engines, and on the loops engine a connection still waiting for a slot
// when the server closes (the goroutine engine leaves it in the listen
// queue).
func TestImplicitTLSRefusedInSilence(t *testing.T) {
	srv, cli := testTLS(t)
	refusedSays := func(t *testing.T, s *Server) string {
		t.Helper()
		raw, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		raw.SetDeadline(time.Now().Add(time.Minute)) // a hang guard only
		got, err := io.ReadAll(raw)
		if err != nil {
			t.Fatalf("the refused connection: %v after %q", err, got)
		}
		return string(got)
	}
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		for _, implicit := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/implicit=%v", e, implicit), func(t *testing.T) {
				s := startSink(t, Config{Engine: e, TLS: srv, TLSImplicit: implicit, MaxConns: 1, RefuseOverMaxConns: true}, hooks{})
				var a net.Conn
				var err error
				if implicit {
					a, err = tls.Dial("tcp", s.Addr().String(), cli)
				} else {
					a, err = net.Dial("tcp", s.Addr().String())
				}
				if err != nil {
					t.Fatal(err)
				}
				defer a.Close()
				ca := &client{t: t, Conn: nettextproto.NewConn(a), raw: a}
				ca.expect(220) // it has the slot
				got := refusedSays(t, s)
				if implicit && got != "" || !implicit && !strings.HasPrefix(got, "421 ") {
					t.Errorf("refused: %q", got)
				}
				if st := s.Stats(); st.Refused != 1 {
					t.Errorf("Refused %d, want 1", st.Refused)
				}
			})
		}
	}
	t.Run("loops/waiting", func(t *testing.T) {
		s := startSink(t, Config{Engine: EngineLoops, TLS: srv, TLSImplicit: true, MaxConns: 1}, hooks{})
		a, err := tls.Dial("tcp", s.Addr().String(), cli)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		(&client{t: t, Conn: nettextproto.NewConn(a), raw: a}).expect(220)
		said := make(chan string, 1)
		go func() { said <- refusedSays(t, s) }()
		awaitWaiting(s, 1)
		s.Close()
		if got := <-said; got != "" {
			t.Errorf("waiting as the server closed: %q", got)
		}
	})
}

// The replies to commands that came in one TLS record leave in one
// record too, on both engines: a pipelined MAIL, RCPT, RCPT, DATA group
// is answered in one, and so is the message's end with a NOOP after it.
func TestTLSRepliesOneRecord(t *testing.T) {
	srv, cli := testTLS(t)
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		t.Run(string(e), func(t *testing.T) {
			s := startSink(t, Config{Engine: e, TLS: srv, TLSImplicit: true}, hooks{})
			rc := &recordCounter{}
			tc, _ := dialTLS(t, s, cli, func(c net.Conn) net.Conn { rc.Conn = c; return rc })
			c := &client{t: t, Conn: nettextproto.NewConn(tc), raw: tc}
			c.expect(220)
			c.cmd(250, "EHLO client")
			for _, step := range []struct {
				send  string
				codes []int
			}{
				{"MAIL FROM:<a@example.org>\r\nRCPT TO:<b@example.org>\r\nRCPT TO:<c@example.org>\r\nDATA\r\n", []int{250, 250, 250, 354}},
				{"Subject: one\r\n\r\nbody\r\n.\r\nNOOP\r\n", []int{250, 250}},
			} {
				before := rc.count()
				c.send(step.send) // one Write: one record
				for _, code := range step.codes {
					c.expect(code)
				}
				if n := rc.count() - before; n != 1 {
					t.Errorf("%q answered in %d records, want 1", step.send, n)
				}
			}
		})
	}
}

// recordCounter counts the TLS records read through it.
type recordCounter struct {
	net.Conn
	mu      sync.Mutex
	buf     []byte
	records int
}

func (r *recordCounter) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p[:n]...)
	for len(r.buf) >= 5 {
		end := 5 + (int(r.buf[3])<<8 | int(r.buf[4])) // type, version, length
		if len(r.buf) < end {
			break
		}
		r.records++
		r.buf = r.buf[end:]
	}
	return n, err
}

func (r *recordCounter) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.records
}

// A session whose QUIT was served but whose 221 could not be sent (the
// client reset the connection while the replies before it still waited
// for room) did not end with QUIT, on the loops engine as on the
// goroutine engine, whose write of the 221 fails.
func TestLoopsQuitUnsent(t *testing.T) {
	var read atomic.Int64
	ended := make(chan SessionInfo, 1)
	// Small socket buffers, the sink's (accepted sockets take the
	// listener's, set before Serve takes the listener: it may close it
	// for a duplicate) and the client's, so that the kernel takes little.
	small := func(opt int) func(syscall.RawConn) error {
		return func(rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { setSockOpt(fd, opt, 4096) })
		}
	}
	s := startSinkPrepared(t, Config{Engine: EngineLoops, OnSessionEnd: func(si SessionInfo) { ended <- si }},
		hooks{read: func(n int) { read.Add(int64(n)) }}, func(ln net.Listener) error {
			lc, err := ln.(*net.TCPListener).SyscallConn()
			if err != nil {
				return err
			}
			return small(soSndbuf)(lc)
		})
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error { return small(soRcvbuf)(rc) }}
	nc, err := d.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// Input that one read brings (the sink reads nothing more while its
	// output waits for room), and 150 KiB of replies to it: more than the
	// kernel takes while the client reads nothing, less than the sink
	// queues before it stops serving (outHigh).
	in := strings.Repeat("EHLO x\r\n", 600) + "QUIT\r\n"
	if _, err := nc.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	for read.Load() < int64(len(in)) {
		time.Sleep(time.Millisecond) // until the sink has served it all, QUIT too
	}
	nc.(*net.TCPConn).SetLinger(0)
	nc.Close() // a reset
	if si := <-ended; si.Quit {
		t.Errorf("SessionInfo %+v: Quit, but the 221 was never sent", si)
	}
	if st := s.Stats(); st.Aborted != 1 {
		t.Errorf("Aborted %d, want 1", st.Aborted)
	}
}

package smtpsink

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	nettextproto "net/textproto"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// Faults in what a user gives the server besides its callbacks proper:
// the Trace writer, ErrorLog's writer. Each is tried on both engines.

var bothEngines = []Engine{EngineGoroutine, EngineLoops}

// closeWithin closes s, failing the test if Close has not returned
// within a bound on a hang (not a measure).
func closeWithin(t *testing.T, s *Server) {
	t.Helper()
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs")
	}
}

// panicTrace is a Trace writer that panics on a line that has marker in
// it, and keeps the others.
type panicTrace struct {
	marker string
	mu     sync.Mutex
	b      strings.Builder
}

func (p *panicTrace) Write(b []byte) (int, error) {
	if strings.Contains(string(b), p.marker) {
		panic("trace-panic-value")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.b.Write(b)
}

func (p *panicTrace) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.b.String()
}

// A Trace writer that panics ends the session it traces only: the trace's
// lock was taken without defer, so the panic left it held, and every
// traced session after it hung at its first read or write (on the loops
// engine, its loop with it), and Close with them.
func TestTracePanic(t *testing.T) {
	for _, e := range bothEngines {
		t.Run(string(e), func(t *testing.T) {
			var logged tooltest.Buffer
			tr := &panicTrace{marker: "HELO boom"}
			ends := make(chan SessionInfo, 2)
			s := startSink(t, Config{Engine: e, Trace: tr, ErrorLog: log.New(&logged, "", 0),
				OnSessionEnd: func(i SessionInfo) { ends <- i }}, hooks{})
			c := dial(t, s)
			if err := c.PrintfLine("HELO boom"); err != nil {
				t.Fatal(err)
			}
			if line, err := c.ReadLine(); err != io.EOF {
				t.Errorf("after Trace's panic the client read %q, %v; want EOF", line, err)
			}
			<-ends
			served := make(chan struct{})
			go func() {
				defer close(served)
				c := dial(t, s)
				c.cmd(250, "HELO fine")
				c.cmd(221, "QUIT")
			}()
			select {
			case <-served:
			case <-time.After(10 * time.Second): // a bound on a hang
				t.Fatal("the next traced session hangs after Trace panicked")
			}
			<-ends
			closeWithin(t, s)
			if got := logged.String(); !strings.Contains(got, "smtpsink: session 1: ") || !strings.Contains(got, "trace-panic-value") {
				t.Errorf("ErrorLog %q, want the panic", got)
			}
			if got := tr.String(); !strings.Contains(got, `2 < "HELO fine\r\n"`) {
				t.Errorf("trace %q, want the second session's HELO", got)
			}
			if st := s.Stats(); st.Sessions != 2 || st.Aborted != 1 || st.Active != 0 {
				t.Errorf("stats %+v, want 2 sessions, one aborted", st)
			}
		})
	}
}

// failTrace is a Trace writer whose Writes fail from the after-th on.
type failTrace struct {
	after int
	mu    sync.Mutex
	n     int // Writes
	b     strings.Builder
}

var errTraceFull = errors.New("trace-device-full")

func (f *failTrace) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if f.n > f.after {
		return 0, errTraceFull
	}
	return f.b.Write(b)
}

// A Trace writer that fails stops the trace: the error is logged once,
// the writer gets no more Writes (they went on, each failing unseen, and
// the trace kept what came after a hole as if whole), and the sessions
// go on.
func TestTraceWriteError(t *testing.T) {
	for _, e := range bothEngines {
		t.Run(string(e), func(t *testing.T) {
			var logged tooltest.Buffer
			tr := &failTrace{after: 2} // the greeting and the HELO
			s := startSink(t, Config{Engine: e, Trace: tr, ErrorLog: log.New(&logged, "", 0)}, hooks{})
			for range 2 {
				c := dial(t, s)
				c.cmd(250, "HELO x")
				c.deliver(1, "a@b")
				c.cmd(221, "QUIT")
			}
			closeWithin(t, s)
			tr.mu.Lock()
			n, kept := tr.n, tr.b.String()
			tr.mu.Unlock()
			if n != 3 {
				t.Errorf("Trace got %d Writes, want 3: none after the one that failed", n)
			}
			if want := "1 > \"220 "; !strings.HasPrefix(kept, want) || strings.Count(kept, "\n") != 2 {
				t.Errorf("trace %q, want the greeting and the HELO", kept)
			}
			if got := logged.String(); strings.Count(got, "trace-device-full") != 1 || !strings.Contains(got, "tracing stopped") {
				t.Errorf("ErrorLog %q, want the error once", got)
			}
			if st := s.Stats(); st.Messages != 2 || st.Aborted != 0 {
				t.Errorf("stats %+v, want 2 messages, no session aborted", st)
			}
		})
	}
}

// A message whose OnMessage panics gets no 250 and is not counted: Stats
// counted it in Messages, Bytes and Recipients, and OnSessionEnd in its
// Messages, before the call. Stats agree with what the client was told,
// on both engines alike: each message counted either had its 250 read by
// the client or is in Unsent. The client pipelines a message that is
// accepted and one whose OnMessage panics; if both arrive in one read,
// the first's 250 is dropped with the connection (on the loops engine it
// was not counted in Unsent).
func TestOnMessagePanicStats(t *testing.T) {
	for _, e := range bothEngines {
		for _, pipelined := range []bool{false, true} {
			name := string(e) + "/lockstep"
			if pipelined {
				name = string(e) + "/pipelined"
			}
			t.Run(name, func(t *testing.T) {
				ends := make(chan SessionInfo, 1)
				var mu sync.Mutex
				var told []int // Seq of the messages OnMessage returned for
				s := startSink(t, Config{Engine: e,
					OnMessage: func(m Message) {
						if m.From == "boom@x" {
							panic("on-message-panic")
						}
						mu.Lock()
						told = append(told, m.Seq)
						mu.Unlock()
					},
					OnSessionEnd: func(i SessionInfo) { ends <- i }}, hooks{})
				c := dial(t, s)
				c.cmd(250, "EHLO c")
				msg := func(from string) string {
					return "MAIL FROM:<" + from + ">\r\nRCPT TO:<r@x>\r\nDATA\r\n"
				}
				got250 := 0 // replies to data
				if pipelined {
					c.send(msg("a@x") + "x\r\n.\r\n" + msg("boom@x") + "yy\r\n.\r\n")
					for n := 0; ; n++ {
						code, _, err := c.ReadResponse(0)
						if err != nil && code == 0 {
							break
						}
						if n == 3 && code == 250 {
							got250++
						}
					}
				} else {
					c.send(msg("a@x"))
					if got := c.codes(3); got != "250 250 354" {
						t.Fatalf("replies %s", got)
					}
					c.send("x\r\n.\r\n")
					c.expect(250)
					got250++
					c.send(msg("boom@x"))
					c.codes(3)
					c.send("yy\r\n.\r\n")
					if line, err := c.ReadLine(); err != io.EOF {
						t.Errorf("after OnMessage's panic the client read %q, %v; want EOF", line, err)
					}
				}
				info := <-ends
				st := s.Stats()
				if st.Messages != 1 || st.Bytes != 3 || st.Recipients != 1 || st.Aborted != 1 || info.Messages != 1 {
					t.Errorf("stats %+v, OnSessionEnd %+v: want 1 message of 3 bytes to 1 recipient, 1 aborted", st, info)
				}
				if st.Messages-st.Unsent != uint64(got250) {
					t.Errorf("messages %d, unsent %d, but the client read %d 250s to its data", st.Messages, st.Unsent, got250)
				}
				mu.Lock()
				if len(told) != 1 || told[0] != 1 {
					t.Errorf("OnMessage returned for %v, want [1]", told)
				}
				mu.Unlock()
			})
		}
	}
}

// panicWriter is an ErrorLog writer that panics.
type panicWriter struct{ calls atomic.Int64 }

func (p *panicWriter) Write([]byte) (int, error) {
	p.calls.Add(1)
	panic("error-log-panic")
}

// An ErrorLog whose writer panics, as the server logs a callback's
// panic, costs the server nothing: on the goroutine engine it ended the
// program (the log line is written in a deferred call), on the loops
// engine it left the session's end uncounted (netio drops a panic in
// OnClose), and Close waited for it for ever. The log line is lost;
// the session ends as any callback's panic ends it.
func TestErrorLogPanic(t *testing.T) {
	for _, e := range bothEngines {
		t.Run(string(e), func(t *testing.T) {
			pw := &panicWriter{}
			ends := make(chan SessionInfo, 2)
			s, err := Listen(t.Context(), Config{Addr: "127.0.0.1:0", Engine: e, ErrorLog: log.New(pw, "", 0),
				OnMessage:    func(Message) { panic("on-message-panic") },
				OnSessionEnd: func(i SessionInfo) { ends <- i }})
			if err != nil {
				t.Fatal(err)
			}
			served := make(chan error, 1)
			go func() { served <- s.Serve() }()
			c := dial(t, s)
			c.cmd(250, "HELO c")
			c.send("MAIL FROM:<a@x>\r\nRCPT TO:<b@x>\r\nDATA\r\n")
			c.codes(3)
			c.send("x\r\n.\r\n")
			if line, err := c.ReadLine(); err != io.EOF {
				t.Errorf("after OnMessage's panic the client read %q, %v; want EOF", line, err)
			}
			select {
			case i := <-ends:
				if i.Quit {
					t.Errorf("OnSessionEnd %+v", i)
				}
			case <-time.After(10 * time.Second): // a bound on a hang
				t.Fatal("OnSessionEnd not called")
			}
			c = dial(t, s)
			c.cmd(221, "QUIT")
			<-ends
			closeWithin(t, s)
			if err := <-served; err != nil {
				t.Errorf("Serve: %v", err)
			}
			if st := s.Stats(); st.Sessions != 2 || st.Aborted != 1 || st.Active != 0 || st.Messages != 0 {
				t.Errorf("stats %+v, want 2 sessions, 1 aborted, no message", st)
			}
			if pw.calls.Load() == 0 {
				t.Error("the panic was not logged")
			}
		})
	}
}

// A message whose 250 waits out a Delay["."] while its client resets
// the connection is still served (see TestUnsent), and an OnMessage that
// panics then ends the session as anywhere else: on the loops engine the
// delayed reply is served from netio's OnClose, which drops a panic, so
// the session's end was never counted, OnSessionEnd never called, and
// Close waited for ever.
func TestOnMessagePanicAfterReset(t *testing.T) {
	for _, e := range bothEngines {
		t.Run(string(e), func(t *testing.T) {
			var logged tooltest.Buffer
			waiting := make(chan struct{})
			release := make(chan struct{})
			ends := make(chan SessionInfo, 1)
			s, err := listen(t.Context(), Config{Addr: "127.0.0.1:0", Engine: e, ErrorLog: log.New(&logged, "", 0),
				Delay:        map[string]time.Duration{".": time.Second},
				OnMessage:    func(Message) { panic("late-on-message-panic") },
				OnSessionEnd: func(i SessionInfo) { ends <- i }},
				hooks{sleep: func(time.Duration) {
					close(waiting)
					<-release
				}})
			if err != nil {
				t.Fatal(err)
			}
			served := make(chan error, 1)
			go func() { served <- s.Serve() }()
			c := dial(t, s)
			c.cmd(250, "HELO c")
			c.send("MAIL FROM:<a@x>\r\nRCPT TO:<b@x>\r\nDATA\r\n")
			c.codes(3)
			c.send("x\r\n.\r\n")
			<-waiting
			client := c.raw.LocalAddr()
			c.raw.(*net.TCPConn).SetLinger(0)
			c.raw.Close() // a reset
			awaitGone(t, s.Addr(), client)
			close(release)
			select {
			case i := <-ends:
				if i.Quit || i.Messages != 0 {
					t.Errorf("OnSessionEnd %+v", i)
				}
			case <-time.After(10 * time.Second): // a bound on a hang
				t.Error("OnSessionEnd not called")
			}
			closeWithin(t, s)
			if err := <-served; err != nil {
				t.Errorf("Serve: %v", err)
			}
			if got := logged.String(); !strings.Contains(got, "late-on-message-panic") {
				t.Errorf("ErrorLog %q, want the panic", got)
			}
			if st := s.Stats(); st.Aborted != 1 || st.Active != 0 || st.Messages != 0 || st.Unsent != 0 {
				t.Errorf("stats %+v, want 1 aborted, no message", st)
			}
		})
	}
}

// A Config.TLS callback (GetCertificate here) that panics in a
// handshake ends that session only, logged with its value as any
// callback's panic, on both engines (on the loops engine netio runs the
// handshake off the loop and recovers the panic). A guard: no defect
// was found here.
func TestTLSCallbackPanic(t *testing.T) {
	for _, e := range bothEngines {
		t.Run(string(e), func(t *testing.T) {
			srv, cli := testTLS(t)
			cert := srv.Certificates[0]
			srv = &tls.Config{GetCertificate: func(hi *tls.ClientHelloInfo) (*tls.Certificate, error) {
				if hi.ServerName == "boom" {
					panic("get-certificate-panic")
				}
				return &cert, nil
			}}
			var logged tooltest.Buffer
			ends := make(chan SessionInfo, 2)
			s := startSink(t, Config{Engine: e, TLS: srv, TLSImplicit: true, ErrorLog: log.New(&logged, "", 0),
				OnSessionEnd: func(i SessionInfo) { ends <- i }}, hooks{})
			boom := cli.Clone()
			boom.ServerName, boom.InsecureSkipVerify = "boom", true
			if tc, err := tls.Dial("tcp", s.Addr().String(), boom); err == nil {
				tc.Close()
				t.Fatal("the handshake whose GetCertificate panicked succeeded")
			}
			<-ends
			tc, err := tls.Dial("tcp", s.Addr().String(), cli)
			if err != nil {
				t.Fatal(err)
			}
			c := &client{t: t, Conn: nettextproto.NewConn(tc), raw: tc}
			c.expect(220)
			c.cmd(221, "QUIT")
			<-ends
			closeWithin(t, s)
			if got := logged.String(); !strings.Contains(got, "smtpsink: session 1: ") || !strings.Contains(got, "get-certificate-panic") {
				t.Errorf("ErrorLog %q, want the panic", got)
			}
			if st := s.Stats(); st.Sessions != 2 || st.Aborted != 1 || st.TLS != 1 || st.Active != 0 {
				t.Errorf("stats %+v, want 2 sessions, 1 aborted, 1 TLS", st)
			}
		})
	}
}

// blockingWriter is a Trace or ErrorLog writer whose Writes of a line
// with marker in it block until release is closed; entered is told of
// the first.
type blockingWriter struct {
	marker  string
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), b.marker) {
		b.once.Do(func() { close(b.entered) })
		<-b.release
	}
	return len(p), nil
}

// A Config callback that blocks holds its session, and Close waits for
// it (the fields' docs say so); Shutdown returns all the same once its
// ctx is done, with ctx's error (it waited in Close for ever), and the
// session ends when the callback returns: on both engines, for a
// blocking OnSessionEnd, Trace Write and ErrorLog Write.
func TestShutdownBlockedCallback(t *testing.T) {
	for _, e := range bothEngines {
		for _, which := range []string{"OnSessionEnd", "Trace", "ErrorLog"} {
			t.Run(string(e)+"/"+which, func(t *testing.T) {
				bw := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
				ended := make(chan SessionInfo, 1)
				cfg := Config{Engine: e}
				switch which {
				case "OnSessionEnd":
					cfg.OnSessionEnd = func(i SessionInfo) {
						bw.once.Do(func() { close(bw.entered) })
						<-bw.release
						ended <- i
					}
				case "Trace":
					bw.marker = "NOOP"
					cfg.Trace = bw
				case "ErrorLog":
					// A callback's panic is logged.
					bw.marker = "panic"
					cfg.ErrorLog = log.New(bw, "", 0)
					cfg.OnCommand = func(_ uint64, line string) {
						if line == "NOOP" {
							panic("noop-panic")
						}
					}
				}
				if cfg.OnSessionEnd == nil {
					cfg.OnSessionEnd = func(i SessionInfo) { ended <- i }
				}
				s := startSink(t, cfg, hooks{})
				c := dial(t, s)
				c.cmd(250, "EHLO c")
				if which == "OnSessionEnd" {
					c.cmd(221, "QUIT")
				} else if err := c.PrintfLine("NOOP"); err != nil {
					t.Fatal(err)
				}
				<-bw.entered
				ctx, cancel := context.WithCancel(context.Background())
				shut := make(chan error, 1)
				go func() { shut <- s.Shutdown(ctx) }()
				cancel()
				select {
				case err := <-shut:
					if !errors.Is(err, context.Canceled) {
						t.Errorf("Shutdown: %v, want context.Canceled", err)
					}
				case <-time.After(10 * time.Second):
					close(bw.release)
					t.Fatal("Shutdown hangs past its ctx's end while a callback blocks")
				}
				select {
				case <-ended:
					t.Error("the session ended while its callback blocked")
				default:
				}
				close(bw.release)
				<-ended
				closeWithin(t, s)
			})
		}
	}
}

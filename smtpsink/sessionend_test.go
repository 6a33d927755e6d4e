package smtpsink

import (
	"io"
	"log"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// OnSessionEnd learns of each session once it has ended: whether it ended
// with QUIT and how many messages it brought, with the session counted as
// ended in Stats.
func TestOnSessionEnd(t *testing.T) {
	type end struct {
		info   SessionInfo
		active uint64
	}
	ends := make(chan end, 2)
	var sp atomic.Pointer[Server] // set before the first session: the loops engine calls from its own threads
	s := startSink(t, Config{OnSessionEnd: func(i SessionInfo) { ends <- end{i, sp.Load().Stats().Active} }}, hooks{})
	sp.Store(s)

	c := dial(t, s)
	c.cmd(250, "EHLO c")
	c.deliver(2, "c@d")
	c.cmd(221, "QUIT")
	e := <-ends
	if !e.info.Quit || e.info.Messages != 2 || e.info.Session != 1 || e.info.RemoteAddr.String() != c.raw.LocalAddr().String() || e.active != 0 {
		t.Errorf("first session: %+v, active %d", e.info, e.active)
	}

	c = dial(t, s)
	c.cmd(250, "HELO c")
	c.raw.Close() // no QUIT
	e = <-ends
	if e.info.Quit || e.info.Messages != 0 || e.info.Session != 2 || e.active != 0 {
		t.Errorf("second session: %+v, active %d", e.info, e.active)
	}
	if st := s.Stats(); st.Sessions != 2 || st.Aborted != 1 {
		t.Errorf("stats %+v", st)
	}
}

// A callback that ends its goroutine (runtime.Goexit, which t.FailNow
// calls: a t.Fatal in OnMessage) ends its session as a client leaving
// would: on the goroutine engine the connection was left open (the
// client waited for a reply that never came, and Close did not close
// it), Stats.Active stayed up, the MaxConns slot stayed taken and
// OnSessionEnd was never called.
func TestCallbackGoexitEndsSession(t *testing.T) {
	ends := make(chan SessionInfo, 2)
	s := startSink(t, Config{Engine: EngineGoroutine, MaxConns: 1,
		OnMessage: func(m Message) {
			if m.From == "exit@x" {
				runtime.Goexit()
			}
		},
		OnSessionEnd: func(i SessionInfo) { ends <- i }}, hooks{})

	c := dial(t, s)
	c.cmd(250, "HELO c")
	c.cmd(250, "MAIL FROM:<exit@x>")
	c.cmd(250, "RCPT TO:<b@x>")
	c.cmd(354, "DATA")
	c.send("x\r\n.\r\n")
	select {
	case e := <-ends:
		if e.Quit || e.Session != 1 {
			t.Errorf("OnSessionEnd %+v", e)
		}
	case <-time.After(10 * time.Second): // a bound on a hang, not a measure
		t.Fatal("OnSessionEnd not called after a callback's runtime.Goexit")
	}
	if line, err := c.ReadLine(); err != io.EOF {
		t.Errorf("after the callback's Goexit the client read %q, %v; want EOF", line, err)
	}
	if st := s.Stats(); st.Active != 0 || st.Aborted != 1 {
		t.Errorf("stats %+v, want no session active, one aborted", st)
	}
	// The slot of MaxConns 1 is free.
	c = dial(t, s)
	c.cmd(221, "QUIT")
}

// A callback that panics ends its session only, on either engine: its
// connection is closed, the panic's value and stack go to ErrorLog
// before OnSessionEnd is called (Quit false), the session is counted
// aborted, and the server serves the next one. On the goroutine engine
// the panic ended the program, after OnSessionEnd had been called while
// it unwound, with nothing in it to say so; on the loops engine netio
// recovered it, and it vanished without a trace.
func TestCallbackPanicEndsSession(t *testing.T) {
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		for _, where := range []string{"OnMessage", "Decide", "OnCommand"} {
			t.Run(string(e)+"/"+where, func(t *testing.T) {
				var logged tooltest.Buffer
				ends := make(chan SessionInfo, 2)
				logAtEnd := make(chan string, 2)
				boom := func(at string) {
					if at == where {
						panic("callback-panic-value in " + at)
					}
				}
				s := startSink(t, Config{Engine: e, ErrorLog: log.New(&logged, "", 0), MaxConns: 1,
					OnMessage: func(Message) { boom("OnMessage") },
					Decide:    func(Message) Reply { boom("Decide"); return Reply{} },
					OnCommand: func(_ uint64, line string) {
						if line == "." {
							boom("OnCommand")
						}
					},
					OnSessionEnd: func(i SessionInfo) { logAtEnd <- logged.String(); ends <- i }}, hooks{})
				c := dial(t, s)
				c.cmd(250, "HELO c")
				c.cmd(250, "MAIL FROM:<a@x>")
				c.cmd(250, "RCPT TO:<b@x>")
				c.cmd(354, "DATA")
				c.send("x\r\n.\r\n")
				if line, err := c.ReadLine(); err != io.EOF {
					t.Errorf("after the callback's panic the client read %q, %v; want EOF", line, err)
				}
				if i := <-ends; i.Quit || i.Session != 1 {
					t.Errorf("OnSessionEnd %+v", i)
				}
				if got := <-logAtEnd; !strings.Contains(got, "smtpsink: session 1: ") || !strings.Contains(got, "callback-panic-value in "+where) || !strings.Contains(got, "TestCallbackPanicEndsSession") {
					t.Errorf("ErrorLog at OnSessionEnd %q, want the panic's value and stack", got)
				}
				// The slot of MaxConns 1 is free, the server serves on.
				c = dial(t, s)
				c.cmd(221, "QUIT")
				<-ends
				if st := s.Stats(); st.Active != 0 || st.Aborted != 1 || st.Sessions != 2 {
					t.Errorf("stats %+v, want 2 sessions, none active, one aborted", st)
				}
			})
		}
	}
}

// An OnSessionEnd that panics is logged, and the session's end still
// counted, on either engine: on the loops engine Close waited for it for
// ever, and nothing said why; on the goroutine engine it ended the
// program.
func TestOnSessionEndPanic(t *testing.T) {
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		t.Run(string(e), func(t *testing.T) { testOnSessionEndPanic(t, e) })
	}
}

func testOnSessionEndPanic(t *testing.T, e Engine) {
	var logged tooltest.Buffer
	s, err := Listen(t.Context(), Config{Addr: "127.0.0.1:0", Engine: e, ErrorLog: log.New(&logged, "", 0),
		OnSessionEnd: func(SessionInfo) { panic("session-end-panic-value") }})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	c := dial(t, s)
	c.cmd(250, "HELO c")
	c.cmd(221, "QUIT")
	if line, err := c.ReadLine(); err != io.EOF {
		t.Errorf("after QUIT the client read %q, %v; want EOF", line, err)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second): // a bound on a hang, not a measure
		t.Fatal("Close hangs after OnSessionEnd panicked")
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if got := logged.String(); !strings.Contains(got, "smtpsink: session 1: ") || !strings.Contains(got, "session-end-panic-value") {
		t.Errorf("ErrorLog got %q, want the panic's value", got)
	}
	if st := s.Stats(); st.Active != 0 || st.Sessions != 1 {
		t.Errorf("stats %+v", st)
	}
}

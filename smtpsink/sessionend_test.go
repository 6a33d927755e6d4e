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

// A callback that panics on the loops engine closes its session's
// connection (netio recovers it) and is logged to ErrorLog, the value and
// the stack: it vanished without a trace, the client seeing only the
// connection close.
func TestCallbackPanicLoggedOnLoops(t *testing.T) {
	var logged tooltest.Buffer
	ends := make(chan SessionInfo, 1)
	s := startSink(t, Config{Engine: EngineLoops, ErrorLog: log.New(&logged, "", 0),
		OnMessage:    func(Message) { panic("callback-panic-value") },
		OnSessionEnd: func(i SessionInfo) { ends <- i }}, hooks{})
	c := dial(t, s)
	c.cmd(250, "HELO c")
	c.cmd(250, "MAIL FROM:<a@x>")
	c.cmd(250, "RCPT TO:<b@x>")
	c.cmd(354, "DATA")
	c.send("x\r\n.\r\n")
	if line, err := c.ReadLine(); err != io.EOF {
		t.Errorf("after the callback's panic the client read %q, %v; want EOF", line, err)
	}
	<-ends // called after the log line
	if got := logged.String(); !strings.Contains(got, "smtpsink: session 1: ") || !strings.Contains(got, "callback-panic-value") || !strings.Contains(got, "TestCallbackPanicLoggedOnLoops") {
		t.Errorf("ErrorLog got %q, want the panic's value and stack", got)
	}
}

// An OnSessionEnd that panics on the loops engine is logged, and the
// session's end still counted: Close waited for it for ever, and nothing
// said why.
func TestOnSessionEndPanicLoops(t *testing.T) {
	var logged tooltest.Buffer
	s, err := Listen(t.Context(), Config{Addr: "127.0.0.1:0", Engine: EngineLoops, ErrorLog: log.New(&logged, "", 0),
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

package smtpsink

import (
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
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


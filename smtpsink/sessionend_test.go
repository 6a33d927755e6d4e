package smtpsink

import (
	"sync/atomic"
	"testing"
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

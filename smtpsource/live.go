package smtpsource

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Live lets another goroutine watch a run as it goes (Config.Live), for
// a metrics endpoint or a dashboard: Counts may be called at any time,
// before, during and after the run. A Live is for one run.
type Live struct {
	r       atomic.Pointer[run]
	mu      sync.Mutex
	replies map[string]map[int]int64
}

// LiveCounts are a run's counts so far, as in Result.
type LiveCounts struct {
	Open        int64 // connections open now
	Connections int64 // connections opened
	Started     int64
	Delivered   int64
	Failed      int64
	RcptOK      int64
	Bytes       int64
	// TLSHandshakes counts the handshakes that succeeded.
	TLSHandshakes                                                                        int64
	ConnectErrors, ConnectRetries, ConnectRefusals, IOErrors, ProtocolErrors, Rejections int64
	// Replies counts reply codes by phase, as Result.Replies.
	Replies map[string]map[int]int64
}

// Counts returns the counts so far (zero before the run starts).
func (l *Live) Counts() LiveCounts {
	var c LiveCounts
	l.mu.Lock()
	c.Replies = make(map[string]map[int]int64, len(l.replies))
	for phase, codes := range l.replies {
		c.Replies[phase] = maps.Clone(codes)
	}
	l.mu.Unlock()
	r := l.r.Load()
	if r == nil {
		return c
	}
	n := &r.n
	c.Open, c.Connections, c.Started, c.Delivered, c.Failed = n.open.Load(), n.conns.Load(), n.started.Load(), n.delivered.Load(), n.failed.Load()
	c.RcptOK, c.Bytes, c.TLSHandshakes = n.rcptOK.Load(), n.bytes.Load(), n.handshakes.Load()
	c.ConnectErrors, c.ConnectRetries, c.ConnectRefusals = n.connect.Load(), n.retries.Load(), n.refused.Load()
	c.IOErrors, c.ProtocolErrors, c.Rejections = n.io.Load(), n.protocol.Load(), n.reject.Load()
	return c
}

// start attaches the run.
func (l *Live) start(r *run) {
	l.mu.Lock()
	l.replies = map[string]map[int]int64{}
	l.mu.Unlock()
	l.r.Store(r)
}

// reply counts a reply of phase with code.
func (l *Live) reply(phase string, code int) {
	l.mu.Lock()
	m := l.replies[phase]
	if m == nil {
		m = map[int]int64{}
		l.replies[phase] = m
	}
	m[code]++
	l.mu.Unlock()
}

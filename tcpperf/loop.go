package tcpperf

import (
	"sync/atomic"

	"github.com/wirespeed/wirespeed/internal/latrec"
)

// A loop serves its share of the connections from one locked OS thread:
// it sends its share of the open-loop schedule, reads and checks the
// responses, and in closed loop sends the next messages. Everything about
// a connection happens on its loop, so nothing per message is shared with
// another thread except the loop's recorders, taken once a second.
type loop struct {
	r        *run
	id       int
	cpu      int // pinned to this CPU, or -1
	conns    []*conn
	buf      []byte // read buffer
	lat      *latrec.Recorder
	late     *latrec.Recorder
	n        counters
	inflight int64 // sent and not answered, on live connections
	// minflight is how many of them are due in the measurement: those
	// the result counts as unanswered (or abandoned) at the end.
	minflight int64
	// winflight is how many of them were sent in a closed loop's
	// warm-up: the measurement's once it has begun (see counted).
	winflight int64
	wait      waitPolicy
	loopSys   // what the engine of this system adds
}

// A conn is one client connection: its unsent bytes and the send times of
// its outstanding messages, oldest first.
type conn struct {
	fd      int
	id      int    // in the run
	idx     int32  // in the loop, its epoll data
	tmpl    []byte // message filler
	pending []byte // pending[off:]: accepted messages not yet taken by the kernel
	off     int
	out     bool   // waiting for EPOLLOUT
	partial []byte // the start of a response not wholly read
	q       []int64
	qh      int    // q[qh:] outstanding
	sent    uint64 // sequence number of the next message
	rseq    uint64 // sequence number of the next response
	dead    bool
}

func (c *conn) push(t int64) bool {
	if len(c.q)-c.qh >= maxInflight {
		return false
	}
	if c.qh > 0 && len(c.q) == cap(c.q) {
		n := copy(c.q, c.q[c.qh:])
		c.q, c.qh = c.q[:n], 0
	}
	c.q = append(c.q, t)
	return true
}

func (c *conn) pop() (int64, bool) {
	if c.qh == len(c.q) {
		return 0, false
	}
	t := c.q[c.qh]
	c.qh++
	if c.qh == len(c.q) {
		c.q, c.qh = c.q[:0], 0
	}
	return t, true
}

// idle counts the time from a to b as idle, from the measurement's start.
func (l *loop) idle(a, b int64) {
	if a = max(a, l.r.measure); b > a {
		l.n.idle.Add(b - a)
	}
}

func (cfg *Config) isOpen() bool { return cfg.QPS > 0 }

// sentAt counts k messages with intended time t sent.
func (n *counters) sentAt(r *run, k int, t int64) {
	n.sent.Add(int64(k))
	if r.measured(t) {
		n.msent.Add(int64(k))
		if !r.cfg.isOpen() {
			n.due.Add(int64(k))
		}
	}
}

// sendLate records the send at now of a message of the open-loop
// schedule due in the measurement at t, sent (not one unsent or refused,
// which has no lateness and is not among the messages the CPU is
// divided over, Result.CPUPerMsg): its lateness, and now as the
// latest send of the measurement (Result.SendSpanS) if it is. Each loop's
// counters have one writer, its loop.
func (l *loop) sendLate(now, t int64) {
	l.late.Record(now - t)
	l.n.due.Add(1)
	if now > l.n.lastSend.Load() {
		l.n.lastSend.Store(now)
	}
}

// refusedAt counts k messages with intended time t not sent because too
// many wait on their connection: write errors, of the measurement only
// (as sent, unsent and missed are).
func (n *counters) refusedAt(r *run, k int, t int64) {
	if r.measured(t) {
		n.write.Add(int64(k))
	}
}

// unsentAt counts k messages with intended time t due on a connection
// that has failed: not sent.
func (n *counters) unsentAt(r *run, k int, t int64) {
	if r.measured(t) {
		n.unsent.Add(int64(k))
	}
}

// sentMsgs counts k messages with intended time t written or queued on a
// connection: sent, and in flight.
func (l *loop) sentMsgs(k int, t int64) {
	l.n.sentAt(l.r, k, t)
	l.inflight += int64(k)
	if l.r.measured(t) {
		l.minflight += int64(k)
	} else if l.r.warmupHeld(t) {
		l.winflight += int64(k)
	}
}

// warmupHeld reports whether a message sent at t is one of a closed
// loop's warm-up, which the measurement takes on if it is still in
// flight when the measurement begins: a closed loop sends no more on a
// connection than Depth allows, so a server that stopped answering in
// the warm-up would otherwise leave the measurement without a message,
// and a run with not one response read as one with no errors; and a
// stall across the start would not be charged. Open loop's messages
// belong to the measurement by their intended time alone.
func (r *run) warmupHeld(t int64) bool { return !r.cfg.isOpen() && t < r.measure }

// takeOn counts a warm-up message answered or lost at at (see
// warmupHeld) among the measurement's if at is after its start (one
// answered at the very start was not in flight in it), and reports
// whether it did.
func (l *loop) takeOn(t, at int64) bool {
	if !l.r.warmupHeld(t) {
		return false
	}
	l.winflight--
	if at <= l.r.measure {
		return false
	}
	l.n.msent.Add(1)
	l.n.due.Add(1)
	return true
}

// heldAtEnd is how many of a closed loop's warm-up messages are still in
// flight at the end of a run whose measurement ended at end: the
// measurement's, if it began (see warmupHeld). The loop has returned.
func (l *loop) heldAtEnd(end int64) int64 {
	if end <= l.r.measure {
		return 0
	}
	return l.winflight
}

// lose counts an error on c in counter, unless the run is stopping, and
// its outstanding messages as lost: those of the measurement as
// unanswered (abandoned at a stop), as the counts are the measurement's.
func (l *loop) lose(c *conn, counter *atomic.Int64) {
	if !l.r.stopping.Load() {
		counter.Add(1)
	}
	lost, mlost, wlost := int64(len(c.q)-c.qh), int64(0), int64(0)
	// Messages are queued only once the run has begun (its base set): a
	// connection lost before then (the server closing it as it opens)
	// has none, and reads no clock, which the run is still setting.
	var now int64
	if lost > 0 {
		now = l.r.now()
	}
	for _, t := range c.q[c.qh:] {
		switch {
		case l.r.measured(t):
			mlost++
		case l.takeOn(t, now):
			wlost++
		}
	}
	if l.r.interrupted.Load() {
		l.n.abandoned.Add(mlost + wlost) // closed at a stop, not waited for
	} else {
		l.n.lost.Add(mlost + wlost)
	}
	l.inflight -= lost
	l.minflight -= mlost
	c.q, c.qh = nil, 0
}

// take checks the k whole responses at the start of b, which arrived at
// at, against the messages c sent, records the latency of the measured
// ones (all under one lock) and counts them. It returns how many
// messages it took off c's queue (answered, or passed over).
//
// Responses are matched in order, resynchronised by the sequence number
// each message carries (msgSeq): a response that is exactly an earlier
// message (a server's duplicate) answers nothing and is counted as one
// nobody asked for, and one that is exactly a later outstanding message
// answers it, the messages it passes over counting as wrongly answered.
// So one duplicated or dropped response costs an error or two, not every
// later response of the connection. Nothing but the exact bytes of a
// message is ever taken as its answer.
func (l *loop) take(c *conn, b []byte, k int, at int64) int {
	r := l.r
	size := r.cfg.MsgSize
	got, bad, unasked, measured := 0, 0, 0, 0
	l.lat.Lock()
	for i := range k {
		resp := b[i*size : (i+1)*size]
		outstanding := len(c.q) - c.qh
		if outstanding == 0 {
			unasked++
			continue
		}
		ok := checkMsg(resp, c.tmpl, c.rseq)
		skip := 0 // outstanding messages resp passes over
		if !ok {
			if seq, isMsg := msgSeq(resp, c.tmpl); isMsg {
				switch {
				case seq < c.rseq:
					unasked++ // an earlier message's again
					continue
				case seq-c.rseq < uint64(outstanding):
					skip, ok = int(seq-c.rseq), true
				}
			}
		}
		for j := 0; j <= skip; j++ {
			t, _ := c.pop()
			c.rseq++
			got++
			switch {
			case r.measured(t):
				l.minflight--
			case !l.takeOn(t, at):
				continue
			}
			if j < skip || !ok {
				bad++ // answered, but not right: not received
			} else {
				l.lat.RecordLocked(at - t)
				measured++
			}
		}
	}
	l.lat.Unlock()
	if unasked > 0 && at >= r.measure {
		// Responses nobody asked for, from the measurement's start on:
		// the counts are the measurement's (one in the warm-up was an
		// error of the result, and failed the run).
		bad += unasked
	}
	l.n.content.Add(int64(bad)) // and wrong ones of the measurement
	l.n.received.Add(int64(measured))
	l.n.answered.Add(int64(got))
	l.inflight -= int64(got)
	return got
}

package netio

import (
	"errors"
	"sync/atomic"
	"time"
)

// ErrNilFunc is what Serve, Do, AfterFunc and Control return when given
// a nil function.
var ErrNilFunc = errors.New("netio: nil function")

// A LoopTimer is a call AfterFunc arranged on a connection's loop.
type LoopTimer struct {
	c     *LoopConn
	f     func(*LoopConn)
	at    int64  // on the loop's clock, in nanoseconds
	seq   uint64 // order of arming: timers due at once run in it
	idx   int    // in the loop's timer heap
	state atomic.Int32
}

const (
	timerPending int32 = iota
	timerDone          // run, stopped or dropped
)

// AfterFunc arranges for f to be called on c's loop once d has passed
// on the loop's clock (LoopOptions.Clock), as a Handler is: f may Write,
// Close, SetReading and so on, and what it writes leaves when it
// returns. f is called at most once, and never once c is closing,
// closed or detached: a connection's timers are dropped with it. Timers
// due at the same time run in the order they were armed. No goroutine
// is started; a loop keeps one timer of the kernel's (a timerfd), armed
// for its earliest call, so that f runs within microseconds of its time,
// not the millisecond epoll_wait counts in.
//
// Like Write, AfterFunc may be called only on c's loop (ErrOutsideLoop
// otherwise); it fails with ErrNilFunc for a nil f, and with ErrClosed
// or ErrDetached once c is closing or detached.
func (c *LoopConn) AfterFunc(d time.Duration, f func(c *LoopConn)) (*LoopTimer, error) {
	if f == nil {
		return nil, ErrNilFunc
	}
	if err := c.open(); err != nil {
		return nil, err
	}
	t := &LoopTimer{c: c, f: f, idx: -1}
	c.l.addTimer(t, d)
	return t, nil
}

// Stop cancels the call, if it is still to come: it reports whether it
// stopped it, true meaning that f will not run. It returns false once f
// has run (or is running), after an earlier Stop, and when the timer was
// dropped with its connection: from the moment the connection is closing
// (Close was called, or the loop closes it) or detached, though it may
// linger on. It may be called from any goroutine.
func (t *LoopTimer) Stop() bool {
	// A connection's timers are dropped as it starts closing or is
	// detached, not only once it is gone: ended tells another goroutine
	// so, where c.closing and c.det are the loop's.
	if t == nil || t.c.ended.Load() || t.c.gone.Load() || !t.state.CompareAndSwap(timerPending, timerDone) {
		return false
	}
	t.c.l.timerStopped()
	return true
}

// markClosing sets c closing, which drops its timers: every Close of the
// loop's (LoopConn.Close, a timeout, a failure, lingering) goes through
// it, so that Stop from another goroutine sees the drop at once.
func (c *LoopConn) markClosing() {
	c.closing = true
	c.ended.Store(true)
}

package netio

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// The parts of a loop that its two implementations (epoll, and the
// portable one) share: calls on a connection, the deadline heap, the
// timer heap, posted tasks, timeouts and the drain of a Shutdown.

// lingerHeld reports whether a test holds the lingering connections.
func (l *loop) lingerHeld() bool {
	f := l.s.opt.lingerHeld
	return f != nil && f()
}

// served holds the listeners that servers take, whichever server: a
// listener is served once, by one server. A *net.UnixListener is held
// until the server that polls it closes it (and so removes its socket
// file), when the server closes; a *net.TCPListener until the server
// that took it has closed it (it polls a duplicate), so that a second
// server cannot duplicate it meanwhile, and from then on its
// duplication fails with net.ErrClosed. A second server's AddListener
// of it fails with os.ErrExist, as the same server's does, or with
// net.ErrClosed if its user has closed it under the server. The claim is
// taken before the listener's socket is duplicated.
var served sync.Map // net.Listener → struct{}

// claimListener claims ln for a server, and reports whether it was free.
func claimListener(ln net.Listener) bool {
	_, taken := served.LoadOrStore(ln, struct{}{})
	return !taken
}

// unclaimListener lets ln go, closed or left to the caller.
func unclaimListener(ln net.Listener) { served.Delete(ln) }

// closeClaimed closes ln, which a server claimed, and lets it go.
func closeClaimed(ln net.Listener) {
	ln.Close() // a Unix listener's socket file goes, as it would have
	served.Delete(ln)
}

// errServed is the error of an AddListener of a listener served already:
// net.ErrClosed if its user has closed it meanwhile (the server still
// holds it until it lets it go), os.ErrExist if not.
func errServed(ln net.Listener) error {
	if listenerClosed(ln) {
		return errClosedListener(ln)
	}
	return fmt.Errorf("netio: listener %v is served already: %w", ln.Addr(), os.ErrExist)
}

// errClosedListener is the error of an AddListener of a closed listener.
func errClosedListener(ln net.Listener) error {
	return fmt.Errorf("netio: listener %v: %w", ln.Addr(), net.ErrClosed)
}

// listenerClosed reports whether ln is closed, as its descriptor tells
// (a raw Control fails with net.ErrClosed): where it has none that Go
// closes with it (js's in-process network; Plan 9, where Control is not
// implemented), it reports false.
func listenerClosed(ln net.Listener) bool {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return errors.Is(err, net.ErrClosed)
	}
	return errors.Is(rc.Control(func(uintptr) {}), net.ErrClosed)
}

// inputCap is the most a connection's input buffer grows to: the
// unused input MaxInput lets a Handler leave and one read behind it. A
// MaxInput near math.MaxInt ("no bound") must not wrap the sum, which
// made the buffer anew, one read larger, at every read.
func (l *loop) inputCap() int {
	return l.maxInput + min(readSize, math.MaxInt-l.maxInput)
}

func (l *loop) movedBytes(n int) {
	if f := l.s.opt.moved; f != nil && n > 0 {
		f(n)
	}
}

// after finishes a call on c other than a read's Handler call: it sends
// the call's output, completes a Detach or a Close, and reports whether c
// is still served.
func (l *loop) after(c *LoopConn) bool {
	if c.det != nil {
		l.finishDetach(c, c.in[c.inOff:])
		return false
	}
	return l.sendAndCheck(c)
}

// sendAndCheck sends the output of the call that just returned and
// closes c if it was closing and all is sent. It reports whether c may
// be read on.
func (l *loop) sendAndCheck(c *LoopConn) bool {
	if !l.send(c) {
		return false
	}
	if c.closing {
		l.close(c, c.closeErr)
		return false
	}
	if c.full {
		l.writable(c)
		return !c.closed && !c.waiting && c.det == nil && !c.closing
	}
	return true
}

func (l *loop) unschedule(c *LoopConn) {
	i := int(c.heapIdx)
	if i < 0 {
		return
	}
	last := len(l.heap) - 1
	l.swap(i, last)
	l.heap[last] = nil
	l.heap = l.heap[:last]
	c.heapIdx = -1
	if i < last {
		l.down(i)
		l.up(i)
	}
}

func (l *loop) setDeadline(c *LoopConn, t time.Time) {
	if t.IsZero() {
		c.deadline = 0
		if tp := c.tls; tp != nil && tp.state == tlsHandshake && tp.bound != 0 {
			// A handshake stays bounded: by HandshakeTimeout.
			c.deadline, tp.deadline = tp.bound, tp.bound
			l.schedule(c)
		}
		return
	}
	c.deadline = max(int64(t.Sub(l.base)), 1)
	l.schedule(c)
}

func (l *loop) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if l.heap[p].heapAt <= l.heap[i].heapAt {
			return
		}
		l.swap(i, p)
		i = p
	}
}

func (l *loop) down(i int) {
	n := len(l.heap)
	for {
		m, a, b := i, 2*i+1, 2*i+2
		if a < n && l.heap[a].heapAt < l.heap[m].heapAt {
			m = a
		}
		if b < n && l.heap[b].heapAt < l.heap[m].heapAt {
			m = b
		}
		if m == i {
			return
		}
		l.swap(i, m)
		i = m
	}
}

func (l *loop) swap(i, j int) {
	h := l.heap
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = int32(i), int32(j)
}

// addTimer arms t for d from now: now read afresh, not at the loop's
// wake-up, since a Handler may run well after it.
func (l *loop) addTimer(t *LoopTimer, d time.Duration) {
	now := l.clock()
	t.at = now + min(max(int64(d), 0), 1<<62-max(now, 0))
	t.seq = l.timerSeq
	l.timerSeq++
	t.idx = len(l.timers)
	l.timers = append(l.timers, t)
	l.timerUp(t.idx)
	t.c.timers++
}

// popTimer takes the earliest timer out of the heap.
func (l *loop) popTimer() {
	h := l.timers
	t := h[0]
	last := len(h) - 1
	l.timerSwap(0, last)
	h[last] = nil
	l.timers = h[:last]
	t.idx = -1
	t.c.timers--
	if last > 0 {
		l.timerDown(0)
	}
}

// compactTimers drops the timers that will not run.
func (l *loop) compactTimers() {
	l.deadTimers.Store(0)
	kept := l.timers[:0]
	for _, t := range l.timers {
		if t.live() {
			t.idx = len(kept)
			kept = append(kept, t)
		} else {
			t.idx = -1
			t.c.timers--
		}
	}
	clear(l.timers[len(kept):])
	l.timers = kept
	for i := len(kept)/2 - 1; i >= 0; i-- {
		l.timerDown(i)
	}
}

func (l *loop) timerLess(i, j int) bool {
	a, b := l.timers[i], l.timers[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (l *loop) timerSwap(i, j int) {
	h := l.timers
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}

func (l *loop) timerUp(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !l.timerLess(i, p) {
			return
		}
		l.timerSwap(i, p)
		i = p
	}
}

func (l *loop) timerDown(i int) {
	n := len(l.timers)
	for {
		m, a, b := i, 2*i+1, 2*i+2
		if a < n && l.timerLess(a, m) {
			m = a
		}
		if b < n && l.timerLess(b, m) {
			m = b
		}
		if m == i {
			return
		}
		l.timerSwap(i, m)
		i = m
	}
}

// call runs f as a call on c, and reports whether it returned; if it
// panicked, c is closed.
func (l *loop) call(c *LoopConn, f func(*LoopConn)) (ok bool) {
	defer func() {
		if !ok {
			l.panicked(c, recover())
		}
	}()
	c.calling.Store(true)
	f(c)
	c.calling.Store(false)
	return true
}

// openPanic is, once OnOpen has run on c, the *PanicError that closed c
// because it panicked, or nil: Dial fails with it.
func openPanic(c *LoopConn) error {
	if pe, ok := c.closeErr.(*PanicError); ok && c.gone.Load() {
		return pe
	}
	return nil
}

// handle calls the Handler with in; !ok means it panicked or returned a
// used outside 0 to len(in), and c is closed.
func (l *loop) handle(c *LoopConn, in []byte) (used int, ok bool) {
	defer func() {
		if !ok {
			l.panicked(c, recover())
		}
	}()
	c.calling.Store(true)
	used = l.s.h(c, in)
	c.calling.Store(false)
	if used < 0 || used > len(in) {
		panic(fmt.Sprintf("netio: Handler returned %d used of %d bytes", used, len(in)))
	}
	return used, true
}

// callTimeout is call for OnTimeout.
func (l *loop) callTimeout(c *LoopConn, f func(*LoopConn, error), err error) (ok bool) {
	defer func() {
		if !ok {
			l.panicked(c, recover())
		}
	}()
	c.calling.Store(true)
	f(c, err)
	c.calling.Store(false)
	return true
}

// Deadlines. A connection with a time to check sits in the loop's heap at
// heapAt, which is never later than its earliest deadline; a deadline
// that moves later (input read, output sent) leaves the heap alone, and
// the connection is put back at its true time when heapAt comes.

// expiry is c's earliest deadline and its error, or 0.
func (l *loop) expiry(c *LoopConn) (int64, error) {
	if at := l.dialAt(c); at != 0 {
		return at, os.ErrDeadlineExceeded
	}
	at, err := int64(0), error(nil)
	switch {
	case c.waiting:
		if l.stall > 0 {
			at, err = c.progressAt+l.stall, ErrWriteTimeout
		}
	case !c.closing && !c.unread && !c.eof && !c.tlsHeld() && l.idle > 0:
		// Idle counts only while c is read: not while SetReading(false)
		// or a full TLS handshake holds it, nor after the peer's end of
		// stream.
		at, err = c.readAt+l.idle, ErrIdleTimeout
	}
	if c.deadline != 0 && (at == 0 || c.deadline < at) {
		at, err = c.deadline, os.ErrDeadlineExceeded
	}
	return at, err
}

// schedule puts c in the heap at its earliest deadline, if that is
// earlier than where it is.
func (l *loop) schedule(c *LoopConn) {
	at, _ := l.expiry(c)
	if at == 0 {
		return // if it is in the heap, it leaves when its time comes
	}
	if c.heapIdx < 0 {
		c.heapAt, c.heapIdx = at, int32(len(l.heap))
		l.heap = append(l.heap, c)
		l.up(int(c.heapIdx))
	} else if at < c.heapAt {
		c.heapAt = at
		l.up(int(c.heapIdx))
	}
}

// Timers (AfterFunc). The loop's wait ends at the earliest.

func (l *loop) timerStopped() { l.deadTimers.Add(1) }

// live reports whether t is still to run.
func (t *LoopTimer) live() bool {
	c := t.c
	return t.state.Load() == timerPending && !c.closed && !c.closing && c.det == nil
}

// runTimers runs the timers due at l.now, in order; timers armed by
// these calls wait for the next turn, even if due at once.
func (l *loop) runTimers() {
	if len(l.timers) == 0 {
		return // a loop without timers pays nothing for them
	}
	start := l.timerSeq
	for len(l.timers) > 0 {
		t := l.timers[0]
		if t.at > l.now || t.seq >= start {
			break
		}
		l.popTimer()
		c := t.c
		if !t.live() || !t.state.CompareAndSwap(timerPending, timerDone) {
			continue
		}
		if l.call(c, t.f) {
			l.finish(c)
		}
	}
	if d := l.deadTimers.Load(); d > 64 && d > int64(len(l.timers)/2) {
		l.compactTimers()
	}
}

// gracefulErr reports whether a connection closed with err closes in good
// order where it can: its output all sent, not reset. ErrInputTooLarge
// does: the replies to the input before it are sent (the lingering reads
// of what the peer goes on sending throw it away, bounded as any linger).
func gracefulErr(err error) bool {
	return err == nil || err == ErrIdleTimeout || err == os.ErrDeadlineExceeded || err == ErrInputTooLarge || tlsGraceful(err)
}

// closeTooLarge closes c, whose Handler left more than MaxInput unused,
// as Close does: nothing more is read (what comes is thrown away), and
// the output written so far is sent, the write timeout bounding each
// wait for room, before c closes and lingers. OnClose learns
// ErrInputTooLarge, with ErrUnsent if the output could not all be sent
// (droppedErr).
func (c *LoopConn) closeTooLarge() {
	c.markClosing()
	c.closeErr = ErrInputTooLarge
}

// droppedErr is what OnClose learns for c, closed with err while its
// output may still wait for room in its socket. A connection closing for
// a reason of its own (MaxInput, or the idle timeout or its deadline,
// after OnTimeout's farewell) whose output could not all be sent (the
// write timeout, a failed write, the peer's reset) learns that reason
// with err and ErrUnsent; one Close closed whose output a timeout cut
// short learns the timeout with ErrUnsent, as OnClose's doc has it; the
// other errors that drop output say so already, or are the server's.
func droppedErr(c *LoopConn, err error) error {
	if !c.waiting || err == ErrServerClosed {
		return err
	}
	why := c.closeErr // why c is closing, if it is
	if err == ErrInputTooLarge {
		why = err
	}
	switch why {
	case nil:
		if c.closing && (err == ErrWriteTimeout || err == ErrIdleTimeout || err == os.ErrDeadlineExceeded) {
			return unsent(err)
		}
		return err
	case ErrInputTooLarge, ErrIdleTimeout, os.ErrDeadlineExceeded:
	default:
		return err
	}
	if err == why || err == nil {
		return unsent(why)
	}
	if !errors.Is(err, ErrUnsent) {
		err = unsent(err)
	}
	return fmt.Errorf("%w: %w", why, err)
}

// unsent is err, what OnClose would have learned, with ErrUnsent.
func unsent(err error) error {
	if err == nil {
		return ErrUnsent
	}
	return fmt.Errorf("%w, and %w", err, ErrUnsent)
}

// A dial's claim: which of Dial and the loop ends it, once ctx has
// ended. The loop claims it to hand the connection over (before OnOpen);
// Dial abandons it at ctx's end and returns at once, even where the loop
// is its caller (a Handler's Dial, which the loop never served), and the
// loop then closes the connection.
const (
	dialPending int32 = iota
	dialClaimed
	dialAbandoned
)

// dialCtxErr is the error of a Dial that ctx ended with err: for its
// deadline, one that matches both os.ErrDeadlineExceeded and
// context.DeadlineExceeded and is a timeout (net.Error), as the one
// DialTimeout ends a Dial with and package net's Dial return.
func dialCtxErr(err error) error {
	switch err {
	case context.DeadlineExceeded:
		return dialDeadlineError{}
	case context.Canceled:
		return dialCanceledError{}
	}
	return err
}

// dialCanceledError is the error of a Dial whose context was cancelled:
// context.Canceled (errors.Is), in package net's Dial's text, "operation
// was canceled".
type dialCanceledError struct{}

func (dialCanceledError) Error() string     { return "operation was canceled" }
func (dialCanceledError) Is(err error) bool { return err == context.Canceled }

// dialDeadlineError is the error of a Dial whose context's deadline
// passed: in package net's Dial's text, "i/o timeout"; it matches
// os.ErrDeadlineExceeded too (net's does not), as a DialTimeout's end.
type dialDeadlineError struct{}

func (dialDeadlineError) Error() string   { return os.ErrDeadlineExceeded.Error() }
func (dialDeadlineError) Timeout() bool   { return true }
func (dialDeadlineError) Temporary() bool { return true }
func (dialDeadlineError) Unwrap() []error {
	return []error{os.ErrDeadlineExceeded, context.DeadlineExceeded}
}

// nextLoop is the loop whose turn it is to take a connection.
func (s *Loops) nextLoop() *loop {
	return s.loops[int(s.next.Add(1)-1)%len(s.loops)]
}

// drainOne hands c to OnShutdown, or without it closes c once its output
// is sent.
func (l *loop) drainOne(c *LoopConn) {
	if c.tls != nil && c.tls.state == tlsHandshake {
		c.tls.drain = true // once it is done
		return
	}
	if f := l.s.opt.OnShutdown; f != nil {
		if l.call(c, f) {
			l.finish(c)
		}
		return
	}
	l.drainConn(c)
}

// runTasks runs the functions posted to the loop, in order.
func (l *loop) runTasks() {
	l.mu.Lock()
	l.running, l.tasks = l.tasks, l.running[:0]
	l.mu.Unlock()
	for i, t := range l.running {
		l.running[i] = task{}
		if t.lf != nil {
			t.lf(l)
			continue
		}
		c := t.c
		c.dos.Add(-1)
		if c.closed || c.closing || c.det != nil {
			continue
		}
		if l.call(c, t.f) {
			l.finish(c)
		}
	}
}

// timeout ends c, which reached a deadline: a write timeout (or a TLS
// handshake's) closes it at once, the others once what it wrote, with
// OnTimeout's farewell, is sent, whether or not there is an OnTimeout
// (the write timeout, unless turned off, bounds that).
func (l *loop) timeout(c *LoopConn, err error) {
	if c.lingering { // the linger time is over
		l.endLinger(c, unsent(c.closeErr))
		return
	}
	if err == ErrWriteTimeout || c.tls != nil && c.tls.state == tlsHandshake {
		l.close(c, err)
		return
	}
	c.deadline = 0
	if c.closing {
		// Close, or MaxInput, closes c already, once its output is
		// sent, the write timeout bounding the wait: a deadline changes
		// nothing then. OnTimeout could write nothing, and its error
		// would hide what OnClose is to learn (ErrInputTooLarge, and
		// ErrUnsent if the output does not all leave).
		l.schedule(c)
		return
	}
	c.expired = true
	if f := l.s.opt.OnTimeout; f != nil && !l.callTimeout(c, f, err) {
		return
	}
	c.markClosing()
	c.closeErr = err
	if l.after(c) {
		l.close(c, err)
	} else {
		l.pump(c)
	}
}

// drainConn closes c, during a Shutdown without OnShutdown, once its
// output is sent.
func (l *loop) drainConn(c *LoopConn) {
	if l.s.opt.OnShutdown != nil || c.closed || c.lingering || c.det != nil {
		return
	}
	if c.tls != nil && c.tls.state == tlsHandshake {
		c.tls.drain = true // once it is done
		return
	}
	c.markClosing()
	if c.tls != nil {
		l.send(c) // close_notify
	}
	if c.closed {
		return
	}
	if !c.waiting {
		l.close(c, nil)
	} else {
		l.pump(c)
	}
}

// awaitDrain is the end of a Shutdown, for each of its callers: it waits
// until the connections are closed or ctx is done, and closes the server.
// It returns ctx's error if ctx ended first, else err, else Close's.
func (s *Loops) awaitDrain(ctx context.Context, err error) error {
	select {
	case <-s.sys.drained:
	default:
		select {
		case <-s.sys.drained:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

package netio

import (
	"io"
	"net"
	"sync"
	"time"
)

// Exported for testing only.

// NewWriterForTest is NewWriter with chunks of chunk bytes (0 for the
// default) and the adaptive window timed by now (nil for time.Now).
func NewWriterForTest(dst io.Writer, opt *Options, chunk int, now func() time.Time) *Writer {
	w := NewWriter(dst, opt)
	if chunk > 0 {
		w.chunk = chunk
	}
	if now != nil {
		w.now = now
	}
	return w
}

// SetWaitHook makes every Write that is about to wait for room call f,
// with the Writer's lock held, so f must not call the Writer.
func (w *Writer) SetWaitHook(f func()) {
	w.mu.Lock()
	w.waitHook = f
	w.mu.Unlock()
}

// HeldBytes is the memory held in chunks.
func (w *Writer) HeldBytes() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.chunks) * w.chunk
}

// Stall makes the queue stop draining, as if a writev were stuck, until
// the returned function is called.
func (w *Writer) Stall() (release func()) {
	w.mu.Lock()
	w.busy = true
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		w.busy = false
		w.kickLocked()
		w.mu.Unlock()
	}
}

// SetWindow sets the current window, as the adaptive window would.
func (w *Writer) SetWindow(win int) {
	w.mu.Lock()
	w.setWindow(win)
	w.mu.Unlock()
}

// Adapt feeds the adaptive window one writev of n bytes that took elapsed
// and ended at now.
func (w *Writer) Adapt(n int64, elapsed time.Duration, now time.Time) {
	w.mu.Lock()
	w.adaptLocked(n, elapsed, now)
	w.mu.Unlock()
}

// A FakeHold is a hold timer that fires only when the test says so.
type FakeHold struct {
	mu    sync.Mutex
	f     func()
	armed bool
	arms  int
}

func (t *FakeHold) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.armed
	t.armed = false
	return was
}

func (t *FakeHold) Reset(time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.armed
	t.armed = true
	t.arms++
	return was
}

// Armed reports whether the timer is armed, and how often it was armed.
func (t *FakeHold) Armed() (bool, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.armed, t.arms
}

// Fire runs the timer's function if it is armed, as its expiry would.
func (t *FakeHold) Fire() bool {
	t.mu.Lock()
	f, armed := t.f, t.armed
	t.armed = false
	t.mu.Unlock()
	if armed {
		f()
	}
	return armed
}

// NewConnForTest is NewConn with the hold timer replaced by hold.
func NewConnForTest(c net.Conn, opt *Options, hold *FakeHold) *Conn {
	nc := NewConn(c, opt)
	nc.w.hold = nil // made again, fake, on the first hold
	nc.w.afterFunc = func(_ time.Duration, f func()) stopResetter {
		hold.mu.Lock()
		hold.f = f
		hold.mu.Unlock()
		hold.Reset(0)
		return hold
	}
	return nc
}

// FlusherStarted reports whether the flusher goroutine was ever started.
func (w *Writer) FlusherStarted() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running
}

// SetSentHook makes the Loops server started with opt call f after each
// send of a Handler call's output, with its size and how much of it the
// socket took at once. f runs on the loop.
func SetSentHook(opt *LoopOptions, f func(out, written int)) { opt.sent = f }

// Pending is the output c holds unsent; call it on c's loop.
func (c *LoopConn) Pending() int { return len(c.pending) - c.off }

// SetLoopClock makes the Loops server started with opt read the time
// from now, for its timeouts and deadlines.
func SetLoopClock(opt *LoopOptions, now func() time.Time) { opt.Clock = now }

// SetMovedHook makes the Loops server started with opt call f with the
// size of every copy it makes of unused input.
func SetMovedHook(opt *LoopOptions, f func(n int)) { opt.moved = f }

// LoopIndex is the index of the loop that serves c.
func LoopIndex(c *LoopConn) int { return c.l.id }

// SetStoppedHook makes Shutdown, on the server started with opt, call f
// once it has stopped the listener, before it waits for anything.
func SetStoppedHook(opt *LoopOptions, f func()) { opt.stopped = f }

// SetDialingHook makes the Loops server started with opt call f on the
// loop each time a Dial starts waiting for its connect(2) to complete.
func SetDialingHook(opt *LoopOptions, f func()) { opt.dialing = f }

// SetListeningHook makes AddListener (and Serve), on the server started
// with opt, call f once it has duplicated its listener's socket and
// before it closes a TCP listener, on its caller's goroutine.
func SetListeningHook(opt *LoopOptions, f func()) { opt.listening = f }

// SetDialerHook makes the portable Loops server started with opt call f
// with each Dial's net.Dialer before it dials.
func SetDialerHook(opt *LoopOptions, f func(d *net.Dialer)) { opt.dialer = f }

// Limits are the MaxQueued, MaxInput, ReadBudget and MaxDo that s
// serves with.
func (s *Loops) Limits() [4]int {
	return [4]int{s.opt.MaxQueued, s.opt.MaxInput, s.opt.ReadBudget, s.opt.MaxDo}
}

// Limits are the MaxQueued, MinWindow and low water mark (of the current
// window) that w writes with.
func (w *Writer) Limits() [3]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return [3]int{w.opt.MaxQueued, w.opt.MinWindow, w.low}
}

// SetLingerHeldHook makes the Loops server started with opt take, while
// f reports true, a lingering connection's peer not to have all of its
// output: only the linger time (or the peer's end of stream) ends it.
func SetLingerHeldHook(opt *LoopOptions, f func() bool) { opt.lingerHeld = f }

// SetHandshakeHeldHook makes the Loops server started with opt call f on
// the loop, each time it gives a TLS handshake input, with what the
// handshake then holds unread.
func SetHandshakeHeldHook(opt *LoopOptions, f func(n int)) { opt.handshakeHeld = f }

// SetSpliceHook has f learn the bytes of each step w's ReadFrom splices
// (Linux). Call it before any ReadFrom.
func (w *Writer) SetSpliceHook(f func(n int64)) { w.spliceHook = f }

// SetCloseHook makes c's Close call f once it has begun. Call it before
// any Close.
func (c *Conn) SetCloseHook(f func()) { c.w.closeHook = f }

// SetClosedHook makes c's Close call f once it has closed the wrapped
// connection. Call it before any Close.
func (c *Conn) SetClosedHook(f func()) { c.w.closedHook = f }

// SetFlushHook makes each writev that a Flush of w makes itself call f
// just before it, without w's lock held. Call it before any Flush.
func (w *Writer) SetFlushHook(f func()) { w.flushHook = f }

// SetAnyCPU makes NewLoops, with opt, leave the CPUs no thread can be
// pinned to to the loops' pinning, which then fails (epoll).
func SetAnyCPU(opt *LoopOptions) { opt.anyCPU = true }

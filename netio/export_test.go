package netio

import (
	"io"
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

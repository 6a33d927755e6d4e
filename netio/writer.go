package netio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// Errors returned by a Writer. Deadlines fail with os.ErrDeadlineExceeded and
// contexts with the context's error, as in the net package.
var (
	// ErrQueueFull is returned by Write on a NonBlocking Writer whose queue
	// has no room for the whole message now. Nothing was accepted.
	ErrQueueFull = errors.New("netio: send queue full")
	// ErrTooLarge is returned by Write on a NonBlocking Writer for a message
	// larger than MaxQueued, which can never fit. Nothing was accepted.
	ErrTooLarge = errors.New("netio: message larger than the send queue bound")
	// ErrClosed is returned after Close: by a Writer or Conn, and by a
	// LoopConn's methods. It matches net.ErrClosed too (errors.Is), as the
	// error of an I/O call on a closed net.Conn does.
	ErrClosed error = closedError{}
	// ErrUnsent is returned by Conn.Close when it closed the connection
	// with data still queued: the linger time ran out, or Linger is
	// negative. Stats tells how much (Accepted - Written).
	ErrUnsent = errors.New("netio: connection closed with queued data unsent")
	// ErrWriteClosed is returned by a Conn's Write, WriteString,
	// WriteContext and ReadFrom after its CloseWrite.
	ErrWriteClosed = errors.New("netio: write after CloseWrite")
)

// closedError is ErrClosed: an error of its own that also matches
// net.ErrClosed.
type closedError struct{}

func (closedError) Error() string        { return "netio: closed" }
func (closedError) Is(target error) bool { return target == net.ErrClosed }

// DefaultLinger is how long Conn.Close waits for queued data by default.
const DefaultLinger = 5 * time.Second

const (
	chunkSize  = 16 << 10
	smallChunk = 256  // the Writer's own first chunk
	maxIovecs  = 1024 // per writev, the Linux and Darwin IOV_MAX
	// maxBatch bounds the bytes of one writev, so that a slow peer still
	// shows progress (waking blocked writers, sampling the drain rate) at
	// least every maxBatch bytes.
	maxBatch        = 256 << 10
	defaultMaxQueue = 1 << 20
	defaultMinWin   = 64 << 10
	adaptPeriod     = 5 * time.Millisecond
)

var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, chunkSize); return &b }}

// Options configure a Writer. The zero value is usable.
type Options struct {
	// MaxQueued is the high watermark: the most bytes accepted but not yet
	// handed to the kernel. Default (0 or negative) 1 MiB.
	MaxQueued int
	// LowWater is where a blocked Write resumes. Default (0 or negative)
	// half the window.
	LowWater int
	// NonBlocking makes Write fail with ErrQueueFull instead of waiting
	// when the message does not fit (a Conn's Writes held for the next
	// Read are then sent, as when a Write waits). A message larger than
	// the current window is accepted whole when the queue is empty, so
	// the adaptive window never locks it out; one larger than MaxQueued
	// fails with ErrTooLarge. WriteContext always waits.
	NonBlocking bool
	// TargetDelay, if positive, enables the adaptive window: the window is
	// the measured drain rate times TargetDelay, kept within
	// [MinWindow, MaxQueued].
	TargetDelay time.Duration
	// MinWindow is the smallest adaptive window. Default (0 or negative)
	// 64 KiB (at most MaxQueued).
	MinWindow int
	// Linger bounds how long Conn.Close waits for queued data to reach the
	// kernel before closing the connection anyway (it then returns
	// ErrUnsent). Default DefaultLinger; negative: do not wait. An earlier
	// write deadline ends the wait too. Writer.Close does not use it.
	Linger time.Duration
	// MaxHold, if positive, bounds how long a [Conn] whose Read has been
	// called holds a Write made while no Read is in progress for the next
	// Read to send (see [Conn.Read]); then the flusher sends it. It arms a
	// timer per held Write, which costs the caller latency where idle
	// threads wait in the poller. Zero, the default: a held Write waits for the next
	// Read, Flush or Close. Negative: never hold; every Write goes to the
	// flusher, as on a bare Writer.
	MaxHold time.Duration
}

// Stats is a snapshot of a Writer's counters.
type Stats struct {
	Accepted  int64   // bytes accepted by Write
	Written   int64   // bytes accepted by the kernel
	Queued    int     // bytes waiting (Accepted - Written unless there was an error)
	Window    int     // current high watermark
	Writes    int64   // successful Write calls
	Flushes   int64   // writev calls (net.Buffers.WriteTo)
	MaxIovecs int     // most buffers passed to one writev
	DrainRate float64 // measured bytes/s (adaptive window only)
}

// A Writer coalesces small writes to an io.Writer, normally a net.Conn.
// Its methods are safe for concurrent use.
type Writer struct {
	dst   io.Writer
	opt   Options
	chunk int              // chunk size; chunkSize except in tests
	now   func() time.Time // clock of the adaptive window; time.Now except in tests
	// waitHook, if set (only by tests), is called with mu held each time a
	// Write is about to wait for room.
	waitHook func()
	// spliceHook, if set (only by tests, before any ReadFrom), learns
	// the bytes of each step a ReadFrom splices.
	spliceHook func(n int64)
	// closeHook, if set (only by tests), is called by Conn.Close once it
	// has begun, in the calling goroutine.
	closeHook func()
	// closedHook, if set (only by tests), is called by Conn.Close once it
	// has closed the connection, in the calling goroutine.
	closedHook func()
	// flushHook, if set (only by tests), is called by each writev that
	// Flush makes in its own goroutine, just before it, without mu held.
	flushHook func()
	// afterFunc arms the hold timer; time.AfterFunc except in tests.
	afterFunc func(d time.Duration, f func()) stopResetter

	mu     sync.Mutex
	chunks []*[]byte // queued data; the first starts at head
	// small is the chunk used first, in place of a pooled one while free.
	small     [smallChunk]byte
	chunks0   [2]*[]byte // chunks' and iov's first backing arrays, so that
	iov0      [2][]byte  // a small batch allocates nothing deep in a stack
	smallBuf  []byte     // small[:len] while in chunks
	smallUsed bool
	head      int
	queued    int
	window    int
	low       int
	err       error
	closed    bool
	connClose bool // Conn.Close has begun: a later one returns ErrClosed
	shut      bool // Conn.Close is closing the connection: Writes fail with ErrClosed
	writeShut bool // Conn.CloseWrite: Writes fail with ErrWriteClosed
	running   bool // flusher goroutine started
	parked    bool // flusher waiting on kick
	busy      bool // a writev is in flight, or a ReadFrom holds the stream
	// A ReadFrom in progress (copying) holds busy, and copies in steps.
	// Close stops it (copyStop): it returns ErrClosed at its next step.
	// copyOut: it is writing to dst, so busy stays its until that returns.
	copying  bool
	copyStop bool
	copyOut  bool
	copied   int64         // bytes ReadFrom wrote, in stats.Accepted and Written
	closing  bool          // Close has begun: a ReadFrom does not start
	kick     chan struct{} // made with the flusher
	// Holding for the reader (Conn only): once a Read has been called
	// (readSeen), a Write made while no Read is in progress (readers == 0)
	// is left for the next Read to send, with the hold timer armed in case
	// that Read does not come.
	readSeen bool
	readers  int
	// drained: the last Read returned less than its buffer, so the
	// socket was empty then; the next Read sends the queue first. Here,
	// under mu, as Reads may run at once.
	drained  bool
	holding  bool
	hold     stopResetter
	done     chan struct{} // closed when the flusher exits
	changed  chan struct{} // closed on progress when waiters > 0
	waiters  int
	deadline time.Time
	// deadlines counts SetWriteDeadline calls; batchDeadlines is its value
	// when the writev in flight began, so that a timeout of a writev that
	// began under an older deadline is not kept as the write error.
	deadlines      uint64
	batchDeadlines uint64
	iov            [][]byte
	bufs           net.Buffers // iov as handed to WriteTo, which consumes it
	stats          Stats
	// adaptive window sampling
	batchStart time.Time // of the writev in flight
	adBytes    int64
	adBusy     time.Duration
	adStart    time.Time
}

// NewWriter returns a Writer sending to dst. If opt is nil, defaults apply.
func NewWriter(dst io.Writer, opt *Options) *Writer {
	w := &Writer{dst: dst, chunk: chunkSize, now: time.Now, afterFunc: afterFunc}
	w.chunks, w.iov = w.chunks0[:0], w.iov0[:0]
	if opt != nil {
		w.opt = *opt
	}
	o := &w.opt
	if o.MaxQueued <= 0 {
		o.MaxQueued = defaultMaxQueue
	}
	if o.MinWindow <= 0 {
		o.MinWindow = defaultMinWin
	}
	o.MinWindow = min(o.MinWindow, o.MaxQueued)
	if o.Linger == 0 {
		o.Linger = DefaultLinger
	}
	w.setWindow(o.MaxQueued)
	return w
}

func (w *Writer) setWindow(win int) {
	w.window = win
	w.low = win / 2
	if w.opt.LowWater > 0 {
		w.low = min(w.opt.LowWater, win)
	}
}

// Write queues a copy of p. When p does not fit in the window, Write waits
// until the queue has drained to the low watermark and p fits, or until the
// deadline set by SetWriteDeadline. It returns len(p) and nil, or the number
// of bytes accepted and the reason the rest was not. A p no larger than the
// window is accepted whole or not at all, so concurrent Writes of messages
// never interleave; a larger p is queued piecewise as room appears.
//
// A NonBlocking Writer never waits and accepts p whole or not at all: when p
// does not fit it fails at once with ErrQueueFull, except that a p larger
// than the window is accepted into an empty queue; a p larger than MaxQueued
// fails with ErrTooLarge.
func (w *Writer) Write(p []byte) (int, error) { return write(w, nil, p) }

// WriteString is like Write for a string, without converting it.
func (w *Writer) WriteString(s string) (int, error) { return write(w, nil, s) }

// WriteContext is like Write but waits for room until ctx is done (and the
// write deadline), even on a NonBlocking Writer.
func (w *Writer) WriteContext(ctx context.Context, p []byte) (int, error) {
	return write(w, ctx, p)
}

func write[T []byte | string](w *Writer, ctx context.Context, p T) (int, error) {
	w.mu.Lock()
	total := 0
	for {
		if err := w.errLocked(true); err != nil {
			w.mu.Unlock()
			return total, err
		}
		if len(p) == 0 {
			w.mu.Unlock()
			return 0, nil
		}
		room := w.window - w.queued
		blocking := ctx != nil || !w.opt.NonBlocking
		if room >= len(p) || (!blocking && w.queued == 0 && len(p) <= w.opt.MaxQueued) {
			appendQueued(w, p)
			w.kickLocked()
			w.stats.Writes++
			w.mu.Unlock()
			return total + len(p), nil
		}
		if !blocking {
			if len(p) > w.opt.MaxQueued {
				w.mu.Unlock()
				return total, ErrTooLarge
			}
			// What is held for a Read must drain for a later Write to
			// fit, as for a blocking one.
			if w.queued > 0 && w.err == nil {
				w.wakeFlusherLocked()
			}
			w.mu.Unlock()
			return total, ErrQueueFull
		}
		if len(p) > w.window && room > 0 {
			// Larger than the window: queue it piecewise.
			appendQueued(w, p[:room])
			w.kickLocked()
			p = p[room:]
			total += room
		}
		// Whatever is held for a Read must drain for this Write to go on.
		w.wakeFlusherLocked()
		if w.waitHook != nil {
			w.waitHook()
		}
		if err := w.waitLocked(ctx, true, func() bool {
			need := len(p)
			if need > w.window {
				need = 1
			}
			return w.queued <= w.low && w.window-w.queued >= need
		}); err != nil {
			w.mu.Unlock()
			return total, err
		}
	}
}

// errLocked is why a Write cannot go on: after Close, ErrClosed, whatever
// the write error was (which Close and Flush report); else the write
// error, or nil.
func (w *Writer) errLocked(closedIsErr bool) error {
	if (w.closed || w.shut) && closedIsErr {
		return ErrClosed
	}
	if w.writeShut && closedIsErr {
		return ErrWriteClosed
	}
	return w.err
}

// appendQueued copies p to the tail of the queue; w.mu is held.
func appendQueued[T []byte | string](w *Writer, p T) {
	w.queued += len(p)
	w.stats.Accepted += int64(len(p))
	for len(p) > 0 {
		var c *[]byte
		if k := len(w.chunks); k > 0 && len(*w.chunks[k-1]) < cap(*w.chunks[k-1]) {
			c = w.chunks[k-1]
		} else {
			c = w.getChunk()
			w.chunks = append(w.chunks, c)
		}
		b := *c
		n := copy(b[len(b):cap(b)], p)
		*c = b[:len(b)+n]
		p = p[n:]
	}
}

func (w *Writer) getChunk() *[]byte {
	if !w.smallUsed && w.chunk == chunkSize {
		// Requests and responses fit here: no pool, and no allocation
		// on a pool miss deep in a connection goroutine's stack.
		w.smallUsed = true
		w.smallBuf = w.small[:0]
		return &w.smallBuf
	}
	if w.chunk != chunkSize {
		b := make([]byte, 0, w.chunk)
		return &b
	}
	return chunkPool.Get().(*[]byte)
}

func (w *Writer) putChunk(c *[]byte) {
	if c == &w.smallBuf {
		w.smallUsed = false
		return
	}
	*c = (*c)[:0]
	if cap(*c) == chunkSize {
		chunkPool.Put(c)
	}
}

// kickLocked makes sure the queue will be sent: by the next Read of a Conn
// whose reader is between Reads, or else by the flusher.
func (w *Writer) kickLocked() {
	if w.readSeen && w.readers == 0 && w.opt.MaxHold >= 0 && !w.closed {
		if !w.holding {
			w.holding = true
			if w.opt.MaxHold == 0 {
				return // until the next Read, Flush or Close
			}
			if w.hold == nil {
				w.hold = w.afterFunc(w.opt.MaxHold, w.holdExpired)
			} else {
				w.hold.Reset(w.opt.MaxHold)
			}
		}
		return
	}
	w.wakeFlusherLocked()
}

// unholdLocked disarms the hold timer.
func (w *Writer) unholdLocked() {
	if w.holding {
		w.holding = false
		if w.hold != nil {
			w.hold.Stop()
		}
	}
}

// holdExpired runs when a held Write waited MaxHold without a Read: the
// connection is treated as a writer that does not read, whose Writes go to
// the flusher, until its next Read.
func (w *Writer) holdExpired() {
	w.mu.Lock()
	if w.holding {
		w.holding = false
		if w.queued > 0 {
			w.readSeen = false
			w.wakeFlusherLocked()
		}
	}
	w.mu.Unlock()
}

// wakeFlusherLocked starts the flusher goroutine, or wakes it if parked.
func (w *Writer) wakeFlusherLocked() {
	if !w.running {
		w.running = true
		w.kick = make(chan struct{}, 1)
		w.done = make(chan struct{})
		go w.flusher()
		return
	}
	if w.parked {
		w.parked = false
		w.kick <- struct{}{}
	}
}

// A stopResetter is the hold timer: a *time.Timer, or a fake in tests.
type stopResetter interface {
	Stop() bool
	Reset(d time.Duration) bool
}

func afterFunc(d time.Duration, f func()) stopResetter { return time.AfterFunc(d, f) }

// beginRead marks a Read in progress and reports whether anything is queued
// for it to send before it waits, and whether the last Read drained the
// socket.
func (w *Writer) beginRead() (pending, drained bool) {
	w.mu.Lock()
	w.readSeen = true
	w.readers++
	pending, drained = w.queued > 0, w.drained
	w.mu.Unlock()
	return pending, drained
}

// endRead marks the end of a Read, which drained the socket if it returned
// less than its buffer.
func (w *Writer) endRead(drained bool) {
	w.mu.Lock()
	w.readers--
	w.drained = drained
	w.mu.Unlock()
}

// flushForRead sends what is queued, in the calling goroutine, before a
// Read waits. A write error is left for the next Write to return.
func (w *Writer) flushForRead() {
	w.mu.Lock()
	w.unholdLocked()
	w.drainLocked(nil, false)
	if w.queued > 0 && w.err == nil {
		w.wakeFlusherLocked() // written meanwhile by another goroutine
	}
	w.mu.Unlock()
}

func (w *Writer) flusher() {
	defer close(w.done)
	w.mu.Lock()
	for {
		for w.queued == 0 || w.busy || w.err != nil {
			if w.err != nil || (w.closed && w.queued == 0) {
				w.parked = false
				// A write deadline's error may be cleared
				// (SetWriteDeadline): the next kick starts another.
				w.running = w.err == nil
				w.mu.Unlock()
				return
			}
			w.parked = true
			w.mu.Unlock()
			<-w.kick
			w.mu.Lock()
		}
		w.writeBatchLocked(true)
	}
}

// writeBatchLocked hands up to maxIovecs queued chunks (and about maxBatch
// bytes) to the kernel with one net.Buffers.WriteTo. It is called with w.mu
// held and !w.busy, and unlocks w.mu during the system call. (Conn.Read's
// flushFD is the same with a non-blocking write on the socket.)
//
// If the destination panics, w.mu is held again and the Writer fails from
// then on (errDstPanic); the panic goes on up a caller's goroutine (Flush
// and the like), as bufio's would, and ends the flusher's write.
func (w *Writer) writeBatchLocked(flusher bool) {
	w.beginBatchLocked()
	w.bufs = w.iov // a field: a local would escape to the heap through WriteTo
	returned := false
	defer func() {
		if returned {
			return
		}
		v := recover() // nil: runtime.Goexit, which goes on by itself
		w.endBatch(0, fmt.Errorf("%w: %v", errDstPanic, v))
		if v != nil && !flusher {
			panic(v)
		}
	}()
	if !flusher && w.flushHook != nil {
		w.flushHook()
	}
	n, err := w.bufs.WriteTo(w.dst)
	returned = true
	w.endBatch(n, err)
}

// errDstPanic is the Writer's error once its destination panicked in a
// write: how much of that write went out is unknown.
var errDstPanic = errors.New("netio: the Writer's destination panicked")

// writeError wraps the error of a write to the socket as the net package
// does.
//
//go:noinline
func (w *Writer) writeError(err error) error {
	c, ok := w.dst.(net.Conn)
	if !ok {
		return err
	}
	return &net.OpError{Op: "writev", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("writev", err)}
}

// beginBatchLocked puts up to maxIovecs queued chunks (and about maxBatch
// bytes) in w.iov, marks the writev in flight and unlocks w.mu. It returns
// the batch's size. It and endBatch are kept out of line so that the frame
// under the writev, on the stack of a Conn's reading goroutine, stays small.
//
//go:noinline
func (w *Writer) beginBatchLocked() int {
	w.busy = true
	iov := w.iov[:0]
	size := 0
	for i, c := range w.chunks {
		if len(iov) == maxIovecs || size >= maxBatch {
			break
		}
		b := *c
		if i == 0 {
			b = b[w.head:]
		}
		iov = append(iov, b)
		size += len(b)
	}
	w.iov = iov
	w.batchDeadlines = w.deadlines
	w.stats.Flushes++
	w.stats.MaxIovecs = max(w.stats.MaxIovecs, len(iov))
	w.mu.Unlock()
	if w.opt.TargetDelay > 0 {
		w.batchStart = w.now()
	}
	return size
}

// endBatch relocks w.mu and accounts for a writev that wrote n bytes.
//
//go:noinline
func (w *Writer) endBatch(n int64, err error) {
	var end time.Time
	if w.opt.TargetDelay > 0 {
		end = w.now()
	}
	clear(w.iov)

	w.mu.Lock()
	w.busy = false
	w.consumeLocked(int(n))
	if err != nil && w.shut && errors.Is(err, net.ErrClosed) {
		// Conn.Close closed the connection under this writev, or
		// before it: the Writer is closed, which Flush reports as a
		// Write does, with ErrClosed.
		err = ErrClosed
	}
	if err != nil && w.err == nil && !(w.batchDeadlines != w.deadlines && errors.Is(err, os.ErrDeadlineExceeded)) {
		w.err = err
	}
	if w.opt.TargetDelay > 0 && n > 0 {
		w.adaptLocked(n, end.Sub(w.batchStart), end)
	}
	if w.waiters > 0 {
		w.broadcastLocked()
	}
}

// consumeLocked drops n written bytes from the head of the queue.
func (w *Writer) consumeLocked(n int) {
	w.queued -= n
	w.stats.Written += int64(n)
	k := 0 // chunks fully written
	for n > 0 {
		c := w.chunks[k]
		avail := len(*c) - w.head
		if n < avail {
			w.head += n
			break
		}
		n -= avail
		w.head = 0
		w.putChunk(c)
		k++
	}
	if k > 0 {
		m := copy(w.chunks, w.chunks[k:])
		clear(w.chunks[m:])
		w.chunks = w.chunks[:m]
	}
}

// adaptLocked updates the drain-rate estimate and the window after a writev
// of n bytes that took elapsed. The rate is bytes over time spent in writev,
// sampled every adaptPeriod of writev time or wall time: a peer that drains
// slowly keeps writev blocked, so the sample converges on its rate.
func (w *Writer) adaptLocked(n int64, elapsed time.Duration, now time.Time) {
	w.adBytes += n
	w.adBusy += elapsed
	if w.adStart.IsZero() {
		w.adStart = now.Add(-elapsed)
	}
	if now.Sub(w.adStart) < adaptPeriod {
		return
	}
	rate := float64(w.adBytes) / max(w.adBusy.Seconds(), 1e-6)
	w.adBytes, w.adBusy, w.adStart = 0, 0, time.Time{}
	if w.stats.DrainRate == 0 {
		w.stats.DrainRate = rate
	} else {
		w.stats.DrainRate += (rate - w.stats.DrainRate) / 2
	}
	win := int(min(w.stats.DrainRate*w.opt.TargetDelay.Seconds(), float64(w.opt.MaxQueued)))
	w.setWindow(max(win, w.opt.MinWindow))
}

// waitLocked waits, with w.mu held, until cond holds, a write error occurs
// (or the Writer is closed, if closedIsErr), ctx is done or the deadline
// passes.
func (w *Writer) waitLocked(ctx context.Context, closedIsErr bool, cond func() bool) error {
	var timer *time.Timer
	var ctxDone <-chan struct{}
	if ctx != nil {
		ctxDone = ctx.Done()
	}
	for !cond() {
		if err := w.errLocked(closedIsErr); err != nil {
			return err
		}
		if ctx != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		var expired <-chan time.Time
		if !w.deadline.IsZero() {
			d := time.Until(w.deadline)
			if d <= 0 {
				return os.ErrDeadlineExceeded
			}
			if timer == nil {
				timer = time.NewTimer(d)
				defer timer.Stop()
			} else {
				timer.Reset(d)
			}
			expired = timer.C
		}
		if w.changed == nil {
			w.changed = make(chan struct{})
		}
		ch := w.changed
		w.waiters++
		w.mu.Unlock()
		select {
		case <-ch:
		case <-expired:
		case <-ctxDone:
		}
		w.mu.Lock()
		w.waiters--
	}
	return nil
}

// broadcastLocked wakes every waiter.
func (w *Writer) broadcastLocked() {
	if w.changed != nil {
		close(w.changed)
		w.changed = nil
	}
}

// SetWriteDeadline sets the time after which blocked Write, Flush and Close
// calls stop waiting for the queue and fail with os.ErrDeadlineExceeded. It
// does not bound a writev already in the kernel: set the connection's write
// deadline for that ([Conn.SetWriteDeadline] sets both), before this one.
// Zero means none.
//
// A writev that failed for the connection's write deadline (an error
// matching os.ErrDeadlineExceeded) fails the Writer only until the next
// SetWriteDeadline: as with a net.Conn, a new deadline lets it go on, with
// the bytes that writev did not write still queued, in order.
func (w *Writer) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	w.deadline = t
	w.deadlines++
	if w.err != nil && errors.Is(w.err, os.ErrDeadlineExceeded) {
		w.err = nil
		if w.queued > 0 && !w.closed {
			w.kickLocked()
		}
	}
	w.broadcastLocked() // waiters re-arm with the new deadline
	w.mu.Unlock()
	return nil
}

// Flush waits until every byte accepted before the call has been accepted
// by the kernel, writing in the calling goroutine when no writev is in
// flight. It returns the first write error, if any.
func (w *Writer) Flush() error { return w.flush(nil) }

// FlushContext is like Flush but leaves the writing to the flusher and stops
// waiting when ctx is done.
func (w *Writer) FlushContext(ctx context.Context) error { return w.flush(ctx) }

func (w *Writer) flush(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ctx == nil {
		w.unholdLocked() // this call sends what is held
	}
	if err := w.drainLocked(ctx, false); err != nil {
		return err
	}
	if ctx == nil && w.queued > 0 {
		w.kickLocked() // writes queued after target are the flusher's
	}
	return w.err
}

// drainLocked waits, with w.mu held, until every byte queued before the
// call is written or a write fails (the error is then in w.err), and with
// idle also until no writev is in flight. With a nil ctx the caller writes
// batches itself whenever no writev is in flight; otherwise the flusher
// writes and the wait ends when ctx is done. It returns only wait errors
// (deadline, ctx).
func (w *Writer) drainLocked(ctx context.Context, idle bool) error {
	// Counted without what ReadFrom wrote: the copy under way writes
	// before the queue, and adds to both counts as it goes.
	target := w.stats.Accepted - w.copied
	done := func() bool { return w.stats.Written-w.copied >= target && !(idle && w.busy) }
	for !done() && w.err == nil {
		if ctx == nil && !w.busy {
			w.writeBatchLocked(false)
			continue
		}
		if ctx != nil {
			w.wakeFlusherLocked()
		}
		if err := w.waitLocked(ctx, false, func() bool { return done() || (ctx == nil && !w.busy) }); err != nil {
			return err
		}
	}
	return nil
}

// Close flushes the queue (see Flush), stops the flusher goroutine and makes
// later Writes fail with ErrClosed. It does not close the underlying writer,
// so it blocks while a writev does (bound it with a write deadline on the
// connection, or use [Conn.Close], which is bounded by Options.Linger).
// If the flush fails for lack of time (deadline), the flusher keeps trying
// in the background until the queue drains or a write fails.
//
// A ReadFrom in progress is stopped first: Close waits for its write to
// the underlying writer, if one is under way, and it then returns
// ErrClosed without writing or reading more. One waiting for its source
// does not hold Close: once that read returns, it returns ErrClosed,
// dropping what it read. So nothing is written once Close has returned.
func (w *Writer) Close() error {
	w.mu.Lock()
	w.closing = true
	w.stopCopyLocked(w.shut)
	// Wait for a copy's write, whatever the deadline.
	for w.copyOut && w.copying {
		w.waitCopyLocked()
	}
	w.mu.Unlock()
	err := w.Flush()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return err
	}
	w.closed = true
	w.unholdLocked()
	w.broadcastLocked()
	if w.parked {
		w.parked = false
		w.kick <- struct{}{}
	}
	done := w.done
	stuck := err != nil && w.err == nil
	w.mu.Unlock()
	if done != nil && !stuck {
		<-done
	}
	return err
}

// stopCopyLocked makes a ReadFrom in progress return ErrClosed at its next
// step and takes the stream back from it, unless it is writing: then it
// gives it back once that write returns. With force (the connection is
// closed, so that write fails) it takes the stream back at once.
func (w *Writer) stopCopyLocked(force bool) {
	if !w.copying {
		return
	}
	w.copyStop = true
	if w.copyOut && !force {
		return
	}
	w.endCopyLocked()
}

// endCopyLocked gives the stream back from a ReadFrom.
func (w *Writer) endCopyLocked() {
	w.copying = false
	w.busy = false
	if w.queued > 0 {
		w.kickLocked()
	}
	w.broadcastLocked()
}

// waitCopyLocked waits, with w.mu held, for a change of state (the end of
// a ReadFrom's write, among others).
func (w *Writer) waitCopyLocked() {
	if w.changed == nil {
		w.changed = make(chan struct{})
	}
	ch := w.changed
	w.waiters++
	w.mu.Unlock()
	<-ch
	w.mu.Lock()
	w.waiters--
}

// Stats returns a snapshot of the counters.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Queued = w.queued
	s.Window = w.window
	return s
}

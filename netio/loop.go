package netio

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A Handler answers what a connection of a [Loops] server sent. It is
// called on the connection's event loop with the bytes read so far and
// not yet used (at most LoopOptions.MaxInput + 64 KiB: what it left
// unused and one read), and returns how many of them it used: the rest
// is given to it again, in front of the next bytes read (a used outside 0 to
// len(in) is taken for a panic of the Handler). in is valid only during
// the call. What the Handler
// writes to c leaves, with everything else it wrote in the same call, in
// one write(2) after it returns.
//
// Once the peer has ended its stream, the Handler is called one last
// time, with what is left unused (perhaps nothing) and c.EOF reporting
// true; the connection stays open for output until it is closed.
//
// A Handler must not block: the loop serves its other connections only
// between calls. A panic in a Handler, in a LoopOptions callback or in a
// function run by Do or AfterFunc is recovered, as net/http's server
// does: the connection is closed at once, its output dropped, and
// OnClose learns a *PanicError (errors.Is ErrPanic) with the panic's
// value and stack; the server and its other connections go on. A panic
// in OnClose or OnAcceptError has no connection to close, and is
// dropped. A Handler or callback must not call runtime.Goexit (t.Fatal
// or t.FailNow in a test; the testing package allows them only on the
// test's goroutine, use t.Error): that cannot be recovered, and ends the
// loop's goroutine: the loop's connections are closed, and those it
// would accept next are not served until Close.
type Handler func(c *LoopConn, in []byte) (used int)

// LoopOptions configure a [Loops] server. The zero value is usable, with
// every limit and timeout on.
type LoopOptions struct {
	// Loops is the number of event loops, each a goroutine (on a locked
	// OS thread where CPUs pins it); 0 or a negative value means
	// GOMAXPROCS-1, at least 1 and at most MaxLoops. Loops run best with
	// GOMAXPROCS above Loops, so that the runtime leaves a loop's
	// processor alone while the loop waits in epoll_wait. More than
	// MaxLoops fails with os.ErrInvalid, with either implementation.
	Loops int
	// CPUs, if not empty, pins loop i to CPUs[i%len(CPUs)]; Serve fails
	// if a loop cannot be pinned, with an error matching os.ErrInvalid
	// that names a CPU no loop can be pinned to: a negative one, or, on
	// Linux, one the system does not have online or this process may
	// not run on (a cpuset's), which NewLoops finds by pinning a thread
	// of its own to each CPU before any loop starts. The portable
	// implementation pins no loop, but refuses the same CPUs.
	CPUs []int
	// MaxQueued bounds the bytes a connection holds unsent; a Write past
	// it fails with ErrQueueFull. 0 or a negative value means 1 MiB, as
	// for a Writer: a limit is never off (a very large one, such as
	// math.MaxInt, is in effect no bound).
	MaxQueued int
	// MaxInput bounds the bytes a Handler may leave unused; past it the
	// connection is closed with ErrInputTooLarge as Close closes it:
	// nothing more is read (what the peer sends is thrown away), and what
	// the Handler wrote, a reply such as "line too long" included, is
	// sent first, output waiting for room as long as the write timeout
	// lets it, and the close lingers. If the output cannot all be sent
	// (the write timeout, the peer's reset), OnClose learns ErrUnsent
	// with ErrInputTooLarge. 0 or a negative value means 64 KiB.
	MaxInput int
	// ReadBudget is how many bytes a loop reads from one connection
	// before it serves the others; the rest is read on its next turn.
	// 0 or a negative value means 256 KiB.
	ReadBudget int
	// MaxDo bounds the functions Do has queued for a connection and its
	// loop has not yet run; past it Do fails with ErrQueueFull. 0 or a
	// negative value means 256.
	MaxDo int
	// IdleTimeout closes a connection that has sent nothing for that
	// long while it was being read (ErrIdleTimeout): not while
	// SetReading(false) or a full TLS handshake (MaxHandshakeInput)
	// holds it or its output waits for room, nor after the peer's end of
	// stream. 0 means DefaultIdleTimeout (5 minutes), a negative value
	// none.
	IdleTimeout time.Duration
	// WriteTimeout closes a connection whose output has waited for room
	// that long without any of it being sent (ErrWriteTimeout): a peer
	// that reads slowly but steadily makes progress, and is not closed,
	// even while the socket's buffer stays too full to take more (what
	// the peer took from it is looked at when the timeout comes, so a
	// peer that stops taking bytes is closed between WriteTimeout and
	// twice that after). 0 means DefaultWriteTimeout (1 minute), a
	// negative value none.
	WriteTimeout time.Duration
	// DialTimeout bounds a Dial's connect(2)s, on the loop's clock (ctx
	// bounds them too; a name's addresses share it, as package net's
	// Dial shares its timeout): past it Dial fails with an error
	// matching os.ErrDeadlineExceeded. 0 means 30 seconds, a negative
	// value none.
	DialTimeout time.Duration

	// OnOpen, if set, is called on the loop when a connection is added
	// (accepted, or dialed: before Dial returns), before its first
	// Handler call. It may write (a greeting).
	OnOpen func(c *LoopConn)
	// OnClose, if set, is called on the loop when a connection whose
	// OnOpen ran (with TLSConfig: whose handshake succeeded) has been
	// closed: err is nil after Close (ErrUnsent if
	// the peer did not take all of the output in time), ErrServerClosed
	// when the server closed it, ErrDetached after Detach, a timeout's
	// error, or what went wrong; it wraps ErrUnsent (and the system
	// call's error) when a write failed, so that output written to the
	// connection did not all leave.
	OnClose func(c *LoopConn, err error)
	// OnTimeout, if set, is called on the loop, as a Handler is, when
	// the idle timeout or the connection's deadline has passed; what it
	// writes (a farewell) is sent before the connection is closed (if
	// it cannot all be, the write timeout or the peer's reset cutting it
	// short, OnClose learns the timeout with that error and ErrUnsent). A
	// deadline that passes once the connection is closing (Close, or
	// MaxInput) changes nothing: OnTimeout is not called, and the write
	// timeout bounds the wait for the output. The
	// connection is closed whatever it does: a deadline it sets does not
	// keep it open, a function it arms with AfterFunc never runs, and
	// Detach and StartTLS fail with ErrClosed.
	OnTimeout func(c *LoopConn, err error)
	// OnWritable, if set, is called on the loop, as a Handler is, when a
	// connection a Write failed on with ErrQueueFull has sent all its
	// output.
	OnWritable func(c *LoopConn)
	// OnShutdown, if set, is called on the loop for each connection when
	// Shutdown starts, as a Handler is; it decides when the connection
	// closes (at once with Close, or later, from a function run by Do).
	// If nil, each connection is closed once its output is sent.
	OnShutdown func(c *LoopConn)
	// OnAcceptError, if set, learns of the errors accept(2) returned; the
	// server goes on accepting after a pause that doubles from 5 ms up to
	// 1 s while they last. nil ignores them.
	OnAcceptError func(err error)

	// TLSConfig, if set, serves every accepted connection over TLS
	// (implicit TLS), with crypto/tls: the handshake starts at once, as
	// with StartTLS, and OnOpen runs once it has succeeded, so that a
	// greeting is sealed. A connection whose handshake fails is closed
	// without OnOpen or OnClose: OnHandshake learns why. Dialed
	// connections are not served by it: their OnOpen calls StartTLS for
	// a TLS client.
	TLSConfig *tls.Config
	// HandshakeTimeout bounds a TLS handshake on a connection without a
	// deadline (SetDeadline): past it, the connection is closed and
	// OnHandshake learns ErrHandshake with os.ErrDeadlineExceeded. 0
	// means DefaultHandshakeTimeout (10 seconds), a negative value none.
	HandshakeTimeout time.Duration
	// OnHandshake, if set, is called on the loop when a TLS handshake
	// (StartTLS, or TLSConfig's) ends: with a nil err the Handler gets
	// plaintext from now on; a non-nil err wraps ErrHandshake, and the
	// connection is closed. It is called once for each handshake, before
	// OnClose; if the connection was closed while the handshake ran (a
	// reset, Loops.Close), it is called when the handshake's goroutine
	// has seen that, with what the handshake came to, and OnClose
	// follows.
	OnHandshake func(c *LoopConn, err error)

	// Clock, if set, is the clock the timeouts and deadlines are kept
	// by, instead of time.Now: for tests of a protocol's time limits. A
	// loop reads it each time it wakes up; after moving a fake clock,
	// give the loop something to do (Do a function on one of its
	// connections) so that it looks.
	Clock func() time.Time

	// Tests only (export_test.go).
	sent    func(out, written int) // every send of a call's output
	moved   func(n int)            // every copy of unused input
	stopped func()                 // Shutdown has stopped the listener
	dialing func()                 // a Dial waits for connect(2) on its loop
	dialer  func(d *net.Dialer)    // the portable Dial's Dialer, before it dials
	// AddListener has duplicated its listener (taken, not yet closed)
	listening func()
	// the portable loops take every listener as one the system cannot
	// duplicate, and accept from it
	noDup bool
	// what a TLS handshake holds after each input the loop gives it
	handshakeHeld func(n int)
	// while it reports true, a lingering connection's peer is taken not
	// to have all of its output
	lingerHeld func() bool
	// NewLoops does not check that the loops can be pinned to CPUs:
	// pinning a loop fails instead (epoll)
	anyCPU bool
}

var (
	// ErrInputTooLarge closes a connection whose Handler left more than
	// LoopOptions.MaxInput bytes unused.
	ErrInputTooLarge = errors.New("netio: unused input larger than MaxInput")
	// ErrServerClosed is what OnClose learns for the connections that
	// Loops.Close closed, and what Do returns once the server is closed.
	ErrServerClosed = errors.New("netio: server closed")
	// ErrOutsideLoop is what a LoopConn's methods return when called
	// outside a call on its loop (a Handler, a function run by Do, or one
	// of the LoopOptions callbacks), from any goroutine. The check cannot
	// tell goroutines apart: a call from another goroutine while the loop
	// is in a call on the connection is not refused, and is a data race
	// (which -race reports); hand such work to the loop with Do.
	ErrOutsideLoop = errors.New("netio: LoopConn used outside a call on its loop")
	// ErrDetached is what OnClose learns once Detach has given the
	// connection to a goroutine, and what every LoopConn method that
	// refuses a detached connection returns (Write, Do, Close,
	// SetDeadline, AfterFunc and the others), on or off the loop.
	ErrDetached = errors.New("netio: connection detached from its loop")
	// ErrIdleTimeout closes a connection that sent nothing for
	// LoopOptions.IdleTimeout.
	ErrIdleTimeout = fmt.Errorf("netio: idle timeout: %w", os.ErrDeadlineExceeded)
	// ErrWriteTimeout closes a connection whose output made no progress
	// for LoopOptions.WriteTimeout.
	ErrWriteTimeout = fmt.Errorf("netio: write timeout: %w", os.ErrDeadlineExceeded)
	// ErrPanic is what the *PanicError OnClose learns for a connection
	// whose Handler (or callback) panicked matches with errors.Is.
	ErrPanic = errors.New("netio: panic in a call on the loop")
)

// A PanicError is what OnClose learns for a connection closed because a
// call on its loop panicked.
type PanicError struct {
	Value any    // what was passed to panic
	Stack []byte // the panicking goroutine's stack, as debug.Stack has it
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("netio: panic in a call on the loop: %v\n%s", e.Value, e.Stack)
}

// Unwrap returns ErrPanic, and the panic's value if it is an error.
func (e *PanicError) Unwrap() []error {
	if err, ok := e.Value.(error); ok {
		return []error{ErrPanic, err}
	}
	return []error{ErrPanic}
}

// MaxLoops is the most event loops a Loops server has
// (LoopOptions.Loops). An epoll loop waiting in epoll_wait holds an OS
// thread and three descriptors: more loops than this would be more
// threads than the machine has CPUs almost anywhere, and some thousands
// of them end the program (the Go runtime dies past 10,000 threads) or
// run out of descriptors. The portable loops refuse as many.
const MaxLoops = 1024

const (
	defaultMaxInput    = 64 << 10
	defaultReadBudget  = 256 << 10
	defaultMaxDo       = 256
	defaultDialTimeout = 30 * time.Second
	maxTimeout         = time.Duration(1 << 62) // see NewLoops
)

// The timeouts a zero LoopOptions field means.
const (
	// DefaultIdleTimeout is LoopOptions.IdleTimeout's default.
	DefaultIdleTimeout = 5 * time.Minute
	// DefaultWriteTimeout is LoopOptions.WriteTimeout's default.
	DefaultWriteTimeout = time.Minute
	// DefaultHandshakeTimeout is LoopOptions.HandshakeTimeout's default.
	DefaultHandshakeTimeout = 10 * time.Second
)

// A LoopConn is a connection of a [Loops] server. Its methods other than
// Do and RemoteAddr may be called only on its loop: in the Handler, the
// LoopOptions callbacks, and functions run by Do.
type LoopConn struct {
	l      *loop
	fd     int
	idx    int32
	remote net.Addr
	local  net.Addr // found on the first LocalAddr
	value  any

	in      []byte // in[inOff:]: input the Handler left unused
	inOff   int
	pending []byte // pending[off:]: output the socket has not taken
	off     int

	// Times on the loop's clock, in nanoseconds; 0 is none.
	readAt     int64 // input last read, or reading resumed
	progressAt int64 // output last sent while waiting for room
	outq       int   // the kernel's send queue then (SIOCOUTQ), or -1; lingering: what it holds once the peer has all the data
	deadline   int64 // SetDeadline
	heapAt     int64 // where the connection sits in the loop's heap
	heapIdx    int32 // -1: not in the heap
	timers     int32 // its timers in the loop's timer heap

	waiting   bool        // for room (EPOLLOUT): the connection is not read
	watched   uint32      // the events the loop's epoll set polls c for
	calling   atomic.Bool // in a call: Write appends to the loop's output; atomic, so that the check of a call from another goroutine is no data race
	closing   bool        // Close was called: close once the output is sent (set with markClosing)
	expired   bool        // OnTimeout is called: the connection closes whatever it does, so Detach and StartTLS are refused
	offer     bool        // reading resumes: the input the Handler left unused is handed to it again, though no byte comes
	closed    bool
	eof       bool // the peer ended its stream
	lingering bool // closed, waiting for the peer's end of stream
	hup       bool // the last event said the peer ended or failed
	more      bool // on the loop's list of connections to read on
	full      bool // a Write failed with ErrQueueFull, or NotifyWritable
	unread    bool // SetReading(false): not read until SetReading(true)
	closeErr  error
	det       *detachedConn
	dial      *dialing     // connect(2) in progress: not served yet
	dialed    bool         // by Dial: StartTLS runs a TLS client
	dialHost  string       // Dial's address's host: a TLS client's ServerName by default
	tls       *tlsPipe     // StartTLS or LoopOptions.TLSConfig
	gone      atomic.Bool  // closed or detached, for Do
	ended     atomic.Bool  // closing, or detached: its timers are dropped, for LoopTimer.Stop
	detached  atomic.Bool  // Detach succeeded, for Do
	dos       atomic.Int32 // functions Do queued, not yet run

	sys connSys // the implementation's own (loop_sys_linux.go, loop_portable.go)
}

// RemoteAddr returns the peer's address. An IPv6 link-local address's
// zone is the interface's name, as package net gives it ("fe80::1%eth0").
func (c *LoopConn) RemoteAddr() net.Addr { return c.remote }

// LocalAddr returns the connection's own address (nil once it is closed
// or detached, if not asked for before).
func (c *LoopConn) LocalAddr() net.Addr {
	if c.local == nil && !c.gone.Load() {
		c.local = c.l.localAddr(c)
	}
	return c.local
}

// Value returns what SetValue stored, or nil.
func (c *LoopConn) Value() any { return c.value }

// SetValue stores v with the connection, for the Handler's own state.
func (c *LoopConn) SetValue(v any) { c.value = v }

// EOF reports whether the peer has ended its stream: no input follows.
func (c *LoopConn) EOF() bool { return c.eof }

// Now returns, in a call on c, the time its loop last woke up, on
// LoopOptions.Clock: the present without a clock read of its own (a loop
// reads the clock once a wake-up, as libuv's uv_now). It is behind the
// clock by the time the loop has spent since: microseconds, unless a call
// holds the loop. Like Write, it is for the loop's goroutine; there,
// outside a call on c (in a call on another of the loop's connections),
// it reads the clock.
func (c *LoopConn) Now() time.Time {
	if !c.calling.Load() {
		return c.l.s.opt.Clock()
	}
	return c.l.base.Add(time.Duration(c.l.now))
}

// Write queues p, to be sent with the rest of the call's output when the
// call returns. It fails, queueing nothing, with ErrQueueFull if the
// connection would then hold more than LoopOptions.MaxQueued unsent
// bytes, with ErrOutsideLoop outside a call on the loop, with
// ErrDetached after Detach, with ErrClosed after Close and with
// ErrHandshaking during a TLS handshake. Over TLS, p is plaintext: the
// call's output is sealed when it returns.
func (c *LoopConn) Write(p []byte) (int, error) { return loopWrite(c, p) }

// WriteString is Write for a string.
func (c *LoopConn) WriteString(s string) (int, error) { return loopWrite(c, s) }

func loopWrite[T []byte | string](c *LoopConn, p T) (int, error) {
	switch {
	case !c.calling.Load():
		return 0, c.outside()
	case c.det != nil:
		return 0, ErrDetached
	case c.closing || c.closed:
		return 0, ErrClosed
	case c.tls != nil && c.tls.state == tlsHandshake:
		return 0, ErrHandshaking
	}
	l := c.l
	if q := len(l.out) + len(c.pending) - c.off; q+len(p) > l.maxQueued {
		// OnWritable is told once what is queued has gone: then p may
		// fit, unless it is larger than MaxQueued.
		c.full = c.full || q > 0
		return 0, ErrQueueFull
	}
	l.out = append(l.out, p...)
	return len(p), nil
}

// Queued returns how many bytes of c's output wait for room in the
// socket, this call's output included. Like Now, it is for the loop's
// goroutine: in a call on another of the loop's connections it leaves
// out that call's output, and from another goroutine its answer is a
// data race.
func (c *LoopConn) Queued() int {
	if !c.calling.Load() {
		return len(c.pending) - c.off
	}
	return len(c.l.out) + len(c.pending) - c.off
}

// Do runs f on c's loop, as soon as the loop gets to it, where f may use c
// as a Handler does: what f writes leaves in one write(2) when it
// returns, behind the output queued before. Do may be called from any
// goroutine and does not wait for f. It returns ErrDetached once c is
// detached, ErrServerClosed once the server has closed and ErrClosed
// once c has, and f never runs then; f does not run either if c is
// closed or detached before the loop gets to it. It is how
// a Handler that hands a request to another goroutine answers it later.
// A nil f is refused with ErrNilFunc. Do does not wait: once
// LoopOptions.MaxDo functions wait for c's loop, it fails with
// ErrQueueFull, so that a producer faster than the loop meets a bound
// (and can wait, drop, or close) instead of the loop's memory and the
// other connections' latency growing without one.
func (c *LoopConn) Do(f func(c *LoopConn)) error {
	if f == nil {
		return ErrNilFunc
	}
	if c.detached.Load() {
		return ErrDetached
	}
	if c.gone.Load() {
		if c.l.s.isClosed() {
			return ErrServerClosed
		}
		return ErrClosed
	}
	if c.dos.Add(1) > int32(c.l.maxDo) {
		c.dos.Add(-1)
		return ErrQueueFull
	}
	if err := c.l.post(task{c: c, f: f}); err != nil {
		c.dos.Add(-1)
		return err
	}
	return nil
}

// Close closes the connection once the output queued so far has been
// sent; nothing more is read from it (what the peer sends is thrown
// away). The socket is kept until the peer has acknowledged all of the
// output or ended its stream, so that what arrives from the peer does not
// reset the connection and destroy the last reply; OnClose then learns
// a nil error. If that takes more than 5 seconds (the linger time, on the
// loop's clock), the socket is closed anyway and OnClose learns
// ErrUnsent.
func (c *LoopConn) Close() error {
	if err := c.open(); err != nil {
		return err
	}
	c.markClosing()
	return nil
}

// SetDeadline sets when the connection times out: once t has passed,
// OnTimeout (if set) learns os.ErrDeadlineExceeded and the connection is
// closed after what it wrote is sent (unless it was closing already:
// then the deadline changes nothing). A zero t removes the deadline
// (during a TLS handshake, HandshakeTimeout still bounds it). It
// is how a protocol bounds the time to a complete request ("a command
// within 5 minutes"), however slowly its bytes arrive.
func (c *LoopConn) SetDeadline(t time.Time) error {
	if err := c.usable(); err != nil {
		return err
	}
	c.l.setDeadline(c, t)
	return nil
}

// Detach gives the connection to the caller as a net.Conn on Go's own
// poller, for code that blocks (crypto/tls, a blocking backend). Its
// reads start with the input the Handler leaves unused in this call (or
// that earlier calls left), and its writes follow the output queued so
// far, which it sends first; both wait until the current call has
// returned. Its Close, too, sends that output first (waiting at most
// DefaultLinger for room, and returning ErrUnsent if some was left).
// It has CloseWrite, for a half-close (a proxy's): it sends that output,
// then the end of stream, and leaves the reading side open.
// The loop is then done with c: OnClose learns ErrDetached. A TLS
// connection cannot be detached (ErrTLSActive): its keys are the loop's.
func (c *LoopConn) Detach() (net.Conn, error) {
	switch {
	case !c.calling.Load():
		return nil, c.outside()
	case c.det != nil:
		return nil, ErrDetached
	case c.closing || c.closed || c.expired:
		return nil, ErrClosed
	case c.tls != nil:
		return nil, ErrTLSActive
	}
	nc, err := c.l.detach(c)
	if err == nil {
		c.detached.Store(true)
	}
	return nc, err
}

// SetReading stops reading the connection (false) or starts again
// (true): the peer then waits, its input held by the kernel's buffers
// and TCP's flow control, while the Handler cannot take it (a protocol
// that pauses before a reply, for one). Reading starts again on the
// loop's next turn, with the unused input in front of what is read; the
// Handler is then called with the unused input even if nothing more
// comes, since it may hold whole commands that came behind the one that
// paused.
//
// While reading is off, the peer's end of stream waits behind its input,
// until reading resumes; but the peer's reset (ECONNRESET) closes the
// connection at once, and the input it sent before the reset, which the
// system may still hold, is not read: the peer aborted the exchange, and
// its reply could not reach it. OnClose learns the error a read would
// have returned after that input, and Shutdown does not wait for the
// connection. The portable
// loops see such a reset where the connection has a descriptor to watch
// (Unix systems); elsewhere (Windows, Plan 9, js, wasip1) when reading
// resumes.
func (c *LoopConn) SetReading(on bool) error {
	if err := c.open(); err != nil {
		return err
	}
	if c.unread == !on {
		return nil
	}
	c.unread, c.offer = !on, false
	if on {
		c.l.resumeReading(c)
	}
	return nil
}

// NotifyWritable asks for an OnWritable call once all of the output
// queued so far, this call's included, has been sent, as after a Write
// that failed with ErrQueueFull: how a Handler that stops taking input
// while its output waits learns when to go on.
func (c *LoopConn) NotifyWritable() error {
	if err := c.open(); err != nil {
		return err
	}
	c.full = true
	return nil
}

// open reports why c, detached, closed, closing or outside a call on its
// loop, cannot be read or written now, or nil.
func (c *LoopConn) open() error {
	if err := c.usable(); err != nil {
		return err
	}
	if c.closing {
		return ErrClosed
	}
	return nil
}

// usable is open for what a closing connection still allows (its
// deadline, its socket options): it reports why c, detached, closed or
// outside a call on its loop, cannot be used, or nil.
func (c *LoopConn) usable() error {
	switch {
	case !c.calling.Load():
		return c.outside()
	case c.det != nil:
		return ErrDetached
	case c.closed:
		return ErrClosed
	}
	return nil
}

// outside is what a method called outside a call on c's loop returns:
// ErrDetached or ErrClosed once the loop is done with c, ErrOutsideLoop
// before. It reads c's fields only after gone, which the loop sets once
// it has written them, so that a call from another goroutine, which may
// come at any time, is no data race.
func (c *LoopConn) outside() error {
	switch {
	case !c.gone.Load():
		return ErrOutsideLoop
	case c.det != nil:
		return ErrDetached
	}
	return ErrClosed
}

// Control runs f with the connection's file descriptor, as
// syscall.RawConn's Control does, for the socket options package net
// has no method for (TCP_QUICKACK, say). f must not keep, close or
// block on the descriptor. Like Write, it may be called only on the
// connection's loop; a nil f fails with ErrNilFunc.
func (c *LoopConn) Control(f func(fd uintptr)) error {
	if f == nil {
		return ErrNilFunc
	}
	if err := c.usable(); err != nil {
		return err
	}
	return c.l.control(c, f)
}

// A task is a function Do posted for a connection, or loop work posted by
// another loop or the server (lf).
type task struct {
	c  *LoopConn
	f  func(*LoopConn)
	lf func(*loop)
}

// Loops is a server whose connections are served by event loops, each a
// thread with its own epoll set, instead of a goroutine per connection.
// See [Serve].
type Loops struct {
	h         Handler
	opt       LoopOptions
	loops     []*loop
	next      atomic.Uint32 // round-robin hand-off of accepted and dialed connections
	sys       loopSys       // the platform's part
	realClock bool          // opt.Clock is time.Now

	mu  sync.Mutex  // guards lns
	lns []*listener // in the order added
}

// A listener is one of the listeners a Loops server polls.
type listener struct {
	id      int32        // its index in Loops.lns
	fd      int          // the server's duplicate of its socket; -1 once closed
	addr    net.Addr     // ln.Addr()
	unix    bool         // a Unix domain socket: no TCP options
	noDelay bool         // TCP_NODELAY is set on it, so on what it accepts (epoll loops)
	keep    net.Listener // closed with the server, and let go (served): a *net.UnixListener (its socket file goes then; on epoll set once every loop polls it), or the portable loops' *net.TCPListener they accept from (where TCPListener.File fails: js, wasip1)
	acc     net.Listener // the portable Serve's: what it accepts from, nil once closed
}

// Serve serves the connections ln accepts with h, on opt.Loops event
// loops (epoll on Linux; elsewhere, or with the build tag netio_portable,
// goroutines over net.Conn: see the package documentation), until
// Shutdown or Close: it is NewLoops and then AddListener(ln), and closes
// the loops again if AddListener fails. If opt is nil, defaults apply. A
// nil h fails with ErrNilFunc, a nil ln with os.ErrInvalid, a listener
// other than a *net.TCPListener or a *net.UnixListener (of network
// "unix") with an error matching errors.ErrUnsupported.
//
// A loop reads a readable connection into its own buffer, calls h, and
// writes what h wrote with one write(2): pipelined requests read together
// are answered together, and a waiting connection holds no buffer. A
// connection whose output the socket did not take all of is not read
// again until it has been sent. Accepted connections are spread over the
// loops in turn.
func Serve(ln net.Listener, h Handler, opt *LoopOptions) (*Loops, error) {
	if h == nil {
		return nil, fmt.Errorf("netio: Serve: nil Handler: %w", ErrNilFunc)
	}
	if err := checkListener(ln); err != nil {
		return nil, fmt.Errorf("netio: Serve: %w", err)
	}
	s, err := NewLoops(h, opt)
	if err != nil {
		return nil, err
	}
	if err := s.AddListener(ln); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// NewLoops starts opt.Loops event loops serving with h, with no listener
// yet: AddListener gives them one (or several), and Dial connections of
// their own. If opt is nil, defaults apply. A nil h fails with
// ErrNilFunc.
func NewLoops(h Handler, opt *LoopOptions) (*Loops, error) {
	if h == nil {
		return nil, fmt.Errorf("netio: NewLoops: nil Handler: %w", ErrNilFunc)
	}
	if opt != nil {
		if opt.Loops > MaxLoops {
			return nil, fmt.Errorf("netio: Serve: Loops is %d, more than MaxLoops (%d): %w", opt.Loops, MaxLoops, os.ErrInvalid)
		}
		if err := checkCPUs(opt); err != nil {
			return nil, err
		}
	}
	s := &Loops{h: h}
	if opt != nil {
		s.opt = *opt
	}
	o := &s.opt
	for _, v := range []struct {
		p   *int
		def int
	}{{&o.MaxQueued, defaultMaxQueue}, {&o.MaxInput, defaultMaxInput}, {&o.ReadBudget, defaultReadBudget}, {&o.MaxDo, defaultMaxDo}} {
		if *v.p <= 0 {
			*v.p = v.def
		}
	}
	for _, v := range []struct {
		p   *time.Duration
		def time.Duration
	}{{&o.IdleTimeout, DefaultIdleTimeout}, {&o.WriteTimeout, DefaultWriteTimeout}, {&o.DialTimeout, defaultDialTimeout}, {&o.HandshakeTimeout, DefaultHandshakeTimeout}} {
		if *v.p == 0 {
			*v.p = v.def
		}
		// The loops add a timeout to a time on their clock (nanoseconds
		// since they started): one past 2^62 ns, 146 years, is none the
		// sooner for being cut there, and cannot overflow the sum.
		*v.p = min(*v.p, maxTimeout)
	}
	if o.Clock == nil {
		o.Clock, s.realClock = time.Now, true
	}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

// loopCount is how many loops s has: LoopOptions.Loops, or its default.
func (s *Loops) loopCount() int {
	if n := s.opt.Loops; n > 0 {
		return n // at most MaxLoops: see NewLoops
	}
	return min(max(runtime.GOMAXPROCS(0)-1, 1), MaxLoops)
}

// checkCPUs reports the first of opt.CPUs that no loop can be pinned to:
// a negative one, or, on Linux, one the system refuses to pin a thread to
// (checkPins), with either implementation, so that a configuration one
// refuses the other does too.
func checkCPUs(opt *LoopOptions) error {
	for i, cpu := range opt.CPUs {
		if cpu < 0 {
			return fmt.Errorf("netio: Serve: CPUs[%d] is %d: %w", i, cpu, os.ErrInvalid)
		}
	}
	if opt.anyCPU {
		return nil
	}
	return checkPins(opt.CPUs)
}

// checkListener reports why ln cannot be served, or nil.
func checkListener(ln net.Listener) error {
	switch l := ln.(type) {
	case nil:
		return fmt.Errorf("nil listener: %w", os.ErrInvalid)
	case *net.TCPListener:
		if l == nil {
			return fmt.Errorf("nil listener: %w", os.ErrInvalid)
		}
	case *net.UnixListener:
		if l == nil {
			return fmt.Errorf("nil listener: %w", os.ErrInvalid)
		}
		if n := l.Addr().Network(); n != "unix" {
			return fmt.Errorf("a %s listener (only stream sockets are served): %w", n, errors.ErrUnsupported)
		}
	default:
		return fmt.Errorf("a %T (only *net.TCPListener and *net.UnixListener are served): %w", ln, errors.ErrUnsupported)
	}
	return nil
}

// AddListener has the loops accept ln's connections too, as Serve's
// listener's: the server polls a duplicate of ln's socket from now on,
// until Shutdown or Close, and closes ln once its loops poll it, so that
// a listener is served once (a second Serve or AddListener of a
// *net.TCPListener, by any server, fails with os.ErrExist while the
// first takes it, with net.ErrClosed after); ln.Addr still works. A
// *net.UnixListener is closed with the server instead, when the loops
// stop polling it, so that its Close removes its socket file then (unless
// SetUnlinkOnClose(false)); it is not to be used meanwhile, and a second
// AddListener or Serve of it, by any server, fails with os.ErrExist until
// then (and with net.ErrClosed after). A listener closed already, or
// closed by its user while a server holds it, fails with net.ErrClosed
// (on js, wasip1 and Plan 9 only where its descriptor tells: see
// docs/netio.md).
// A listener is refused as Serve refuses it, and after Shutdown or Close
// with ErrServerClosed; a refused listener is left open to the caller,
// as it was given (a Unix one keeps its socket file). An AddListener
// that a Close runs during either fails so or returns nil, ln then
// closed with the server.
func (s *Loops) AddListener(ln net.Listener) error {
	if err := checkListener(ln); err != nil {
		return fmt.Errorf("netio: AddListener: %w", err)
	}
	return s.addListener(ln)
}

// Addr returns the address of the first listener, or nil if there is none.
func (s *Loops) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lns) == 0 {
		return nil
	}
	return s.lns[0].addr
}

// Addrs returns the addresses of the listeners, in the order they were
// added.
func (s *Loops) Addrs() []net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	addrs := make([]net.Addr, len(s.lns))
	for i, ln := range s.lns {
		addrs[i] = ln.addr
	}
	return addrs
}

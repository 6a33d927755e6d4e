//go:build linux && !netio_portable

package netio

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/internal/cpupin"
	"golang.org/x/sys/unix"
)

// loopSys is the Linux part of a Loops server.
type loopSys struct {
	running   sync.WaitGroup
	quit      atomic.Bool
	stopping  atomic.Bool // Shutdown has shut the listener
	closeOnce sync.Once
	closeErr  error
	shutOnce  sync.Once
	drainOnce sync.Once
	drained   chan struct{} // closed when the last connection of a Shutdown closes
	// Connections open while shutting down, and one for Shutdown itself
	// until every loop has counted its own.
	open   atomic.Int64
	lnErr  error // closing the listeners (Loops.mu)
	nextLn int32 // the id of the next listener (Loops.mu)
	// TLS handshakes running, each on a goroutine: Close waits for them.
	handshakes sync.WaitGroup
	// resolve, if set (tests), stands for Dial's resolver (dialAddrs).
	resolve func(network, address string) ([]syscall.Sockaddr, error)
}

// Epoll data of a loop's own descriptors; a connection's is its index in
// the loop, a listener's evListen minus its id.
const (
	evWake   = -1
	evTimer  = -3
	evListen = -16
)

// readEvents are a readable connection's events, edge-triggered: one
// read that does not fill the buffer has emptied the socket, unless the
// peer has also ended its stream (EPOLLRDHUP), which the loop reads to
// the end. A connection waiting for room is polled for EPOLLOUT only.
// The listener is level-triggered and exclusive: one loop is woken per
// connection, accepts it and hands it to the loop whose turn it is.
const (
	readEvents   = unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET
	roomEvents   = unix.EPOLLOUT | unix.EPOLLET
	listenEvents = unix.EPOLLIN | unix.EPOLLEXCLUSIVE
	hupEvents    = unix.EPOLLRDHUP | unix.EPOLLHUP | unix.EPOLLERR
	lingerEvents = readEvents | unix.EPOLLOUT // see linger
)

// yieldEvery is how often a loop lets the scheduler run: a goroutine
// that has not been scheduled for 10 ms is seen as running too long, and
// the runtime then takes its processor away at every system call that
// blocks (and polls for that every 20 µs).
const yieldEvery = 2 * time.Millisecond

const (
	// readSize is the size of a loop's read buffer, and the least room a
	// connection's own input buffer gets for a read.
	readSize = 64 << 10
	// smallInput is the most unused input that is copied in front of the
	// next read in the loop's buffer; more stays in place in the
	// connection's own buffer, which the next read appends to.
	smallInput = 4 << 10
	// keepInput is the most capacity a connection keeps for unused input
	// once its Handler has used all of it.
	keepInput = 512
	// lingerTime is how long a closed connection whose peer goes on
	// sending waits for the peer's end of stream (see linger).
	lingerTime = 5 * time.Second
	// acceptBurst is the most connections a loop accepts in a turn.
	acceptBurst = 64
)

// A loop is one event loop: a thread with its own epoll set, accepting
// connections and serving them. Everything about a connection happens on
// its loop.
type loop struct {
	s   *Loops
	id  int
	cpu int // pinned to this CPU, or -1
	ep  int

	mu      sync.Mutex
	wake    int    // eventfd: tasks are waiting, or the server closes; -1 once stopped
	tasks   []task // posted by Do and by other loops
	running []task // being run, reused

	conns     []*LoopConn // by index; nil where free
	free      []int32
	freed     []int32     // freed this turn: free once the next epoll_wait has begun (see run)
	heap      []*LoopConn // by heapAt: the connections with a time to check
	more      []*LoopConn // read on after their budget
	moreNext  []*LoopConn
	buf       []byte // read buffer
	out       []byte // the output of the call in progress
	maxQueued int
	maxDo     int
	maxInput  int
	budget    int
	idle      int64 // ns, 0 none
	stall     int64 // ns, 0 none

	// AfterFunc's timers, by (at, seq); the timerfd is armed for the
	// earliest at armedAt (0: not armed), and re-armed only when an
	// earlier one comes. Stopped timers, and those of closed
	// connections, leave when their time comes, or all at once when they
	// are more than half of the heap (deadTimers counts them roughly).
	tfd        int
	timers     []*LoopTimer
	timerSeq   uint64
	armedAt    int64
	deadTimers atomic.Int64

	tl tlsLoop // the sealing of TLS output

	base     time.Time // the clock's origin
	now      int64     // ns since base, read once per wake-up
	draining bool      // Shutdown: closing connections as they go quiet

	// The listeners the loop polls, by id (nil: not polled).
	lns []*loopListener

	stats loopStats
}

// A loopListener is a listener as one loop polls it. After accept(2)
// failed, the listener is out of the loop's set until resume (zero while
// it is in), for a pause that doubles while failures last.
type loopListener struct {
	ln      *listener
	backoff time.Duration
	resume  time.Time
}

// start starts the loops, with no listener yet.
func (s *Loops) start() error { return s.startLoops() }

// addListener takes ln: the server polls a duplicate of its descriptor,
// and closes a *net.TCPListener once every loop polls it (a
// *net.UnixListener when the server closes), so that a listener is
// served once. It claims ln (served) before it duplicates it. The
// duplicate is closed only once no loop polls it. A listener refused
// with ErrServerClosed is left open to the caller, a Unix one too (its
// socket file stays): the server keeps a Unix listener (lis.keep) only
// once every loop polls it.
func (s *Loops) addListener(ln net.Listener) error {
	if !claimListener(ln) {
		return errServed(ln)
	}
	rc, err := ln.(syscall.Conn).SyscallConn()
	if err != nil {
		unclaimListener(ln)
		return fmt.Errorf("netio: listener: %w", err)
	}
	fd := -1
	var derr error
	err = rc.Control(func(lfd uintptr) { fd, derr = unix.FcntlInt(lfd, unix.F_DUPFD_CLOEXEC, 0) })
	switch {
	case errors.Is(err, net.ErrClosed):
		err = errClosedListener(ln) // as the portable loops say it
	case err != nil:
		err = fmt.Errorf("netio: listener: %w", err)
	case derr != nil:
		err = fmt.Errorf("netio: listener: %w", derr)
	}
	if err != nil {
		unclaimListener(ln)
		return err
	}
	lis := &listener{fd: fd, addr: ln.Addr()}
	ul, isUnix := ln.(*net.UnixListener)
	if isUnix {
		lis.unix = true // kept (lis.keep) once every loop polls it
	} else {
		// Linux gives an accepted socket its listener's options: set
		// once here, TCP_NODELAY is not set again on each connection.
		lis.noDelay = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1) == nil
	}
	s.mu.Lock()
	if s.sys.quit.Load() || s.sys.stopping.Load() {
		s.mu.Unlock()
		unix.Close(fd)
		unclaimListener(ln)
		return ErrServerClosed
	}
	lis.id = s.sys.nextLn
	s.sys.nextLn++
	s.lns = append(s.lns, lis)
	s.mu.Unlock()
	if f := s.opt.listening; f != nil {
		f()
	}
	if err := s.onEveryLoop(func(l *loop) error { return l.listen(lis) }); err != nil {
		if errors.Is(err, ErrServerClosed) {
			// Close overtook it: Close closes the duplicate, which a
			// loop may poll until it stops, with the others; ln, which
			// the server does not keep, is left to the caller.
			unclaimListener(ln)
			return ErrServerClosed
		}
		s.onEveryLoop(func(l *loop) error { l.unlisten(lis); return nil })
		s.mu.Lock()
		s.lns = slices.DeleteFunc(s.lns, func(x *listener) bool { return x == lis })
		unix.Close(fd)
		unclaimListener(ln) // left to the caller, as it was given
		s.mu.Unlock()
		return fmt.Errorf("netio: listener: %w", err)
	}
	if isUnix {
		s.mu.Lock()
		closed := lis.fd < 0 // the server closed meanwhile: so does ul
		if !closed {
			lis.keep = ul
		}
		s.mu.Unlock()
		if closed {
			closeClaimed(ul)
		}
	} else {
		closeClaimed(ln)
	}
	return nil
}

// onEveryLoop runs f on every loop and waits for them; a loop that has
// stopped gives ErrServerClosed.
func (s *Loops) onEveryLoop(f func(l *loop) error) error {
	errs := make(chan error, len(s.loops))
	for _, l := range s.loops {
		err := l.post(task{lf: func(l *loop) {
			if l == nil {
				errs <- ErrServerClosed
				return
			}
			errs <- f(l)
		}})
		if err != nil {
			errs <- err
		}
	}
	var all error
	for range s.loops {
		if err := <-errs; err != nil && all == nil {
			all = err
		}
	}
	return all
}

func (s *Loops) startLoops() error {
	n := s.loopCount()
	// All loops exist before any runs: each hands connections to the
	// others.
	for i := range n {
		cpu := -1
		if len(s.opt.CPUs) > 0 {
			cpu = s.opt.CPUs[i%len(s.opt.CPUs)]
		}
		l, err := newLoop(s, i, cpu)
		if err != nil {
			for _, l := range s.loops {
				l.stop()
			}
			return err
		}
		s.loops = append(s.loops, l)
	}
	ready := make(chan error, n)
	for _, l := range s.loops {
		s.sys.running.Add(1)
		go l.run(ready)
	}
	var errs error
	for range n {
		errs = errors.Join(errs, <-ready)
	}
	if errs != nil {
		s.stopLoops()
		return errs
	}
	return nil
}

// Close stops accepting, ends the dials in flight, closes every
// connection (OnClose learns ErrServerClosed; unsent output is dropped),
// waits for the loops to end and closes the listeners. It must not be
// called on a loop, where it would wait for itself: a Handler that ends
// the server (as evio's Shutdown action or gnet's does) calls it in a
// goroutine of its own (go s.Close()).
func (s *Loops) Close() error {
	s.sys.closeOnce.Do(func() {
		s.stopLoops()
		s.sys.handshakes.Wait() // their I/O ended with their connections
		s.sys.closeErr = s.closeListeners()
	})
	return s.sys.closeErr
}

// closeListeners closes the listeners once no loop polls them.
func (s *Loops) closeListeners() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ln := range s.lns {
		if ln.fd < 0 {
			continue
		}
		if err := unix.Close(ln.fd); err != nil {
			s.sys.lnErr = errors.Join(s.sys.lnErr, fmt.Errorf("netio: close listener %v: %w", ln.addr, err))
		}
		ln.fd = -1
		if ln.keep != nil {
			closeClaimed(ln.keep)
		}
	}
	return s.sys.lnErr
}

// Shutdown stops accepting at once, however busy the loops (the
// listeners are shut before anything else, and connections that completed
// their handshake but were not accepted yet are reset), ends the dials in
// flight (ErrServerClosed), then closes each
// connection once its output is sent, or as OnShutdown decides, and waits
// until all of them are closed or ctx is done; then it closes the server
// as Close does. It returns ctx's error if ctx ended first. Each call,
// a second one included, waits on its own ctx. It must not be called on
// a loop (see Close).
func (s *Loops) Shutdown(ctx context.Context) error {
	var err error
	s.sys.shutOnce.Do(func() {
		// The listener stops at once, not when each loop gets to its
		// task: shut, it completes no more handshakes, and resets those
		// completed that no loop accepted yet. A loop that wakes for it
		// takes it out of its set (acceptAll).
		s.mu.Lock()
		s.sys.stopping.Store(true) // no listener is added from now on
		for _, ln := range s.lns {
			unix.Shutdown(ln.fd, unix.SHUT_RD)
		}
		s.mu.Unlock()
		if f := s.opt.stopped; f != nil {
			f()
		}
		s.sys.drained = make(chan struct{})
		s.sys.open.Store(1)
		done := make(chan struct{}, len(s.loops))
		for _, l := range s.loops {
			err := l.post(task{lf: func(l *loop) {
				if l != nil {
					l.startDrain()
				}
				done <- struct{}{}
			}})
			if err != nil {
				done <- struct{}{}
			}
		}
		for range s.loops {
			<-done
		}
		// No loop polls the listeners now.
		err = s.closeListeners()
		if s.sys.open.Add(-1) == 0 {
			s.sys.endDrain()
		}
	})
	// Every caller waits on its own ctx; the first one started the drain.
	return s.awaitDrain(ctx, err)
}

// isClosed reports whether Close has begun.
func (s *Loops) isClosed() bool { return s.sys.quit.Load() }

func (s *Loops) stopLoops() {
	s.sys.quit.Store(true)
	for _, l := range s.loops {
		l.wakeUp()
	}
	s.sys.running.Wait()
}

func newLoop(s *Loops, id, cpu int) (*loop, error) {
	l := &loop{s: s, id: id, cpu: cpu, ep: -1, wake: -1, tfd: -1,
		maxQueued: s.opt.MaxQueued, maxDo: s.opt.MaxDo, maxInput: s.opt.MaxInput, budget: s.opt.ReadBudget,
		idle: max(int64(s.opt.IdleTimeout), 0), stall: max(int64(s.opt.WriteTimeout), 0),
		buf: make([]byte, readSize), base: s.opt.Clock()}
	var err error
	if l.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err == nil {
		if l.wake, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err == nil {
			err = unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, l.wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: evWake})
		}
		if err == nil {
			if l.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err == nil {
				err = unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, l.tfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: evTimer})
			}
		}
	}
	if err != nil {
		l.stop()
		return nil, fmt.Errorf("netio: event loop: %w", err)
	}
	return l, nil
}

// stop closes the loop's descriptors; from then on nothing is posted to
// it, and nothing writes to its old eventfd.
func (l *loop) stop() {
	l.mu.Lock()
	if l.wake >= 0 {
		unix.Close(l.wake)
	}
	l.wake = -1
	left := l.tasks
	l.tasks = nil
	l.mu.Unlock()
	for _, t := range left {
		if t.lf != nil {
			t.lf(nil) // a hand-off closes its connection
		}
	}
	if l.ep >= 0 {
		unix.Close(l.ep)
	}
	if l.tfd >= 0 {
		unix.Close(l.tfd)
	}
}

// listen has the loop poll ln, unless Shutdown has begun.
func (l *loop) listen(ln *listener) error {
	if l.draining || l.s.sys.stopping.Load() {
		return nil
	}
	if err := l.pollListener(ln); err != nil {
		return err
	}
	for int(ln.id) >= len(l.lns) {
		l.lns = append(l.lns, nil)
	}
	l.lns[ln.id] = &loopListener{ln: ln}
	return nil
}

func (l *loop) pollListener(ln *listener) error {
	return unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, ln.fd, &unix.EpollEvent{Events: listenEvents, Fd: evListen - ln.id})
}

// unlisten stops polling ln.
func (l *loop) unlisten(ln *listener) {
	if int(ln.id) < len(l.lns) && l.lns[ln.id] != nil {
		unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, ln.fd, nil)
		l.lns[ln.id] = nil
	}
}

var eventOne = binary.NativeEndian.AppendUint64(nil, 1)

func (l *loop) wakeUp() {
	l.mu.Lock()
	if l.wake >= 0 {
		unix.Write(l.wake, eventOne)
	}
	l.mu.Unlock()
}

// post queues t for the loop, or fails once the loop has stopped.
func (l *loop) post(t task) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wake < 0 {
		return ErrServerClosed
	}
	l.tasks = append(l.tasks, t)
	if len(l.tasks) == 1 {
		unix.Write(l.wake, eventOne)
	}
	return nil
}

// clock is the time now on the loop's clock.
func (l *loop) clock() int64 { return int64(l.s.opt.Clock().Sub(l.base)) }

// run is the loop: it reports on ready once started (and pinned, on a
// locked thread) and serves until the server quits.
func (l *loop) run(ready chan<- error) {
	defer l.s.sys.running.Done()
	defer l.stop()
	if l.cpu >= 0 {
		// Never unlocked: a thread whose affinity was changed ends with
		// the goroutine instead of going back to the scheduler. Only a
		// pinned loop is locked: a locked goroutine's yield hands its
		// processor to another thread and back.
		runtime.LockOSThread()
		if err := cpupin.Pin(l.cpu); err != nil {
			ready <- fmt.Errorf("netio: cannot pin event loop %d: %w", l.id, err)
			return
		}
	}
	ready <- nil
	defer l.shutdown()
	events := make([]unix.EpollEvent, 256)
	// The clock is read once a wake-up, right after it, not again before
	// the next wait, whose timeout for the deadlines is counted from that
	// read: a deadline is then found late by at most the time the events
	// took (microseconds, unless a handler holds the loop), on top of the
	// millisecond it may be late anyway. A timer's wait is taken from a
	// fresh read (armTimer). On the real clock the same read times the
	// yields. This saved 2% of smtp-sink's CPU.
	l.now = l.clock()
	sinceStart := func() int64 { return l.now }
	if !l.s.realClock {
		start := time.Now()
		sinceStart = func() int64 { return int64(time.Since(start)) }
	}
	yielded := sinceStart()
	for !l.s.sys.quit.Load() {
		l.expire()
		l.runTimers()
		l.armTimer()
		timeout := -1
		if len(l.heap) > 0 {
			timeout = msUntil(l.heap[0].heapAt - l.now)
		}
		if w := l.timerWait(); w >= 0 && (timeout < 0 || w < timeout) {
			timeout = w
		}
		if ms := l.resumeListeners(); ms >= 0 && (timeout < 0 || ms < timeout) {
			timeout = ms
		}
		if len(l.more) > 0 {
			timeout = 0
		}
		if now := sinceStart(); now-yielded > int64(yieldEvery) {
			runtime.Gosched()
			yielded = now
		}
		// A slot freed this turn is reused only from now on: an event
		// of the batch that is being handled may name it still (its
		// connection was released by a task, or by an earlier event),
		// and is not for the next connection (a Dial's would be taken
		// for connected); closed, its socket left the epoll set, so
		// the next batch does not.
		l.free, l.freed = append(l.free, l.freed...), l.freed[:0]
		n, err := unix.EpollWait(l.ep, events, timeout)
		if err != nil {
			n = 0 // EINTR
		}
		l.now = l.clock()
		for _, ev := range events[:n] {
			switch ev.Fd {
			case evWake:
				// The eventfd is read before the tasks are taken, so a
				// post after that wakes the loop again.
				var b [8]byte
				unix.Read(l.wake, b[:])
				l.runTasks() // or the server quits
				continue
			case evTimer:
				var b [8]byte
				unix.Read(l.tfd, b[:])
				l.armedAt = 0 // run at the top of the loop
				continue
			}
			if ev.Fd <= evListen {
				if id := int(evListen - ev.Fd); !l.draining && id < len(l.lns) && l.lns[id] != nil {
					l.acceptAll(l.lns[id]) // not if Shutdown has taken it out
				}
				continue
			}
			if c := l.conns[ev.Fd]; c != nil {
				l.event(c, ev.Events)
			}
		}
		// The connections that used up their budget, in turn.
		if len(l.more) > 0 {
			l.more, l.moreNext = l.moreNext[:0], l.more
			for i, c := range l.moreNext {
				l.moreNext[i] = nil
				c.more = false
				switch {
				case c.closed || c.det != nil:
				case c.lingering:
					// Its input was more than a turn throws away.
					if done, err := l.lingered(c); done {
						l.close(c, err)
					}
				case c.waiting:
					if c.closing && c.watched&unix.EPOLLIN != 0 {
						l.throwAway(c)
					}
				default:
					l.readable(c)
				}
			}
		}
	}
}

// msUntil is d nanoseconds in whole milliseconds, rounded up, for
// epoll_wait.
func msUntil(d int64) int {
	if d <= 0 {
		return 0
	}
	return int(min((d+int64(time.Millisecond)-1)/int64(time.Millisecond), 1<<30))
}

func (l *loop) event(c *LoopConn, ev uint32) {
	switch {
	case c.dial != nil:
		l.dialEvent(c, ev)
	case c.lingering:
		if done, err := l.lingered(c); done {
			l.close(c, err)
		}
	case c.waiting:
		l.drain(c)
		if c.closing && !c.closed && c.waiting && c.watched&unix.EPOLLIN != 0 {
			// Closed with output waiting: the peer's input is thrown
			// away, so that a peer that writes before it reads gets to
			// read.
			l.throwAway(c)
		}
	case c.eof:
		// Nothing is read after the end of the stream; an error (the
		// peer reset the connection) closes it.
		if ev&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			err := unix.EPIPE
			if e, _ := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR); e != 0 {
				err = unix.Errno(e)
			}
			l.close(c, err)
		}
	case c.unread:
		// Not read (SetReading(false)): the peer's end of stream waits
		// behind its input, but a reset closes c now, as a read would
		// have found it (its input is lost to the reset anyway).
		c.hup = c.hup || ev&hupEvents != 0
		if ev&unix.EPOLLERR != 0 {
			if e, _ := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR); e != 0 {
				l.close(c, unix.Errno(e))
			}
		}
	default:
		c.hup = ev&hupEvents != 0
		l.readable(c)
	}
}

// resumeListeners puts back in the loop's set the listeners whose pause
// after an accept error is over, and returns how long until the next one
// is, in milliseconds, or -1.
func (l *loop) resumeListeners() int {
	wait := -1
	for _, ll := range l.lns {
		if ll == nil || ll.resume.IsZero() {
			continue
		}
		d := time.Until(ll.resume)
		if d <= 0 {
			ll.resume = time.Time{}
			if err := l.pollListener(ll.ln); err != nil {
				ll.resume = time.Now().Add(time.Second)
				d = time.Second
			} else {
				continue
			}
		}
		if ms := msUntil(int64(d)); wait < 0 || ms < wait {
			wait = ms
		}
	}
	return wait
}

// acceptAll accepts the connections waiting on the listener, up to a
// burst, and hands each to the loop whose turn it is. After an error
// other than a connection that went away, most likely out of descriptors
// or memory, where accepting at once would fail again, the listener
// leaves the loop's set for a pause.
func (l *loop) acceptAll(ll *loopListener) {
	ln := ll.ln
	if l.s.sys.stopping.Load() {
		unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, ln.fd, nil)
		return
	}
	for range acceptBurst {
		// syscall's Accept4, not x/sys/unix's: that one asks the
		// listener for its protocol (getsockopt) at every accept, to
		// tell L2TP's addresses from TCP's.
		fd, sa, err := syscall.Accept4(ln.fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		switch err {
		case nil:
			ll.backoff = 0
			l.handOff(fd, sa, !ln.unix && !ln.noDelay)
			continue
		case unix.EAGAIN:
			return
		case unix.EINTR, unix.ECONNABORTED:
			continue
		}
		if l.s.sys.stopping.Load() {
			// Shutdown shut the listener meanwhile, and accept says
			// EINVAL: the listener's end, not an error.
			unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, ln.fd, nil)
			return
		}
		l.acceptError(err)
		ll.backoff = min(max(2*ll.backoff, 5*time.Millisecond), time.Second)
		ll.resume = time.Now().Add(ll.backoff)
		unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, ln.fd, nil)
		return
	}
}

func (l *loop) acceptError(err error) {
	if f := l.s.opt.OnAcceptError; f != nil {
		func() {
			defer func() { recover() }() // nowhere to report it; the server goes on
			f(fmt.Errorf("netio: accept: %w", err))
		}()
	}
}

// handOff gives the accepted connection fd to the loop whose turn it is;
// noDelay: it has yet to be given TCP_NODELAY.
func (l *loop) handOff(fd int, sa syscall.Sockaddr, noDelay bool) {
	to := l.s.nextLoop()
	if to == l {
		l.add(fd, sa, noDelay)
		return
	}
	err := to.post(task{lf: func(to *loop) {
		if to == nil { // the loop stopped first
			unix.Close(fd)
			return
		}
		to.add(fd, sa, noDelay)
	}})
	if err != nil {
		unix.Close(fd)
	}
}

// add serves the accepted connection fd, giving it TCP_NODELAY first
// if noDelay.
func (l *loop) add(fd int, sa syscall.Sockaddr, noDelay bool) {
	if noDelay {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1) // as package net does
	}
	c := &LoopConn{l: l, fd: fd, remote: sockAddr(sa), heapIdx: -1, readAt: l.now, watched: readEvents}
	l.slot(c)
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, c.fd, &unix.EpollEvent{Events: readEvents, Fd: c.idx}); err != nil {
		// Not opened, so not closed either: OnClose does not hear of it.
		unix.Close(fd)
		l.free = append(l.free, c.idx)
		l.acceptError(fmt.Errorf("epoll: %w", err))
		return
	}
	l.conns[c.idx] = c
	l.stats.accepted.Add(1)
	l.opened(c, l.s.opt.TLSConfig)
}

// opened serves c, in the loop's table and its epoll set: it tells
// OnOpen, and OnShutdown if the server is shutting down; with a tlsCfg
// (an accepted connection under LoopOptions.TLSConfig), once its TLS
// handshake has succeeded.
func (l *loop) opened(c *LoopConn, tlsCfg *tls.Config) {
	l.stats.open.Add(1)
	if l.draining {
		l.s.sys.open.Add(1)
	}
	l.schedule(c)
	if tlsCfg != nil {
		l.startTLS(c, tlsCfg, true) // OnOpen follows the handshake
		return
	}
	if f := l.s.opt.OnOpen; f != nil {
		if !l.call(c, f) || !l.after(c) {
			return
		}
	}
	if l.draining {
		l.drainOne(c) // taken while draining: told as the others were
	}
}

// writable tells OnWritable that c, which refused a Write while output
// was queued, has sent all its output. If OnWritable's own output is
// refused again and then all sent, it is told again on a later turn.
func (l *loop) writable(c *LoopConn) {
	c.full = false
	f := l.s.opt.OnWritable
	if f == nil {
		return
	}
	if !l.call(c, f) {
		return
	}
	if c.det != nil {
		l.finishDetach(c, c.in[c.inOff:])
		return
	}
	if !l.send(c) {
		return // drain tells it again
	}
	if c.closing {
		l.close(c, c.closeErr)
		return
	}
	if c.full {
		l.post(task{lf: func(l *loop) {
			if l != nil && !c.closed && !c.closing && c.det == nil && !c.waiting {
				l.writable(c)
			}
		}})
	}
}

// localAddr is the address c's socket is bound to, or nil.
func (l *loop) localAddr(c *LoopConn) net.Addr {
	sa, err := syscall.Getsockname(c.fd)
	if err != nil {
		return nil
	}
	return sockAddr(sa)
}

// sockAddr is the net.Addr of a socket address.
func sockAddr(sa syscall.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *syscall.SockaddrUnix:
		return &net.UnixAddr{Name: a.Name, Net: "unix"}
	case *syscall.SockaddrInet4:
		return net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)))
	case *syscall.SockaddrInet6:
		ip := netip.AddrFrom16(a.Addr)
		if a.ZoneId != 0 { // link-local: rare
			ip = ip.WithZone(zoneName(a.ZoneId))
		}
		return net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, uint16(a.Port)))
	}
	return nil
}

// zoneName is the IPv6 zone of an interface's index as package net
// names it: the interface's name, else the index in decimal.
func zoneName(index uint32) string {
	if ifi, err := net.InterfaceByIndex(int(index)); err == nil && ifi.Name != "" {
		return ifi.Name
	}
	return strconv.FormatUint(uint64(index), 10)
}

// readBuf returns the buffer c's next read goes to, with c's unused input
// in front of it (start bytes): the loop's buffer, the unused input
// copied in, when there is little of it; otherwise the connection's own,
// where the unused input stays in place and the read appends to it.
func (l *loop) readBuf(c *LoopConn) (buf []byte, start int, own bool) {
	unused := len(c.in) - c.inOff
	if unused <= smallInput {
		n := copy(l.buf, c.in[c.inOff:])
		l.movedBytes(n)
		return l.buf, n, false
	}
	if cap(c.in)-len(c.in) < readSize {
		if cap(c.in)-unused >= readSize+unused {
			// Room enough once compacted: the unused input moves once.
			l.movedBytes(copy(c.in[:cap(c.in)], c.in[c.inOff:]))
		} else {
			grown := make([]byte, unused, max(min(2*cap(c.in), l.inputCap()), unused+readSize))
			l.movedBytes(copy(grown, c.in[c.inOff:]))
			c.in = grown
		}
		c.in, c.inOff = c.in[:unused], 0
	}
	return c.in[c.inOff:cap(c.in)], unused, true
}

// keepRest keeps the input the Handler left unused, rest, of a read into
// the buffer readBuf returned.
func (l *loop) keepRest(c *LoopConn, rest []byte, own bool) {
	switch {
	case own && len(rest) > smallInput:
		c.inOff = cap(c.in) - cap(rest) // in place
		c.in = c.in[:c.inOff+len(rest)]
		return
	case len(rest) == 0:
		if cap(c.in) > keepInput {
			c.in = nil
		}
		c.in, c.inOff = c.in[:0], 0
		return
	case len(rest) > smallInput:
		// Out of the loop's buffer, into one of its own with room for
		// the next read to append to.
		c.in = append(make([]byte, 0, len(rest)+readSize), rest...)
	case own || cap(c.in) > smallInput:
		// Little is left of a large frame: a small buffer of its own.
		c.in = append([]byte(nil), rest...)
	default:
		c.in = append(c.in[:0], rest...)
	}
	c.inOff = 0
	l.movedBytes(len(rest))
}

// readable reads c until its socket is empty (to the end of its stream if
// the peer has ended it) or its budget is spent, calling the Handler after
// each read, and stops early once c waits for room or is closed.
func (l *loop) readable(c *LoopConn) {
	if c.tls != nil {
		l.tlsReadable(c)
		return
	}
	read := 0
	for !c.closed && !c.closing && !c.waiting && !c.eof && !c.unread {
		if read >= l.budget {
			if !c.more {
				c.more = true
				l.more = append(l.more, c)
			}
			return
		}
		buf, start, own := l.readBuf(c)
		// A read adds at most readSize to the unused input (at most
		// MaxInput), however large the connection's buffer has grown.
		buf = buf[:min(len(buf), start+readSize)]
		n, err := unix.Read(c.fd, buf[start:])
		if err == unix.EINTR {
			continue
		}
		if n == 0 && err == nil {
			c.eof = true
		}
		// After SetReading(true) the input held goes to the Handler even
		// if no byte comes (c.offer), once.
		offer := c.offer && start > 0
		c.offer = false
		if n > 0 || c.eof || offer {
			read += max(n, 0)
			c.readAt = l.now
			total := start + max(n, 0)
			used, ok := l.handle(c, buf[:total])
			if !ok {
				return
			}
			rest := buf[used:total]
			if c.tls != nil {
				// StartTLS: what came after it in the clear is dropped.
				l.keepRest(c, nil, own)
				if l.sendAndCheck(c) {
					l.tlsReadable(c)
				}
				return
			}
			if c.det != nil {
				l.finishDetach(c, rest)
				return
			}
			if c.eof {
				rest = nil // nothing more comes to use it with
			}
			if len(rest) > l.maxInput {
				c.closeTooLarge()
				l.keepRest(c, nil, own)
				l.sendAndCheck(c)
				return
			}
			l.keepRest(c, rest, own)
			if !l.sendAndCheck(c) {
				return
			}
		}
		if err != nil && err != unix.EAGAIN {
			l.close(c, err)
			return
		}
		if err != nil || (start+max(n, 0) < len(buf) && !c.hup) {
			break // the socket is empty
		}
	}
	if c.closing && !c.closed && !c.waiting {
		l.close(c, c.closeErr)
	}
}

// resumeReading reads c again, on the loop's next turn: epoll reports
// only what arrives from now on (edge-triggered), so what came while c
// was not read is read then. What the Handler left unused is handed to
// it then even if nothing came: whole commands it held back while it
// paused.
func (l *loop) resumeReading(c *LoopConn) {
	c.readAt = l.clock() // idle counts from now
	l.schedule(c)
	l.post(task{lf: func(l *loop) {
		if l != nil && !c.closed && !c.closing && c.det == nil && !c.unread {
			c.offer = true // until the Handler has it (TLS: see tlsOffer)
			l.readable(c)
		}
	}})
}

// send writes the output of the call that just returned. It reports
// whether c may be read on: false once c waits for room or is closed.
func (l *loop) send(c *LoopConn) bool {
	if c.tls != nil {
		l.seal(c)
	}
	out := l.out
	l.out = l.out[:0]
	if c.closed {
		return false
	}
	if c.waiting { // a task's output, behind what waits for room
		l.queue(c, out)
		l.schedule(c) // a timeout may have taken it out of the heap
		if c.closing && c.watched&unix.EPOLLIN == 0 && !c.eof {
			l.watch(c, roomEvents|readEvents) // see event
		}
		return false
	}
	n := 0
	for n < len(out) {
		w, err := unix.Write(c.fd, out[n:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			break
		}
		if err != nil {
			l.close(c, unsent(err))
			return false
		}
		n += w
	}
	if f := l.s.opt.sent; f != nil && len(out) > 0 {
		f(len(out), n)
	}
	if n == len(out) {
		return true
	}
	c.pending, c.off = c.pending[:0], 0
	l.queue(c, out[n:])
	c.waiting = true
	c.progressAt, c.outq = l.now, l.kernelQueued(c)
	l.schedule(c)
	if c.closing && !c.eof {
		l.watch(c, roomEvents|readEvents) // see event
	} else {
		l.watch(c, roomEvents)
	}
	return false
}

// queue appends p to c's output waiting for room. What is waiting moves
// to the front of the buffer first, so the buffer never holds more than
// MaxQueued bytes (what Write lets wait), however the sends go.
func (l *loop) queue(c *LoopConn, p []byte) {
	if len(p) == 0 {
		return
	}
	unsent := len(c.pending) - c.off
	if c.off > 0 && cap(c.pending)-len(c.pending) < len(p) {
		copy(c.pending, c.pending[c.off:])
		c.pending, c.off = c.pending[:unsent], 0
	}
	if need := len(c.pending) + len(p); need > cap(c.pending) {
		grown := make([]byte, len(c.pending), min(max(2*cap(c.pending), need), max(l.maxQueued, need)))
		copy(grown, c.pending)
		c.pending = grown
	}
	c.pending = append(c.pending, p...)
	l.stats.queued.Add(int64(len(p)))
}

// drain writes c's pending output once the socket has room again, and
// goes back to reading c when all of it is sent.
func (l *loop) drain(c *LoopConn) {
	sent := false
	for c.off < len(c.pending) {
		w, err := unix.Write(c.fd, c.pending[c.off:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			if sent {
				c.progressAt, c.outq = l.now, l.kernelQueued(c)
			}
			return
		}
		if err != nil {
			l.close(c, unsent(err))
			return
		}
		c.off += w
		l.stats.queued.Add(-int64(w))
		sent = true
	}
	c.pending, c.off, c.waiting = nil, 0, false
	c.readAt = l.now // reading resumes: idle counts from now
	l.schedule(c)    // the idle timeout may be earlier than where it sits
	if c.closing {
		l.close(c, c.closeErr)
		return
	}
	// Re-arming reports what arrived meanwhile.
	l.watch(c, readEvents)
	if c.full && !c.closed {
		l.writable(c)
	}
	if l.draining && !c.closed {
		l.drainConn(c)
	}
	if t := c.tls; t != nil && t.stopped && !c.closed && !c.closing && !c.waiting && !c.unread && c.det == nil {
		// The records left while the output waited: the socket may hold
		// nothing to raise an event.
		l.tlsReadable(c)
	}
}

func (l *loop) watch(c *LoopConn, events uint32) {
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: events, Fd: c.idx}); err != nil {
		l.close(c, fmt.Errorf("netio: epoll: %w", err))
		return
	}
	c.watched = events
}

func (l *loop) close(c *LoopConn, err error) {
	if c.closed {
		return
	}
	if c.fd >= 0 {
		if !c.lingering && l.graceful(c, err) {
			var lingers bool
			if lingers, err = l.linger(c, err); lingers {
				return // closed once the peer has it all (see linger)
			}
		}
		err = droppedErr(c, err)
		unix.Close(c.fd) // which takes it out of the epoll set
	}
	l.release(c, err)
}

// graceful reports whether c closes in good order (its output all sent)
// with err, and the peer may still be sending.
func (l *loop) graceful(c *LoopConn, err error) bool {
	return !c.eof && !c.waiting && !l.s.sys.quit.Load() && gracefulErr(err)
}

// linger ends c's output (FIN), all of it in the socket, and keeps c
// open, its input read and thrown away, until the peer has all of it:
// closing a socket with unread input sends a reset instead, which
// destroys what the kernel has not yet sent, and what the peer has not
// acknowledged. c lingers until the peer has acknowledged all of its
// output (its socket's send queue is empty) or ended its stream, or
// lingerTime passes: then OnClose learns ErrUnsent. The loop looks at
// each input (a peer that goes on sending) and when the kernel wakes it
// as the peer acknowledges the FIN (the state change from FIN_WAIT1
// wakes the socket's pollers, EPOLLOUT being set from the shutdown on).
// linger reports whether c lingers, or else what OnClose learns.
func (l *loop) linger(c *LoopConn, err error) (bool, error) {
	// Once the FIN is queued, it is in the send queue too, until acked.
	c.outq = 0
	switch unix.Shutdown(c.fd, unix.SHUT_WR) {
	case nil:
		c.outq = 1
	case unix.ENOTCONN:
		// The connection is over (reset, or closed both ways): there
		// is nothing left to send or to wait for.
		return false, err
	}
	c.markClosing()
	c.lingering, c.closeErr = true, err
	// The socket is read even when the last read emptied it: input that
	// came since may wait, its event not yet handled (later in this
	// turn's events, or not yet taken from epoll), and closing over it
	// would send a reset.
	if done, err := l.lingered(c); done {
		return false, err
	}
	if c.watched != lingerEvents {
		l.watch(c, lingerEvents)
		if c.closed {
			return true, nil
		}
	}
	c.deadline = l.now + int64(lingerTime)
	l.schedule(c)
	return true, nil
}

// endLinger ends c's linger when its time is over: with err, unless the
// peer turned out to have all the data by then.
func (l *loop) endLinger(c *LoopConn, err error) {
	if done, e := l.lingered(c); done {
		err = e
	}
	l.close(c, err)
}

// pump has nothing to start on epoll: output is written as the socket
// takes it, and input read as it comes.
func (l *loop) pump(*LoopConn) {}

// lingered throws away the input of c, lingering, and reports whether c
// is done: the peer has ended its stream, or has all of c's output, or
// the linger time is over; err is what OnClose learns then.
func (l *loop) lingered(c *LoopConn) (done bool, err error) {
	empty, end, _ := l.discard(c)
	if end {
		// Ended, or reset: after a reset the send queue does not tell
		// what the peer had (its acknowledgement may not have come
		// first), and the peer chose to end.
		return true, c.closeErr
	}
	if !empty {
		// Closing over the input left would reset the connection: it
		// is read on next turn.
		return false, nil
	}
	if q := l.kernelQueued(c); q <= c.outq && !l.lingerHeld() {
		return true, c.closeErr // the peer has all the data
	}
	return false, nil
}

// throwAway throws away the input of c, closed with output waiting, so
// that a peer that writes before it reads gets to read.
func (l *loop) throwAway(c *LoopConn) {
	if _, end, err := l.discard(c); end {
		if err != nil {
			l.close(c, err)
			return
		}
		c.eof = true
	}
}

// discard reads and drops c's input, up to a bound, so that one
// connection does not hold the loop: empty means a read emptied the
// socket; else c is read on next turn (its events are edge-triggered:
// none comes for the input left). end means the stream ended or failed
// (err).
func (l *loop) discard(c *LoopConn) (empty, end bool, err error) {
	for n := 0; n < 1<<20; {
		k, err := unix.Read(c.fd, l.buf)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return true, false, nil
		case err != nil:
			return false, true, err
		case k == 0:
			return false, true, nil
		}
		n += k
	}
	if !c.more {
		c.more = true
		l.more = append(l.more, c)
	}
	return false, false, nil
}

// release frees c's slot and tells OnClose.
func (l *loop) release(c *LoopConn, err error) {
	c.closed = true
	c.gone.Store(true)
	l.unschedule(c)
	l.conns[c.idx] = nil
	l.freed = append(l.freed, c.idx) // see run
	if c.timers > 0 {
		l.deadTimers.Add(int64(c.timers))
	}
	l.stats.queued.Add(-int64(len(c.pending) - c.off))
	l.stats.released(err, c.eof)
	c.in, c.inOff, c.pending, c.off = nil, 0, nil, 0
	if c.tls != nil && l.tlsReleased(c, err) {
		return // told when its handshake ends (handshakeDone)
	}
	if f := l.s.opt.OnClose; f != nil && c.tlsOpened() {
		onClose(f, c, err)
	}
	if l.draining && l.s.sys.open.Add(-1) == 0 {
		l.s.sys.endDrain()
	}
}

// shutdown closes the loop's connections, and ends its dials.
func (l *loop) shutdown() {
	for _, c := range l.conns {
		switch {
		case c == nil:
		case c.dial != nil:
			l.dialFailed(c, ErrServerClosed)
		default:
			l.close(c, ErrServerClosed)
		}
	}
}

// startDrain begins a Shutdown on the loop: the listener leaves its set,
// and each connection is closed once quiet, or handed to OnShutdown.
func (l *loop) startDrain() {
	l.draining = true
	for _, ll := range l.lns {
		if ll != nil {
			unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, ll.ln.fd, nil)
		}
	}
	l.lns = nil
	for _, c := range l.conns {
		if c != nil && c.dial != nil {
			l.dialFailed(c, ErrServerClosed)
		}
	}
	for _, c := range l.conns {
		if c != nil {
			l.s.sys.open.Add(1)
		}
	}
	for _, c := range l.conns {
		if c == nil || c.lingering { // closed already: it ends on its own
			continue
		}
		l.drainOne(c)
	}
}

// endDrain ends the wait of Shutdown: no connection is open.
func (s *loopSys) endDrain() { s.drainOnce.Do(func() { close(s.drained) }) }

// expire times out the connections whose deadline has come.
func (l *loop) expire() {
	for len(l.heap) > 0 && l.heap[0].heapAt <= l.now {
		c := l.heap[0]
		at, err := l.expiry(c)
		switch {
		case at == 0:
			l.unschedule(c)
		case at > l.now:
			c.heapAt = at
			l.down(0)
		case c.dial != nil:
			l.dialFailed(c, err)
		default:
			l.unschedule(c)
			if err == ErrWriteTimeout && l.peerTook(c) {
				continue
			}
			l.timeout(c, err)
		}
	}
}

// kernelQueued is how many bytes c's socket holds unacknowledged or
// unsent, or -1.
func (l *loop) kernelQueued(c *LoopConn) int {
	n, err := unix.IoctlGetInt(c.fd, unix.SIOCOUTQ)
	if err != nil {
		return -1
	}
	return n
}

// peerTook reports whether c's peer, at its write timeout, has taken
// bytes from the socket since its output last moved: the kernel sends
// to a slow reader as its window opens, but EPOLLOUT comes only once half
// of the socket's buffer is free, which a steady slow reader may never
// let happen. Then the output has made progress: the loop sends what
// fits, and the timeout counts from now.
func (l *loop) peerTook(c *LoopConn) bool {
	q := l.kernelQueued(c)
	if q < 0 || c.outq < 0 || q >= c.outq {
		return false
	}
	c.progressAt, c.outq = l.now, q
	l.drain(c)
	if !c.closed {
		l.schedule(c)
	}
	return true
}

// finish ends a call on c other than a read's Handler call (see after).
func (l *loop) finish(c *LoopConn) { l.after(c) }

// dialAt is when c's dial times out, or 0 where c is connected.
func (l *loop) dialAt(c *LoopConn) int64 {
	if c.dial != nil {
		return c.dial.at
	}
	return 0
}

// detach takes c out of the loop's set and makes a net.Conn of its
// descriptor; finishDetach completes the hand-off once the call returns.
func (l *loop) detach(c *LoopConn) (net.Conn, error) {
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, c.fd, nil); err != nil {
		return nil, fmt.Errorf("netio: detach: %w", err)
	}
	f := os.NewFile(uintptr(c.fd), "")
	nc, err := net.FileConn(f) // a duplicate, on Go's poller
	f.Close()
	c.fd = -1
	if err != nil {
		c.markClosing()
		c.closeErr = fmt.Errorf("netio: detach: %w", err)
		return nil, c.closeErr
	}
	c.det = &detachedConn{Conn: nc, ready: make(chan struct{})}
	c.ended.Store(true)
	return c.det, nil
}

func (l *loop) finishDetach(c *LoopConn, unused []byte) {
	d := c.det
	d.in = append([]byte(nil), unused...)
	d.out = append(append([]byte(nil), c.pending[c.off:]...), l.out...)
	l.out = l.out[:0]
	close(d.ready)
	l.release(c, ErrDetached)
}

// armTimer arms the timerfd for the earliest live timer, unless it is
// armed for that time or earlier already: at most one system call for
// each timer that becomes the earliest, none on a turn that changed
// nothing.
func (l *loop) armTimer() {
	for len(l.timers) > 0 && !l.timers[0].live() {
		l.popTimer()
	}
	if len(l.timers) == 0 {
		return // if armed, the wake-up it brings finds nothing to do
	}
	at := l.timers[0].at
	if l.armedAt != 0 && l.armedAt <= at {
		return
	}
	d := max(at-l.clock(), 1) // 0 would disarm it
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d)}
	if err := unix.TimerfdSettime(l.tfd, 0, &spec, nil); err != nil {
		return // not armed: epoll_wait's timeout covers it (see run)
	}
	l.armedAt = at
}

// timerWait is how long epoll_wait may wait for the timers, in
// milliseconds: forever while the timerfd is armed for them.
func (l *loop) timerWait() int {
	if len(l.timers) == 0 || l.armedAt != 0 {
		return -1
	}
	return msUntil(l.timers[0].at - l.now)
}

// Panics. A panic in a call on a connection's loop (its Handler, a
// callback, a function run by Do or AfterFunc) is recovered: the
// connection is closed at once, its output dropped, and OnClose learns a
// *PanicError. The loop and its other connections go on.

// onClose tells OnClose; a panic there has no connection left to close
// and is dropped.
func onClose(f func(*LoopConn, error), c *LoopConn, err error) {
	defer func() { recover() }()
	f(c, err)
}

// panicked closes c, whose call panicked with v, at once.
func (l *loop) panicked(c *LoopConn, v any) {
	c.calling.Store(false)
	err := &PanicError{Value: v, Stack: debug.Stack()}
	c.closeErr = err // for Dial, whose OnOpen this may be (openPanic)
	l.out = l.out[:0]
	l.tl.owner, l.tl.sealed = nil, 0
	if d := c.det; d != nil {
		d.Conn.Close() // the goroutine it was given to learns net.ErrClosed
		close(d.ready)
		l.release(c, err)
		return
	}
	if !c.closed {
		c.lingering = true // no linger: closed at once
		l.close(c, err)
	}
}

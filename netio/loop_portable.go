//go:build !linux || netio_portable

package netio

// The portable Loops server: every OS, and Linux under the build tag
// netio_portable. A loop is a goroutine running the functions posted to
// it, one at a time: every call on a connection (its Handler, the
// LoopOptions callbacks, functions run by Do and AfterFunc) runs on its
// loop, as on Linux. A connection's I/O is done by two goroutines of its
// own, blocked in the net.Conn's Read and Write: the loop tells each
// what to do next, one read or one write at a time, and each posts what
// it did back to the loop. So a connection is read only when its loop
// asks (never while its output waits for the peer, except for the one
// read that was under way when the output was written), and the loop
// itself never blocks on a connection. The loop's clock is read each
// time it wakes up, as on Linux; a real timer wakes it for its earliest
// deadline or timer.
//
// What it does not guarantee: a connection has goroutines (two) and a
// read buffer of its own; a read that was under way when output was
// written or SetReading(false) was called is kept, and given to the
// Handler once it may be; ReadBudget is moot (a loop reads one buffer of
// a connection per turn); CPUs pins nothing (it is checked as on
// epoll, where it can be: see LoopOptions.CPUs); a close lingers
// until the peer ends its stream or has acknowledged all of the output
// where the system tells (Linux), else until the peer ends its stream
// or the linger time is over (then OnClose learns ErrUnsent, whether or
// not the peer had the output); a peer's reset after its end of stream
// is noticed only by a write, and one of a connection not read
// (SetReading(false)) only where the connection has a descriptor to
// watch (watchReset), else when reading resumes.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	// readSize is the most a read of a connection adds to its unused
	// input: the size of its reads while each fills its buffer.
	readSize = 64 << 10
	// smallRead is the size of its reads otherwise, so that a quiet
	// connection holds a small buffer.
	smallRead = 8 << 10
	// keepOutput is the most capacity a connection keeps for output
	// once all of it is sent.
	keepOutput = 64 << 10
	// lingerTime is how long a closed connection whose peer goes on
	// sending waits for the peer's end of stream.
	lingerTime = 5 * time.Second
	// firstTry is how long a try of output may wait for room, where a
	// socket cannot be written without waiting (see descWrite), before
	// the loop learns that the socket did not take it all at once: the
	// connection then waits for room, as on Linux.
	firstTry = time.Millisecond
	// lingerPoll is how often a loop asks the system whether lingering
	// connections' peers have acknowledged all of their output, where it
	// can tell.
	lingerPoll = 10 * time.Millisecond
	// keepInput is the most capacity a TLS connection keeps for
	// plaintext the Handler left unused, once it has used all of it.
	keepInput = 512
)

// aLongTimeAgo is a deadline that interrupts a Read or Write at once.
var aLongTimeAgo = time.Unix(1, 0)

// loopSys is the portable part of a Loops server.
type loopSys struct {
	running   sync.WaitGroup
	workers   sync.WaitGroup // the accepting goroutine and the connections' I/O goroutines
	quit      atomic.Bool
	quitCh    chan struct{} // closed by Close
	stopping  atomic.Bool   // Shutdown has closed the listener
	closeOnce sync.Once
	closeErr  error
	shutOnce  sync.Once
	drainOnce sync.Once
	drained   chan struct{}
	open      atomic.Int64 // as on Linux: connections open while shutting down, +1
	lnErr     error        // closing the listeners (Loops.mu)
	nextLn    int32        // the id of the next listener (Loops.mu)
	// TLS handshakes running, each on a goroutine: Close waits for them.
	handshakes sync.WaitGroup
}

// connSys is the portable part of a LoopConn: its net.Conn and the state
// of its I/O goroutines. All but rn, rerr, wn and werr (set by the I/O
// goroutines before they post) belong to the loop.
type connSys struct {
	nc          net.Conn
	reads       chan []byte  // the buffer of the next read, to the reading goroutine
	writes      chan ioWrite // the next write, to the writing goroutine
	onRead      func(*loop)
	onWrite     func(*loop)
	rn, wn      int
	rerr, werr  error
	reading     bool // a read is under way
	watching    bool // the read under way only waits for a reset (see watchReset)
	reset       bool // the watch found one (set by the reading goroutine)
	noWatch     bool // a watch failed: none is tried again
	discarding  bool // it throws input away (closing)
	writing     bool // a write is under way
	wFirst      bool // the write is a try: once, without waiting (write)
	closeAfter  bool // close c, with c.closeErr, once the try is done
	waited      bool // a try left output: the rest waits for room
	wlen        int  // the size of the write under way
	rIntr       bool // the read's deadline was set to interrupt it
	wIntr       bool
	stallCheck  bool   // the write was interrupted at the write timeout
	probing     bool   // the write tries whether the socket takes any of the output (see writeDone)
	fresh       bool   // input (or the end of stream) the Handler has not been given
	big         bool   // the last read filled its buffer: the next is of readSize
	rsize       int    // the size of the read under way
	direct      int    // the write under way is one call's output of this size (the sent hook), or -1
	lingerIdx   int    // in the loop's lingerers, or -1
	readyClosed bool   // a Detach's ready is closed
	queued      int64  // its share of Stats' Queued
	rbuf        []byte // the buffer of the read under way
	raw         []byte // a TLS connection's buffer for what it reads

	// Writes on the descriptor (descWrite), where the system has them.
	rc   syscall.RawConn
	try  func(fd uintptr) bool // rc's Write calls it
	tp   []byte                // what try writes
	tn   int                   // and what it wrote of it
	terr error
	tall bool  // it waits for room until all of tp is written
	wAt  int64 // the loop's clock when the write last made progress, or -1: unknown (set by the writing goroutine)
}

// An ioWrite is a write for a connection's writing goroutine: first, it
// is tried once (the loop does not interrupt it); else it waits for room
// until all is written.
type ioWrite struct {
	p     []byte
	first bool
}

// A loop runs the calls of its connections, one at a time.
type loop struct {
	s  *Loops
	id int

	mu      sync.Mutex
	stopped bool
	tasks   []task
	running []task
	wake    chan struct{}
	timer   *time.Timer

	conns     []*LoopConn
	free      []int32
	heap      []*LoopConn // by heapAt, as on Linux
	lingerers []*LoopConn // closed, waiting for the peer to have all the output (where the system tells)
	out       []byte
	maxQueued int
	maxDo     int
	maxInput  int
	idle      int64
	stall     int64

	timers     []*LoopTimer
	timerSeq   uint64
	deadTimers atomic.Int64

	base     time.Time
	now      int64
	draining bool
	polled   time.Time // lingerers last polled
	junk     []byte    // where lingerers' input is read to be thrown away (lingered)

	// Writes that end soon and whose results Sync waits for (tries,
	// probes, writes interrupted at the write timeout), and who waits
	// for none to be under way (tests, Sync).
	settling int
	settled  []chan struct{}

	stats loopStats
	dials []*dialing // Dials in flight
	tl    tlsLoop    // the sealing of TLS output
}

// start starts the loops, with no listener yet.
func (s *Loops) start() error {
	s.sys.quitCh = make(chan struct{})
	n := s.loopCount()
	for i := range n {
		l := &loop{s: s, id: i, wake: make(chan struct{}, 1), timer: time.NewTimer(time.Hour),
			maxQueued: s.opt.MaxQueued, maxDo: s.opt.MaxDo, maxInput: s.opt.MaxInput,
			idle: max(int64(s.opt.IdleTimeout), 0), stall: max(int64(s.opt.WriteTimeout), 0),
			base: s.opt.Clock()}
		l.timer.Stop()
		s.loops = append(s.loops, l)
	}
	for _, l := range s.loops {
		s.sys.running.Add(1)
		go l.run()
	}
	return nil
}

// addListener takes ln, as on Linux: where the system can duplicate it
// (File and net.FileListener work: Unix systems, Windows, Plan 9), the
// server accepts from a duplicate and closes a *net.TCPListener, so that
// a second Serve of it fails with net.ErrClosed; where File fails (js
// and wasip1, whose File is ENOSYS) it accepts from ln itself, which
// Close closes. A
// *net.UnixListener is closed with the server, so that its socket file
// goes then. It claims ln (served) before it duplicates it, until it has
// closed it.
func (s *Loops) addListener(ln net.Listener) error {
	if !claimListener(ln) {
		return errServed(ln)
	}
	acc := ln
	var f *os.File
	err := errNoDup
	if !s.opt.noDup {
		f, err = ln.(interface{ File() (*os.File, error) }).File()
	}
	if err == nil {
		dup, err := net.FileListener(f)
		f.Close()
		if err != nil {
			unclaimListener(ln)
			return fmt.Errorf("netio: listener: %w", err)
		}
		acc = dup
	} else if errors.Is(err, net.ErrClosed) || listenerClosed(ln) { // File fails whether or not ln is closed (js, wasip1)
		unclaimListener(ln)
		return errClosedListener(ln) // as the epoll loops say it
	}
	lis := &listener{fd: -1, addr: ln.Addr(), acc: acc}
	if ul, ok := ln.(*net.UnixListener); ok {
		lis.unix, lis.keep = true, ul
	} else if acc == ln {
		lis.keep = ln // closed, and let go, with the server
	}
	s.mu.Lock()
	if s.sys.quit.Load() || s.sys.stopping.Load() {
		s.mu.Unlock()
		if acc != ln {
			acc.Close()
		}
		unclaimListener(ln)
		return ErrServerClosed
	}
	lis.id = s.sys.nextLn
	s.sys.nextLn++
	s.lns = append(s.lns, lis)
	s.sys.workers.Add(1)
	s.mu.Unlock()
	if f := s.opt.listening; f != nil {
		f()
	}
	go acceptConns(s, acc)
	if !lis.unix && acc != ln {
		closeClaimed(ln)
	}
	return nil
}

// acceptConns accepts connections until the listener is closed, and
// hands each to the loop whose turn it is. After an error, most likely
// out of descriptors, it pauses for a time that doubles from 5 ms up to
// 1 s while errors last. It is a function, not a method, as are the
// connections' I/O goroutines: their stacks do not name the loops.
func acceptConns(s *Loops, ln net.Listener) {
	defer s.sys.workers.Done()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.sys.stopping.Load() || s.sys.quit.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			acceptError(s, err)
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-s.sys.quitCh:
				t.Stop()
				return
			}
			continue
		}
		backoff = 0
		to := s.nextLoop()
		err = to.post(task{lf: func(l *loop) {
			if l == nil { // the loop stopped first
				nc.Close()
				return
			}
			l.add(nc, true, "")
		}})
		if err != nil {
			nc.Close()
		}
	}
}

func acceptError(s *Loops, err error) {
	if f := s.opt.OnAcceptError; f != nil {
		func() {
			defer func() { recover() }() // nowhere to report it; the server goes on
			// The system's error number alone, as the epoll loops give it
			// ("netio: accept: too many open files"), not the
			// *net.OpError of net.Listener's Accept around it.
			f(fmt.Errorf("netio: accept: %w", sysErr(err)))
		}()
	}
}

// Close stops accepting, ends the dials in flight, closes every
// connection (OnClose learns ErrServerClosed; unsent output is dropped),
// waits for the loops and the connections' goroutines to end, and closes
// the listeners. It must not be called on a loop, where it would wait
// for itself: a Handler that ends the server (as evio's Shutdown action
// or gnet's does) calls it in a goroutine of its own (go s.Close()).
func (s *Loops) Close() error {
	s.sys.closeOnce.Do(func() {
		s.sys.quit.Store(true)
		close(s.sys.quitCh)
		s.sys.closeErr = s.closeListeners()
		for _, l := range s.loops {
			l.wakeUp()
		}
		s.sys.running.Wait()
		s.sys.handshakes.Wait() // their I/O ended with their connections
		s.sys.workers.Wait()
	})
	return s.sys.closeErr
}

// closeListeners closes the listeners (their accepting goroutines
// end), and the Unix listeners given, whose socket files go then.
func (s *Loops) closeListeners() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ln := range s.lns {
		if ln.acc == nil {
			continue
		}
		if err := ln.acc.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			s.sys.lnErr = errors.Join(s.sys.lnErr, fmt.Errorf("netio: close listener %v: %w", ln.addr, err))
		}
		if ln.keep != nil {
			closeClaimed(ln.keep) // closed already if it was acc
		}
		ln.acc = nil
	}
	return s.sys.lnErr
}

// Shutdown stops accepting at once (the listeners are closed before
// anything else), ends the dials in flight (ErrServerClosed), then closes each connection once its output is sent,
// or as OnShutdown decides, and waits until all of them are closed or
// ctx is done; then it closes the server as Close does. It returns ctx's
// error if ctx ended first. Each call, a second one included, waits on
// its own ctx. It must not be called on a loop (see Close).
func (s *Loops) Shutdown(ctx context.Context) error {
	var err error
	s.sys.shutOnce.Do(func() {
		s.mu.Lock()
		s.sys.stopping.Store(true) // no listener is added from now on
		s.mu.Unlock()
		err = s.closeListeners()
		if f := s.opt.stopped; f != nil {
			f()
		}
		s.sys.drained = make(chan struct{})
		s.sys.open.Store(1)
		done := make(chan struct{}, len(s.loops))
		for _, l := range s.loops {
			perr := l.post(task{lf: func(l *loop) {
				if l != nil {
					l.startDrain()
				}
				done <- struct{}{}
			}})
			if perr != nil {
				done <- struct{}{}
			}
		}
		for range s.loops {
			<-done
		}
		if s.sys.open.Add(-1) == 0 {
			s.sys.endDrain()
		}
	})
	// Every caller waits on its own ctx; the first one started the drain.
	return s.awaitDrain(ctx, err)
}

func (s *Loops) isClosed() bool { return s.sys.quit.Load() }

func (s *loopSys) endDrain() { s.drainOnce.Do(func() { close(s.drained) }) }

func (l *loop) wakeUp() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// post queues t for the loop, or fails once the loop has stopped.
func (l *loop) post(t task) error {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return ErrServerClosed
	}
	l.tasks = append(l.tasks, t)
	first := len(l.tasks) == 1
	l.mu.Unlock()
	if first {
		l.wakeUp()
	}
	return nil
}

func (l *loop) clock() int64 { return int64(l.s.opt.Clock().Sub(l.base)) }

// run is the loop: it serves until the server quits.
func (l *loop) run() {
	defer l.s.sys.running.Done()
	defer l.stop()
	defer l.shutdown()
	for !l.s.sys.quit.Load() {
		l.now = l.clock()
		l.expire()
		l.expireDials()
		l.runTimers()
		l.pollLingerers()
		wait := l.nextWait()
		if wait == 0 {
			l.runTasks()
			continue
		}
		if wait > 0 {
			l.timer.Reset(wait)
		}
		select {
		case <-l.wake:
		case <-l.timer.C:
		}
		l.timer.Stop()
		l.now = l.clock()
		l.runTasks()
	}
}

// nextWait is how long the loop may wait for something to do: until its
// earliest deadline or timer, on its clock; -1 is forever.
func (l *loop) nextWait() time.Duration {
	at := int64(-1)
	if len(l.heap) > 0 {
		at = l.heap[0].heapAt
	}
	for len(l.timers) > 0 && !l.timers[0].live() {
		l.popTimer()
	}
	if len(l.timers) > 0 && (at < 0 || l.timers[0].at < at) {
		at = l.timers[0].at
	}
	if d := l.nextDial(); d >= 0 && (at < 0 || d < at) {
		at = d
	}
	d := time.Duration(-1)
	if at >= 0 {
		d = time.Duration(max(at-l.clock(), 0))
	}
	if len(l.lingerers) > 0 && (d < 0 || d > lingerPoll) {
		d = lingerPoll
	}
	return d
}

// stop ends the loop: nothing is posted to it from now on; hand-offs
// left close their connections.
func (l *loop) stop() {
	l.mu.Lock()
	l.stopped = true
	left := l.tasks
	l.tasks = nil
	l.mu.Unlock()
	for _, ch := range l.settled {
		close(ch)
	}
	l.settled = nil
	for _, t := range left {
		if t.lf != nil {
			t.lf(nil)
		}
	}
}

// shutdown closes the loop's connections, and ends its dials.
func (l *loop) shutdown() {
	l.endDials()
	for _, c := range l.conns {
		if c == nil {
			continue
		}
		if c.det != nil { // a Detach waiting for its I/O: the taker has it
			l.detached(c, false)
			continue
		}
		l.close(c, ErrServerClosed)
	}
	l.settleDetaches()
}

// detachSettle bounds how long a closing server waits for the I/O of the
// connections being detached to return.
const detachSettle = 5 * time.Second

// settleDetaches waits for the I/O under way on the connections being
// detached, which was interrupted, to return, and takes its results (what
// a read got goes to the detached connection's Read, and the deadlines
// that interrupted it are cleared), so that a Detach completes as it
// would with the server open. Other hand-offs are left for stop. After
// detachSettle the connections are handed over as they are.
func (l *loop) settleDetaches() {
	var later []task
	defer func() {
		l.mu.Lock()
		l.tasks = append(later, l.tasks...)
		l.mu.Unlock()
	}()
	end := time.Now().Add(detachSettle)
	for l.detaching() {
		wait := time.Until(end)
		if wait <= 0 {
			for _, c := range l.conns {
				if c != nil && c.det != nil {
					l.detached(c, true)
				}
			}
			return
		}
		l.timer.Reset(wait)
		select {
		case <-l.wake:
		case <-l.timer.C:
		}
		l.timer.Stop()
		l.mu.Lock()
		ts := l.tasks
		l.tasks = nil
		l.mu.Unlock()
		for _, t := range ts {
			if t.lf != nil && t.c != nil && t.c.det != nil && !t.c.closed {
				t.lf(l)
			} else {
				later = append(later, t)
			}
		}
	}
}

// detaching reports whether a connection's Detach waits for its I/O.
func (l *loop) detaching() bool {
	for _, c := range l.conns {
		if c != nil && c.det != nil {
			return true
		}
	}
	return false
}

// add serves the connection nc, accepted or dialed (of dialHost, a TLS
// client's ServerName by default).
func (l *loop) add(nc net.Conn, accepted bool, dialHost string) *LoopConn {
	c := &LoopConn{l: l, fd: -1, remote: nc.RemoteAddr(), heapIdx: -1, readAt: l.now, dialed: !accepted, dialHost: dialHost}
	c.sys = connSys{nc: nc, reads: make(chan []byte, 1), writes: make(chan ioWrite, 1), direct: -1, lingerIdx: -1}
	c.sys.onRead = func(l *loop) {
		if l != nil {
			l.readDone(c)
		}
	}
	c.sys.onWrite = func(l *loop) {
		if l != nil {
			l.writeDone(c)
		}
	}
	initRaw(l, &c.sys)
	if k := len(l.free); k > 0 {
		c.idx = l.free[k-1]
		l.free = l.free[:k-1]
	} else {
		c.idx = int32(len(l.conns))
		l.conns = append(l.conns, nil)
	}
	l.conns[c.idx] = c
	if accepted {
		l.stats.accepted.Add(1)
	} else {
		l.stats.dialed.Add(1)
	}
	l.stats.open.Add(1)
	if l.draining {
		l.s.sys.open.Add(1)
	}
	startIO(l.s, c)
	l.schedule(c)
	if cfg := l.s.opt.TLSConfig; cfg != nil && accepted {
		l.startTLS(c, cfg, true) // OnOpen follows the handshake
		l.pump(c)
		return c
	}
	if f := l.s.opt.OnOpen; f != nil {
		if !l.call(c, f) || !l.after(c) {
			return c
		}
	}
	if l.draining {
		l.drainOne(c)
	}
	if !c.closed {
		l.pump(c)
	}
	return c
}

// startIO starts c's reading and writing goroutines. They end once the
// loop closes their channels, as it releases c.
func startIO(s *Loops, c *LoopConn) {
	s.sys.workers.Add(2)
	go readConn(s, c)
	go writeConn(s, c)
}

func readConn(s *Loops, c *LoopConn) {
	defer s.sys.workers.Done()
	cs := &c.sys
	for buf := range cs.reads {
		if len(buf) == 0 { // a watch: no read asks for nothing
			cs.reset, cs.rerr = watchReset(cs)
			c.l.post(task{c: c, lf: cs.onRead})
			continue
		}
		cs.rn, cs.rerr = cs.nc.Read(buf)
		c.l.post(task{c: c, lf: cs.onRead}) // if the loop has stopped, it closed reads
	}
}

func writeConn(s *Loops, c *LoopConn) {
	defer s.sys.workers.Done()
	cs := &c.sys
	for w := range cs.writes {
		cs.wn, cs.werr = cs.write(w.p, w.first)
		c.l.post(task{c: c, lf: cs.onWrite})
	}
}

// write writes p: with try, what the socket takes of it at once, as a
// loop's write does on Linux; else all of it, waiting for room. It uses
// the descriptor (descWrite), which also tells when the write made
// progress; where the system has none, net.Conn's Write, and a try is
// what the socket takes within firstTry.
func (cs *connSys) write(p []byte, try bool) (int, error) {
	cs.wAt = -1
	if n, err, ok := descWrite(cs, p, !try); ok {
		return n, err
	}
	if !try {
		return cs.nc.Write(p)
	}
	cs.nc.SetWriteDeadline(time.Now().Add(firstTry))
	n, err := cs.nc.Write(p)
	cs.nc.SetWriteDeadline(time.Time{})
	if n < len(p) && errors.Is(err, os.ErrDeadlineExceeded) {
		err = nil
	}
	return n, err
}

// pump starts the I/O c is ready for: a write of its pending output, a
// read of input for its Handler, or a read to throw input away while it
// closes.
func (l *loop) pump(c *LoopConn) {
	cs := &c.sys
	if c.closed || c.det != nil {
		return
	}
	if !cs.writing && c.off < len(c.pending) {
		// Output is tried at once, as on Linux, until the socket leaves
		// some of it: then the rest waits for room.
		cs.writing, cs.wFirst, cs.wlen = true, !cs.waited, len(c.pending)-c.off
		if cs.wFirst {
			l.settling++ // Sync waits for tries, as a loop's write on Linux
		}
		cs.writes <- ioWrite{c.pending[c.off:], cs.wFirst}
	}
	if cs.reading {
		if cs.watching && !cs.rIntr && !l.watchable(c) {
			// Reading resumed, or c closes: the watch gives way to
			// the read that is due (readDone pumps again).
			cs.rIntr = true
			cs.nc.SetReadDeadline(aLongTimeAgo)
		}
		return
	}
	switch {
	case l.watchable(c):
		// Not read (SetReading(false)): a reset is watched for, so
		// that it closes c now, as on epoll.
		cs.reading, cs.watching = true, true
		cs.reads <- nil
	case c.lingering || (c.closing && c.waiting && !c.eof):
		// Closed: the peer's input is thrown away, so that a peer that
		// writes before it reads gets to read.
		if cap(c.in) < smallRead {
			c.in = make([]byte, 0, smallRead)
		}
		c.in, c.inOff = c.in[:0], 0
		cs.reading, cs.discarding = true, true
		cs.rbuf = c.in[:cap(c.in)]
		cs.reads <- cs.rbuf
	case c.tls != nil:
		if t := c.tls; !c.closing && !c.waiting && !c.eof && !c.unread && !t.rawEOF && t.state != tlsFailed {
			size := smallRead
			if cs.big {
				size = readSize
			}
			if len(cs.raw) != size {
				cs.raw = make([]byte, size)
			}
			cs.rbuf = cs.raw
			if t.state == tlsHandshake {
				// No more than the handshake may hold: when it is full,
				// c is not read until it has room (tlsRoom) or is over
				// (handshakeDone).
				room := t.room()
				if t.paused = room == 0; t.paused {
					return
				}
				cs.rbuf = cs.raw[:min(size, room)]
			}
			cs.reading, cs.discarding, cs.rsize = true, false, len(cs.rbuf)
			cs.reads <- cs.rbuf
		}
	case !c.closing && !c.waiting && !c.eof && !c.unread && !cs.fresh && !c.offer:
		cs.rsize = smallRead
		if cs.big {
			cs.rsize = readSize
		}
		l.growIn(c, cs.rsize)
		cs.reading, cs.discarding = true, false
		cs.rbuf = c.in[len(c.in) : len(c.in)+cs.rsize]
		cs.reads <- cs.rbuf
	}
}

// watchable reports whether c, not read (SetReading(false)), is to be
// watched for a reset: where the system tells one (watchReset), until
// reading resumes or c closes or its output waits (then its write tells).
func (l *loop) watchable(c *LoopConn) bool {
	cs := &c.sys
	return c.unread && !c.closing && !c.waiting && !c.eof && cs.rc != nil && !cs.noWatch &&
		(c.tls == nil || !c.tls.rawEOF && c.tls.state != tlsFailed)
}

// growIn makes room for a read behind c's unused input: the unused input
// moves to the front of the buffer if that makes room enough, or to a
// larger buffer.
func (l *loop) growIn(c *LoopConn, size int) {
	if cap(c.in)-len(c.in) >= size {
		return
	}
	unused := len(c.in) - c.inOff
	if cap(c.in)-unused >= size+unused {
		l.movedBytes(copy(c.in[:cap(c.in)], c.in[c.inOff:]))
	} else {
		grown := make([]byte, unused, max(min(2*cap(c.in), l.inputCap()), unused+size))
		l.movedBytes(copy(grown, c.in[c.inOff:]))
		c.in = grown
	}
	c.in, c.inOff = c.in[:unused], 0
}

// readDone takes the result of c's read.
func (l *loop) readDone(c *LoopConn) {
	cs := &c.sys
	n, err := cs.rn, cs.rerr
	cs.rn, cs.rerr = 0, nil
	cs.reading = false
	if cs.rIntr {
		cs.rIntr = false
		cs.nc.SetReadDeadline(time.Time{})
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = nil
		}
	}
	if cs.watching {
		reset := cs.reset
		cs.watching, cs.reset = false, false
		switch {
		case c.closed:
		case c.det != nil:
			if reset {
				// The watch took the reset from the socket (SO_ERROR),
				// whose reads would now end cleanly: the detached
				// connection's reads end with it, as net.Conn's Read
				// says it.
				nc := cs.nc
				c.det.rerr = &net.OpError{Op: "read", Net: nc.LocalAddr().Network(), Source: nc.LocalAddr(), Addr: nc.RemoteAddr(), Err: os.NewSyscallError("read", err)}
			}
			l.detached(c, false)
		case reset && !c.closing:
			l.close(c, err) // the peer reset c, which was not read
		case err == nil || reset:
			l.pump(c) // what is due now: a read, or a watch again
		default:
			// The watch failed (the descriptor cannot be polled): c is
			// not watched again, and a reset waits for the next read.
			cs.noWatch = true
			l.pump(c)
		}
		return
	}
	switch {
	case c.closed:
		return
	case c.det != nil:
		if n > 0 && !cs.discarding {
			c.det.in = append(c.det.in, c.in[len(c.in):len(c.in)+n]...)
		}
		l.detached(c, false)
		return
	case cs.discarding || c.closing || c.lingering:
		if n == 0 && err == nil {
			l.pump(c)
			return
		}
		if err == nil && c.lingering && cs.lingerIdx >= 0 && l.lingeredNow(c) {
			// A peer that goes on sending: looked at on each input, as
			// on epoll, the linger ends once the socket is emptied and
			// the peer has all of the output.
			l.endLinger(c, c.closeErr)
			return
		}
		if err != nil {
			if c.lingering {
				// The peer ended its stream (or reset it, choosing to end).
				l.endLinger(c, c.closeErr)
				return
			}
			// The end of the stream, or a reset: nothing more is read,
			// and what becomes of the output is the write's to tell (a
			// peer that reset after it had all of it chose to end, as
			// on Linux).
			c.eof = true
			if !c.waiting {
				l.close(c, c.closeErr)
				return
			}
		}
		l.pump(c)
		return
	}
	cs.big = n == cs.rsize
	if c.tls != nil {
		l.tlsRead(c, cs.rbuf[:n], err)
		return
	}
	if n > 0 {
		c.in = c.in[:len(c.in)+n]
		c.readAt = l.now
		cs.fresh = true
	}
	if err == io.EOF {
		c.eof, cs.fresh = true, true
	} else if err != nil {
		l.close(c, sysErr(err))
		return
	}
	l.deliver(c)
}

// deliver gives c's Handler the input it has not been given, if it may
// have it now, and starts what I/O c is then ready for.
func (l *loop) deliver(c *LoopConn) {
	cs := &c.sys
	if c.lingering {
		// Closed, its output sent: it waits for the peer (linger), and
		// a close now would cut that short (OnWritable's Close).
		return
	}
	if c.tls != nil {
		l.tlsDeliver(c)
		return
	}
	if cs.fresh && !c.closed && !c.closing && !c.waiting && !c.unread && c.det == nil {
		cs.fresh = false
		in := c.in[c.inOff:]
		used, ok := l.handle(c, in)
		if !ok {
			return
		}
		if c.tls != nil { // StartTLS: the rest, in the clear, is dropped
			if l.sendAndCheck(c) {
				l.tlsDeliver(c)
			} else {
				l.pump(c)
			}
			return
		}
		rest := in[used:]
		if c.det != nil {
			l.finishDetach(c, rest)
			return
		}
		if c.eof {
			rest = nil
		}
		if len(rest) > l.maxInput {
			c.closeTooLarge()
			c.in, c.inOff = c.in[:0], 0
			l.sendAndCheck(c)
			l.pump(c)
			return
		}
		if len(rest) == 0 {
			if cap(c.in) > readSize || (!cs.big && cap(c.in) > smallRead) {
				c.in = nil // a quiet connection holds a small buffer
			}
			c.in, c.inOff = c.in[:0], 0
		} else {
			c.inOff = len(c.in) - len(rest)
		}
		if !l.sendAndCheck(c) {
			l.pump(c)
			return
		}
	}
	if c.closing && !c.closed && !c.waiting {
		l.close(c, c.closeErr)
		return
	}
	l.pump(c)
}

// finish ends a call on c other than a read's Handler call: it sends
// the call's output, completes a Detach or a Close, and goes on with c's
// I/O.
func (l *loop) finish(c *LoopConn) {
	if l.after(c) {
		l.deliver(c)
	} else {
		l.pump(c)
	}
}

// send queues the output of the call that just returned, to be written
// by c's writing goroutine. It reports whether c has nothing to send:
// false once output waits (until writeDone) or c is closed.
func (l *loop) send(c *LoopConn) bool {
	if c.tls != nil {
		l.seal(c)
	}
	out := l.out
	l.out = l.out[:0]
	if c.closed {
		return false
	}
	if len(out) == 0 {
		if c.waiting {
			l.schedule(c) // a timeout may have taken it out of the heap
		}
		return !c.waiting
	}
	if !c.waiting {
		c.waiting = true
		c.progressAt = l.now
		c.sys.direct = len(out)
	}
	l.queue(c, out)
	l.schedule(c)
	l.pump(c)
	l.countQueued(c)
	return false
}

// queue appends p to c's pending output. The bytes being written are not
// moved: what is waiting moves to the front of the buffer only while no
// write is under way.
func (l *loop) queue(c *LoopConn, p []byte) {
	if !c.sys.writing && c.off > 0 && cap(c.pending)-len(c.pending) < len(p) {
		unsent := copy(c.pending, c.pending[c.off:])
		c.pending, c.off = c.pending[:unsent], 0
	}
	if need := len(c.pending) + len(p); need > cap(c.pending) {
		// At most what MaxQueued lets wait behind what is being written
		// (a MaxQueued near math.MaxInt, "no bound", must not wrap).
		bound := l.maxQueued + min(c.off, math.MaxInt-l.maxQueued)
		grown := make([]byte, len(c.pending), min(max(2*cap(c.pending), need), max(bound, need)))
		copy(grown, c.pending)
		c.pending = grown
	}
	c.pending = append(c.pending, p...)
}

// countQueued sets c's share of Stats' Queued to what waits for room:
// its unsent output, but none while the first write of a call's output
// is under way (the socket may take it all at once, as on Linux).
func (l *loop) countQueued(c *LoopConn) {
	q := int64(len(c.pending) - c.off)
	if c.closed || (c.sys.writing && c.sys.direct >= 0) {
		q = 0
	}
	l.stats.queued.Add(q - c.sys.queued)
	c.sys.queued = q
}

// writeDone takes the result of c's write.
func (l *loop) writeDone(c *LoopConn) {
	cs := &c.sys
	n, err := cs.wn, cs.werr
	cs.wn, cs.werr = 0, nil
	cs.writing = false
	stall, probe, tried, after := cs.stallCheck, cs.probing, cs.wFirst, cs.closeAfter
	cs.stallCheck, cs.probing, cs.closeAfter = false, false, false
	if stall || tried { // a probe is a try
		defer l.settle()
	}
	if cs.wIntr {
		cs.wIntr = false
		cs.nc.SetWriteDeadline(time.Time{})
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = nil
		}
	}
	if c.closed {
		return
	}
	if d := cs.direct; d >= 0 {
		cs.direct = -1
		if f := l.s.opt.sent; f != nil {
			f(d, n)
		}
	}
	c.off += n
	if tried && n < cs.wlen {
		cs.waited = true
	}
	l.countQueued(c)
	if n > 0 {
		// A write that waits for room may have made its progress long
		// before the loop hears of it.
		c.progressAt = l.now
		if cs.wAt >= 0 {
			c.progressAt = cs.wAt
		}
	}
	if err != nil {
		l.close(c, unsent(sysErr(err))) // the error number alone, as on epoll
		return
	}
	if c.det != nil {
		l.detached(c, false)
		return
	}
	if after { // see close
		if c.off == len(c.pending) {
			c.pending, c.off, c.waiting = c.pending[:0], 0, false
		}
		l.close(c, c.closeErr)
		return
	}
	if c.off < len(c.pending) {
		if stall && n == 0 {
			// A blocked write learns of room only once much of the
			// socket's buffer is free, which a slow but steady reader
			// may never let happen: a write of its own tells whether the
			// socket takes any of the output now.
			cs.probing, cs.writing, cs.wFirst, cs.wlen = true, true, true, len(c.pending)-c.off
			cs.writes <- ioWrite{c.pending[c.off:], true}
			l.settling++
			return
		}
		if probe && n == 0 {
			l.close(c, ErrWriteTimeout)
			return
		}
		l.schedule(c)
		l.pump(c)
		return
	}
	// All sent.
	if cap(c.pending) > keepOutput {
		c.pending = nil
	}
	c.pending, c.off, c.waiting = c.pending[:0], 0, false
	if cs.waited {
		// Reading resumes after a wait for room: idle counts from now.
		// (Output the socket took at once is no wait, as on Linux.)
		cs.waited = false
		c.readAt = l.now
	}
	l.schedule(c)
	if c.closing {
		l.close(c, c.closeErr)
		return
	}
	if c.full {
		l.writable(c)
	}
	if l.draining && !c.closed {
		l.drainConn(c)
	}
	if !c.closed && c.det == nil {
		l.deliver(c)
	}
}

// settle counts one of the writes settling counts done.
func (l *loop) settle() {
	if l.settling--; l.settling == 0 {
		for _, ch := range l.settled {
			close(ch)
		}
		l.settled = l.settled[:0]
	}
}

// writable tells OnWritable that c, which refused a Write while output
// was queued, has sent all its output. If OnWritable asks again with
// nothing queued, it is told again on a later turn.
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
		return // writeDone tells it again
	}
	if c.closing {
		l.close(c, c.closeErr)
		return
	}
	if c.full {
		l.post(task{lf: func(l *loop) {
			if l != nil && !c.closed && !c.closing && c.det == nil && !c.waiting {
				l.writable(c)
				if !c.closed {
					l.deliver(c)
				}
			}
		}})
	}
}

// resumeReading reads c again (SetReading(true)), on the loop's next
// turn.
func (l *loop) resumeReading(c *LoopConn) {
	c.readAt = l.clock()
	l.schedule(c)
	// Until the task below has run, pump starts no read: one started by
	// the end of this call (a Do, an AfterFunc) would leave the unused
	// input waiting for its bytes.
	c.offer = true
	l.post(task{lf: func(l *loop) {
		if l != nil && !c.closed && !c.closing && c.det == nil && !c.unread {
			// What the Handler left unused goes to it again, though no
			// byte comes: whole commands it held back while it paused.
			// (A read under way, started before it paused, brings them
			// with its bytes.) TLS keeps c.offer until the Handler has
			// it (see tlsOffer).
			if c.tls == nil {
				c.offer = false
				if !c.eof && (!c.sys.reading || c.sys.watching) && len(c.in) > c.inOff {
					c.sys.fresh = true
				}
			}
			l.deliver(c)
		}
	}})
}

func (l *loop) localAddr(c *LoopConn) net.Addr { return c.sys.nc.LocalAddr() }

// control runs f with c's descriptor (a handle on Windows).
func (l *loop) control(c *LoopConn, f func(fd uintptr)) error {
	sc, ok := c.sys.nc.(syscall.Conn)
	if !ok {
		return fmt.Errorf("netio: Control: %w", errors.ErrUnsupported)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Control(f)
}

// close closes c: at once, or, closing in good order, once the peer has
// its output (see linger).
func (l *loop) close(c *LoopConn, err error) {
	if c.closed {
		return
	}
	if cs := &c.sys; cs.writing && cs.wFirst && !c.lingering && c.det == nil && gracefulErr(err) {
		// A try of the output is under way: on Linux, whose loop writes
		// when a call returns, its bytes would be in the socket already.
		// Once it is done, writeDone closes c as Linux would then:
		// gracefully if the socket took them all.
		c.markClosing()
		c.closeErr, cs.closeAfter = err, true
		return
	}
	if !c.lingering && l.graceful(c, err) {
		var lingers bool
		if lingers, err = l.linger(c, err); lingers {
			return
		}
	}
	err = droppedErr(c, err)
	c.sys.nc.Close()
	l.release(c, err)
}

func (l *loop) graceful(c *LoopConn, err error) bool {
	return !c.eof && !c.waiting && c.det == nil && !l.s.sys.quit.Load() && gracefulErr(err)
}

// linger ends c's output (FIN) and keeps c open, its input read and
// thrown away, until the peer ends its stream, or has acknowledged all
// of the output where the system tells (lingered: looked at when c
// closes, on each input and every lingerPoll), or lingerTime passes:
// then OnClose learns ErrUnsent. It reports whether c lingers, or else
// what OnClose learns.
func (l *loop) linger(c *LoopConn, err error) (bool, error) {
	cw, ok := c.sys.nc.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return false, err
	}
	c.markClosing()
	c.lingering, c.closeErr = true, err
	// The input waiting is read and thrown away at once, as on epoll, so
	// that a peer that has all of the output but goes on sending does not
	// keep c open: the linger ends as soon as a read emptied the socket
	// and the peer has acknowledged all of the output.
	if done, known := lingered(c.sys.nc, l.junkBuf()); known {
		if done && !l.lingerHeld() {
			return false, err
		}
		c.sys.lingerIdx = len(l.lingerers)
		l.lingerers = append(l.lingerers, c)
	}
	c.deadline = l.now + int64(lingerTime)
	l.schedule(c)
	l.pump(c)
	return true, nil
}

// pollLingerers closes the lingering connections whose peers have all of
// their output.
func (l *loop) pollLingerers() {
	if len(l.lingerers) == 0 {
		return
	}
	if now := time.Now(); now.Sub(l.polled) >= lingerPoll {
		l.polled = now
		for i := len(l.lingerers) - 1; i >= 0; i-- {
			if i >= len(l.lingerers) {
				continue
			}
			if c := l.lingerers[i]; l.lingeredNow(c) {
				l.endLinger(c, c.closeErr)
			}
		}
	}
}

// lingeredNow throws away the input waiting for c, lingering, and reports
// whether its linger is over (see lingered).
func (l *loop) lingeredNow(c *LoopConn) bool {
	done, _ := lingered(c.sys.nc, l.junkBuf())
	return done && !l.lingerHeld()
}

// junkBuf is the loop's buffer for input read to be thrown away.
func (l *loop) junkBuf() []byte {
	if l.junk == nil {
		l.junk = make([]byte, readSize)
	}
	return l.junk
}

// endLinger closes c, done lingering, and tells OnClose err: at the end
// of the linger time, ErrUnsent, unless the peer turned out to have all
// of the output by then (as on epoll).
func (l *loop) endLinger(c *LoopConn, err error) {
	if c.sys.lingerIdx >= 0 && l.lingeredNow(c) {
		err = c.closeErr
	}
	c.sys.nc.Close()
	l.release(c, err)
}

// release frees c's slot, ends its I/O goroutines and tells OnClose.
func (l *loop) release(c *LoopConn, err error) {
	c.closed = true
	c.gone.Store(true)
	l.unschedule(c)
	if i := c.sys.lingerIdx; i >= 0 {
		last := len(l.lingerers) - 1
		l.lingerers[i] = l.lingerers[last]
		l.lingerers[i].sys.lingerIdx = i
		l.lingerers[last] = nil
		l.lingerers = l.lingerers[:last]
		c.sys.lingerIdx = -1
	}
	l.conns[c.idx] = nil
	l.free = append(l.free, c.idx)
	if c.timers > 0 {
		l.deadTimers.Add(int64(c.timers))
	}
	l.stats.queued.Add(-c.sys.queued)
	c.sys.queued = 0
	l.stats.released(err, c.eof)
	c.in, c.inOff, c.pending, c.off = nil, 0, nil, 0
	close(c.sys.reads)
	close(c.sys.writes)
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

// Detach. The net.Conn is handed over once c's read and write under way
// have returned (both are interrupted): what the read got is read first,
// what the write did not send is sent first.

func (l *loop) detach(c *LoopConn) (net.Conn, error) {
	c.det = &detachedConn{Conn: c.sys.nc, ready: make(chan struct{})}
	c.ended.Store(true)
	return c.det, nil
}

func (l *loop) finishDetach(c *LoopConn, unused []byte) {
	d := c.det
	d.in = append([]byte(nil), unused...)
	l.queue(c, l.out)
	l.out = l.out[:0]
	cs := &c.sys
	if cs.reading && !cs.rIntr {
		cs.rIntr = true
		cs.nc.SetReadDeadline(aLongTimeAgo)
	}
	if cs.writing && !cs.wIntr && !cs.wFirst {
		cs.wIntr = true
		cs.nc.SetWriteDeadline(aLongTimeAgo)
	}
	l.detached(c, false)
}

// detached completes a Detach once c's I/O has returned, or at once with
// force.
func (l *loop) detached(c *LoopConn, force bool) {
	cs := &c.sys
	if (cs.reading || cs.writing) && !force {
		return
	}
	d := c.det
	d.out = append([]byte(nil), c.pending[c.off:]...)
	cs.readyClosed = true
	close(d.ready)
	l.release(c, ErrDetached)
}

// Draining (Shutdown).

func (l *loop) startDrain() {
	l.draining = true
	l.endDials()
	for _, c := range l.conns {
		if c != nil {
			l.s.sys.open.Add(1)
		}
	}
	for _, c := range l.conns {
		if c == nil || c.lingering || c.det != nil {
			continue
		}
		l.drainOne(c)
	}
}

// expire times out the connections whose deadline has come. A write
// timeout looks first at whether the write under way has made progress:
// it is interrupted, and writeDone decides.
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
		default:
			l.unschedule(c)
			if err == ErrWriteTimeout && c.sys.writing {
				// writeDone schedules it again.
				if !c.sys.wIntr && !c.sys.wFirst {
					c.sys.wIntr, c.sys.stallCheck = true, true
					c.sys.nc.SetWriteDeadline(aLongTimeAgo)
					l.settling++
				}
				continue
			}
			l.timeout(c, err)
		}
	}
}

// dialAt is 0: the portable loops get connections dialed (dialLoop).
func (l *loop) dialAt(*LoopConn) int64 { return 0 }

// Panics, recovered as on Linux.

func onClose(f func(*LoopConn, error), c *LoopConn, err error) {
	defer func() { recover() }()
	f(c, err)
}

func (l *loop) panicked(c *LoopConn, v any) {
	c.calling.Store(false)
	err := &PanicError{Value: v, Stack: debug.Stack()}
	c.closeErr = err // for Dial, whose OnOpen this may be (openPanic)
	l.out = l.out[:0]
	if d := c.det; d != nil {
		d.Conn.Close() // the goroutine it was given to learns net.ErrClosed
		if !c.sys.readyClosed {
			c.sys.readyClosed = true
			close(d.ready)
		}
		l.release(c, err)
		return
	}
	if !c.closed {
		c.lingering = true // no linger: closed at once
		l.close(c, err)
	}
}

// TLS (see loop_tls.go): what a TLS connection reads goes to its
// handshake or its tls.Conn, driven by the loop as on Linux.

// tlsRead takes what c's read got, raw, and its error.
func (l *loop) tlsRead(c *LoopConn, raw []byte, err error) {
	t := c.tls
	if err == io.EOF {
		t.rawEOF, err = true, nil
	}
	if len(raw) > 0 {
		c.readAt = l.now
	}
	if len(raw) > 0 || t.rawEOF {
		if !l.tlsInput(c, raw) {
			l.pump(c)
			return
		}
	}
	if err != nil {
		l.close(c, sysErr(err))
		return
	}
	if c.closing && !c.closed && !c.waiting {
		l.close(c, c.closeErr)
		return
	}
	l.pump(c)
}

// tlsResume reads c again after its handshake's input was full.
func (l *loop) tlsResume(c *LoopConn) { l.pump(c) }

// tlsDeliver is deliver for a TLS connection: the records left while
// reading was off go to the Handler, and its reading goes on.
func (l *loop) tlsDeliver(c *LoopConn) {
	t := c.tls
	c.sys.fresh = false // plaintext from before StartTLS: dropped
	if (t.stopped || c.offer) && t.state == tlsOpen && !c.closed && !c.closing && !c.waiting && !c.unread {
		t.stopped = false
		ok := l.tlsOffer(c) && l.tlsRecords(c)
		t.unlend()
		if !ok || !l.sendAndCheck(c) {
			l.pump(c)
			return
		}
	}
	if c.closing && !c.closed && !c.waiting {
		l.close(c, c.closeErr)
		return
	}
	l.pump(c)
}

// errNoDup is a test's File error (LoopOptions.noDup).
var errNoDup = fmt.Errorf("netio: no duplicate (test): %w", errors.ErrUnsupported)

package tcpperf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirespeed/wirespeed/internal/latrec"
	"github.com/wirespeed/wirespeed/netio"
)

// EngineNetio: each of the run's loops is a netio.Loops of one loop,
// whose connections are dialed with its Dial, so that a loop's schedule
// and its connections share a thread. A LoopConn may be written only in
// a call on itself, and netio's timers (AfterFunc) belong to a
// connection, so each loop also dials a scheduling connection of its
// own, to a listener of the run's (a Unix socket in the abstract
// namespace, which the peer never writes to): its timer wakes the loop
// when sends are due, and it hands each connection with messages due a
// call of its own (Do), which writes them. Everything about a loop's
// connections happens on its thread, as with tcpperf's own loops.

// An nloop is one loop of EngineNetio. Its counters and recorders are
// those of a loop (only those fields of it are used).
type nloop struct {
	*loop
	s      *netio.Loops
	sched  *netio.LoopConn // the scheduling connection
	conns  []*nconn
	msg    []byte // a message being written
	tickFn func(*netio.LoopConn)

	// On the loop's thread.
	scheduling bool
	k          int64 // the loop's next message of the schedule
	next       int64 // its intended time
	target     int64 // when the scheduling timer was asked to fire, or 0
	timer      *netio.LoopTimer
	queued     int64 // messages due, handed to their connection's call, not yet written
	drainSent  bool

	kick chan struct{} // fake clock: the run is stopping

	// settingUp holds, while connecting, each connection's channel of its
	// set-up (a *netio.LoopConn's chan<- error) until the call that sets
	// it up runs: one closed before (a reset at once) never runs it, and
	// is told there instead (closed).
	settingUp sync.Map
}

// An nconn is a connection of EngineNetio: a conn (its fd unused), its
// LoopConn, and the intended times of its messages due and not yet
// written.
type nconn struct {
	conn
	lc      *netio.LoopConn
	due     []int64
	posted  bool // a call to write them is queued (Do)
	flushFn func(*netio.LoopConn)
}

// startNetio opens the connections on netio's loops.
func (r *run) startNetio(ctx context.Context) (engine, error) {
	cfg := &r.cfg
	ln, remove, err := schedListen(runtime.GOOS == "linux")
	if err != nil {
		return engine{}, fmt.Errorf("tcpperf: scheduling listener: %w", err)
	}
	var peers []net.Conn
	var mu sync.Mutex
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			peers = append(peers, c)
			mu.Unlock()
		}
	}()
	var ls []*nloop
	closeAll := func() {
		for _, l := range ls {
			l.s.Close()
		}
		ln.Close()
		<-accepted
		mu.Lock()
		for _, c := range peers {
			c.Close()
		}
		mu.Unlock()
		remove()
	}
	for i := range cfg.Loops {
		l, err := r.newNloop(ctx, i, ln.Addr().String())
		if err != nil {
			closeAll()
			return engine{}, err
		}
		ls = append(ls, l)
	}
	conns := make([]*nconn, cfg.Conns)
	dial := r.env.loopDial
	if dial == nil {
		dial = func(ctx context.Context, s *netio.Loops, network, addr string) (*netio.LoopConn, error) {
			return s.Dial(ctx, network, addr)
		}
	}
	network, address := cfg.network()
	err = r.connect(ctx, func(ctx context.Context, i int) error {
		l := ls[i%len(ls)]
		lc, err := dial(ctx, l.s, network, address)
		if err != nil {
			return err
		}
		c := &nconn{conn: conn{fd: -1, id: i, tmpl: msgTemplate(i, cfg.MsgSize)}, lc: lc}
		c.flushFn = func(lc *netio.LoopConn) { l.flush(c, lc) }
		// Set on the loop: the Handler looks for it there. Over TLS, once
		// the handshake has succeeded (handshaken).
		done := make(chan error, 1)
		l.settingUp.Store(lc, (chan<- error)(done))
		defer l.settingUp.Delete(lc)
		err = lc.Do(func(lc *netio.LoopConn) {
			if _, ok := l.settingUp.LoadAndDelete(lc); !ok {
				return // closed, and told so
			}
			if cfg.TLS == nil {
				lc.SetValue(c)
				if lc.EOF() {
					// The peer ended its stream before c was set: the
					// Handler, told of it then, could not fail c, and
					// no event follows. It is the run's, failed, as on
					// tcpperf's own loops (its messages were sent to a
					// server that had closed, and went unanswered).
					l.fail(c, &l.n.read)
					lc.Close()
				}
				done <- nil
				return
			}
			lc.SetValue(&handshaking{c: c, done: done})
			if err := lc.StartTLS(cfg.TLS); err != nil {
				done <- err
			}
		})
		if errors.Is(err, netio.ErrClosed) {
			return fmt.Errorf("tcpperf: connection closed before it was set up: %w", err)
		} else if err != nil {
			return err
		}
		select {
		case err = <-done:
		case <-ctx.Done():
			err = ctx.Err()
			if cfg.TLS != nil && errors.Is(err, context.DeadlineExceeded) {
				// The dial's timeout, not the run's end: say what it
				// cut short (it read "context deadline exceeded" alone).
				err = fmt.Errorf("%w: not done within the dial timeout (%v): %w", netio.ErrHandshake, cfg.DialTimeout, err)
			}
		}
		if err != nil {
			lc.Do(func(lc *netio.LoopConn) { lc.SetValue(nil); lc.Close() }) // not the run's
			return err
		}
		conns[i] = c
		return nil
	})
	if err != nil {
		closeAll()
		return engine{}, err
	}
	// Deal the connections to their loops; loops left without any are
	// closed, and the others numbered anew for the schedule.
	for i, c := range conns {
		if c != nil {
			ls[i%len(ls)].conns = append(ls[i%len(ls)].conns, c)
		}
	}
	kept := ls[:0]
	for _, l := range ls {
		if len(l.conns) == 0 {
			l.s.Close()
			continue
		}
		l.id = len(kept)
		kept = append(kept, l)
	}
	clear(ls[len(kept):])
	ls = kept
	cfg.Loops = len(ls)
	r.loops = make([]*loop, len(ls))
	for i, l := range ls {
		r.loops[i] = l.loop
	}
	done := make(chan struct{}) // closed at quit
	var drivers sync.WaitGroup
	return engine{
		begin: func() {
			for _, l := range ls {
				l.begin(ctx, done, &drivers)
			}
		},
		wake: func() {
			for _, l := range ls {
				l.wake()
			}
		},
		quit: func() {
			close(done)
			for _, l := range ls {
				l.s.Close()
			}
			drivers.Wait()
		},
		close: closeAll,
	}, nil
}

// schedListen listens on a Unix socket for the loops' scheduling
// connections: with abstract (Linux) in the abstract namespace
// (autobind), which leaves no file; else at a path in a new temporary
// directory, which remove removes.
func schedListen(abstract bool) (ln net.Listener, remove func(), err error) {
	if abstract {
		ln, err = net.Listen("unix", "")
		return ln, func() {}, err
	}
	dir, err := os.MkdirTemp("", "tcpperf")
	if err != nil {
		return nil, nil, err
	}
	remove = func() { os.RemoveAll(dir) }
	if ln, err = net.Listen("unix", filepath.Join(dir, "s")); err != nil {
		remove()
		return nil, nil, err
	}
	return ln, remove, nil
}

// newNloop starts loop id of the run and dials its scheduling connection
// to sched.
func (r *run) newNloop(ctx context.Context, id int, sched string) (*nloop, error) {
	cfg := &r.cfg
	cpu := -1
	if len(cfg.CPUs) > 0 {
		cpu = cfg.CPUs[id%len(cfg.CPUs)]
	}
	l := &nloop{
		loop: &loop{r: r, id: id, cpu: cpu, loopSys: newLoopSys(), lat: latrec.New(), late: latrec.New()},
		msg:  make([]byte, cfg.MsgSize),
		kick: make(chan struct{}, 1),
	}
	l.tickFn = l.tick
	l.wait = waitPolicy{mode: cfg.Wait, spin: int64(cfg.Spin), batch: int64(cfg.Batch)}
	opt := &netio.LoopOptions{
		Loops:     1,
		MaxQueued: r.maxPend,
		MaxInput:  max(64<<10, cfg.MsgSize),
		// No timeouts: a run ends by its drain, as with tcpperf's loops.
		IdleTimeout:  -1,
		WriteTimeout: -1,
		DialTimeout:  cfg.DialTimeout,
		OnClose:      l.closed,
	}
	if cfg.TLS != nil {
		opt.HandshakeTimeout = cfg.DialTimeout
		opt.OnHandshake = handshaken
	}
	if cpu >= 0 {
		opt.CPUs = []int{cpu}
	}
	if !r.env.realTime {
		opt.Clock = r.env.clock.Now
	}
	s, err := netio.NewLoops(l.handle, opt)
	if err != nil {
		if errors.Is(err, os.ErrInvalid) {
			return nil, configErr("CPUs", "%w", err) // a CPU no thread can be pinned to
		}
		return nil, fmt.Errorf("tcpperf: event loop: %w", err)
	}
	l.s = s
	if l.sched, err = s.Dial(ctx, "unix", sched); err != nil {
		s.Close()
		return nil, fmt.Errorf("tcpperf: scheduling connection: %w", err)
	}
	return l, nil
}

// begin starts the loop on the run's clock: the schedule, from a timer on
// the scheduling connection (on a fake clock, from a goroutine that moves
// the clock: driver), or in closed loop each connection's first Depth
// messages.
func (l *nloop) begin(ctx context.Context, done chan struct{}, drivers *sync.WaitGroup) {
	r := l.r
	open := r.cfg.isOpen()
	if !open {
		for _, c := range l.conns {
			c.lc.Do(func(lc *netio.LoopConn) { l.write(c, lc, r.cfg.Depth, r.now()) })
		}
	}
	l.sched.Do(func(*netio.LoopConn) {
		l.scheduling = open
		l.next = r.due(l.id, 0)
	})
	if !r.env.realTime {
		drivers.Add(1)
		go func() {
			defer drivers.Done()
			l.drive(ctx, done)
		}()
		return
	}
	if open {
		l.sched.Do(l.tickFn)
	}
}

// wake has the loop look at stopping.
func (l *nloop) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
	l.sched.Do(func(*netio.LoopConn) {
		if l.r.stopping.Load() && l.scheduling {
			l.scheduling = false
			l.timer.Stop()
		}
		l.checkDrained()
	})
}

// tick is the scheduling timer's call, on the system clock: it sends what
// is due and arms the timer for the next sends.
func (l *nloop) tick(sc *netio.LoopConn) {
	l.timer = nil
	target := l.step()
	if target < 0 {
		return
	}
	t, err := sc.AfterFunc(time.Duration(target-l.r.now()), l.tickFn)
	if err != nil {
		// Only the run closes the scheduling connection, at its end.
		l.scheduling = false
		return
	}
	l.timer = t
}

// step hands the messages due now to their connections, and returns when
// the loop should wake for the next ones, or -1 once the schedule is
// over.
func (l *nloop) step() int64 {
	r := l.r
	if !l.scheduling {
		return -1
	}
	if r.stopping.Load() {
		l.scheduling = false
		l.checkDrained()
		return -1
	}
	now := r.now()
	batching := r.cfg.Wait == WaitBatch
	if batching && l.target > 0 && r.env.realTime {
		l.wait.woke(l.target, now)
	}
	for l.next <= now && l.next < r.end && now < r.cutoff() {
		if l.k%sendCheck == sendCheck-1 {
			if now = r.now(); now >= r.cutoff() || r.stopping.Load() {
				break // as tcpperf's own loops do
			}
		}
		c := l.conns[l.k%int64(len(l.conns))]
		if c.dead {
			l.n.unsentAt(r, 1, l.next)
		} else {
			c.due = append(c.due, l.next)
			l.queued++
			if !c.posted {
				if err := c.lc.Do(c.flushFn); err != nil {
					l.drop(c)
				} else {
					c.posted = true
				}
			}
		}
		l.k++
		l.next = r.due(l.id, l.k)
	}
	if l.next >= r.end || now >= r.cutoff() {
		l.n.missed.Add(r.missedFrom(l.id, l.k))
		l.scheduling = false
		r.schedDone <- struct{}{}
		return -1
	}
	l.target = l.next
	if batching {
		l.target = l.wait.batchWake(l.next)
	}
	return l.target
}

// drop forgets c's messages due and not written: unsent.
func (l *nloop) drop(c *nconn) {
	for _, t := range c.due {
		l.n.unsentAt(l.r, 1, t)
	}
	l.queued -= int64(len(c.due))
	c.due = c.due[:0]
}

// flush writes c's messages due, in a call on c: their lateness runs
// from their intended time to now.
func (l *nloop) flush(c *nconn, lc *netio.LoopConn) {
	r := l.r
	c.posted = false
	now := r.now()
	// Taken from c first: a write that fails the connection drops what
	// is left in c.due (drop), and each message here is counted once,
	// written or unsent.
	due := c.due
	c.due = c.due[:0]
	for _, t := range due {
		l.queued--
		if c.dead {
			l.n.unsentAt(r, 1, t)
			continue
		}
		// Only a message written has a lateness and counts as sent (as
		// on tcpperf's own loops).
		if l.write(c, lc, 1, t) == 1 && r.measured(t) {
			l.sendLate(now, t)
		}
	}
	l.checkDrained()
}

// write writes n messages with intended time t to c, in a call on it;
// those it cannot take (too many unsent or outstanding) count as write
// errors, and after a write that failed otherwise, which fails c, those
// not written are unsent. It returns how many it wrote.
func (l *nloop) write(c *nconn, lc *netio.LoopConn, n int, t int64) int {
	if c.dead {
		l.n.unsentAt(l.r, n, t)
		return 0
	}
	r := l.r
	size := r.cfg.MsgSize
	k := 0
	for ; k < n && len(c.q)-c.qh < maxInflight; k++ {
		copy(l.msg, c.tmpl)
		putHex(l.msg[:hexLen(size)], c.sent)
		if _, err := lc.Write(l.msg); err != nil {
			if !errors.Is(err, netio.ErrQueueFull) {
				l.sentMsgs(k, t) // before fail, which loses them
				l.fail(c, &l.n.write)
				l.n.unsentAt(r, n-k, t)
				return k
			}
			break
		}
		c.push(t)
		c.sent++
	}
	if k < n {
		l.n.refusedAt(r, n-k, t)
	}
	l.sentMsgs(k, t)
	return k
}

// handle is the Handler: it checks and records the whole responses in
// (all of them arrived now: ArrivalRead) and leaves netio the start of
// the next; in closed loop it sends as many new messages.
func (l *nloop) handle(lc *netio.LoopConn, in []byte) int {
	c, ok := lc.Value().(*nconn)
	if !ok {
		return 0 // not set up yet (the scheduling connection is never written to)
	}
	r := l.r
	size := r.cfg.MsgSize
	k := len(in) / size
	if k > 0 && !c.dead {
		// Replies come only once the run has begun (its base set): a
		// connection's end before that (the server closing it) reads
		// no clock.
		now := r.now()
		got := l.take(&c.conn, in, k, now)
		if got > 0 && !r.cfg.isOpen() && !r.stopping.Load() && now < r.end {
			l.write(c, lc, got, r.now())
		}
	}
	if lc.EOF() {
		l.fail(c, &l.n.read)
		lc.Close()
	}
	l.checkDrained()
	return k * size
}

// handshaking is the Value of a connection while its TLS handshake
// runs: what it will be, and who waits for it.
type handshaking struct {
	c    *nconn
	done chan<- error // buffered: who waited may have given up
}

// handshaken is OnHandshake: the connection is the run's once its
// handshake has succeeded; a failed one is closed, and not counted but
// as a connect failure.
func handshaken(lc *netio.LoopConn, err error) {
	h, ok := lc.Value().(*handshaking)
	if !ok {
		return
	}
	if err == nil {
		lc.SetValue(h.c)
	}
	h.done <- err
}

// closed is OnClose: a connection that failed or that the run closed.
func (l *nloop) closed(lc *netio.LoopConn, err error) {
	c, ok := lc.Value().(*nconn)
	if !ok {
		if done, ok := l.settingUp.LoadAndDelete(lc); ok {
			// Closed before the call that sets it up ran, which now never
			// will: its dial waited for the dial timeout.
			if err == nil {
				err = io.EOF
			}
			done.(chan<- error) <- fmt.Errorf("tcpperf: connection closed before it was set up: %w", err)
		}
		return
	}
	counter := &l.n.read
	if errors.Is(err, netio.ErrUnsent) {
		counter = &l.n.write
	}
	l.fail(c, counter)
	l.checkDrained()
}

// fail marks c dead, counting an error unless the run is stopping, and
// its outstanding messages as lost.
func (l *nloop) fail(c *nconn, counter *atomic.Int64) {
	if c.dead {
		return
	}
	c.dead = true
	l.lose(&c.conn, counter)
	l.drop(c)
}

// checkDrained tells the run once the loop, stopping, has nothing in
// flight.
func (l *nloop) checkDrained() {
	if l.r.stopping.Load() && !l.scheduling && l.inflight == 0 && l.queued == 0 && !l.drainSent {
		l.drainSent = true
		l.r.drained <- struct{}{}
	}
}

// loopState is what drive learns of the loop in a call on it.
type loopState struct {
	target   int64 // step's
	inflight int64
	answered int64
}

// onLoop runs f in a call on the scheduling connection and returns the
// loop's state once the calls f queued (the writes of what it handed
// out) have run too; false once the run is over.
func (l *nloop) onLoop(done <-chan struct{}, f func() int64) (loopState, bool) {
	ch := make(chan loopState, 1)
	err := l.sched.Do(func(sc *netio.LoopConn) {
		target := f()
		sc.Do(func(*netio.LoopConn) {
			ch <- loopState{target: target, inflight: l.inflight + l.queued, answered: l.n.answered.Load()}
		})
	})
	if err != nil {
		return loopState{}, false
	}
	select {
	case st := <-ch:
		return st, true
	case <-done:
		return loopState{}, false
	}
}

// drive runs the loop's schedule on a fake clock, as tcpperf's own loops
// do: once the loop has handed out what is due and written it, the clock
// jumps to the next wake-up; while the run drains, a while without
// responses moves it to the drain's end.
func (l *nloop) drive(ctx context.Context, done <-chan struct{}) {
	r := l.r
	w := r.env.clock.Waiter(r.cfg.Spin)
	defer w.Close()
	for {
		st, ok := l.onLoop(done, l.step)
		if !ok {
			return
		}
		switch {
		case st.target >= 0:
			before := r.now()
			w.Until(ctx, r.base.Add(time.Duration(st.target)))
			l.idle(before, r.now())
		case r.stopping.Load() && st.inflight > 0:
			select {
			case <-done:
				return
			case <-time.After(r.env.quiet()):
			}
			again, ok := l.onLoop(done, func() int64 { return -1 })
			if !ok {
				return
			}
			if again.answered == st.answered {
				before := r.now()
				w.Until(ctx, r.base.Add(time.Duration(r.now())+r.cfg.DrainTimeout))
				l.idle(before, r.now())
			}
		default: // closed loop, or the schedule is over: until the run stops
			select {
			case <-done:
				return
			case <-l.kick:
			}
		}
	}
}

package tcpperf

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/internal/cpupin"
	"golang.org/x/sys/unix"

	"github.com/wirespeed/wirespeed/internal/latrec"
)

// yieldEvery is how often a loop lets the scheduler run. The runtime
// takes a goroutine it has not scheduled for 10 ms for one running too
// long: it tries to preempt it at every tick of its monitor thread, takes
// its processor away at a system call (a write) and hands it back, and
// the monitor then wakes every 20 µs for a while. At 60,000 msg/s over
// 10,000 connections on one loop (AMD EPYC, Zen 5, a PVM guest) a loop
// that never yielded was preempted about 400 times a second and the
// monitor woke about 2,000 times, on the loop's CPU; yielding every 2 ms,
// never and about 100 times. The loop is locked to its thread, so a
// yield hands its processor to another thread and back.
const yieldEvery = 2 * time.Millisecond

// Epoll data of a loop's own descriptors; a connection's is its index.
const (
	evWake  = -1
	evTimer = -2
)

// connEvents are the events a connection waits for, edge-triggered: a
// level-triggered socket is polled again by every epoll_wait after it was
// reported, a cost per response. A read shorter than the buffer has
// emptied the socket, so one read per edge is enough. EPOLLOUT is added
// only while a write waits for room.
const connEvents = unix.EPOLLIN | unix.EPOLLET

// defaultEngine serves the connections unless Config.Engine says.
const defaultEngine = EngineTcpperf

// loopSys is what tcpperf's own loops add to a loop on Linux: its epoll,
// eventfd and timerfd, and how it times responses.
type loopSys struct {
	ep    int // epoll
	wake  int // eventfd: the run changed stopping or quit
	timer int // timerfd: the next send is near
	// ArrivalKernel: the control messages of a read, and the Unix time of
	// the run clock's zero as of the last poll (a receive timestamp is
	// Unix time).
	oob     []byte
	recv    timedRecv
	wallOff int64
	monoOff int64 // CLOCK_MONOTONIC of the run clock's zero, for WaitBatch's sleeps
}

// newLoopSys is a loop's loopSys before it has descriptors.
func newLoopSys() loopSys { return loopSys{ep: -1, wake: -1, timer: -1} }

func newLoop(r *run, id, cpu int) (*loop, error) {
	l := &loop{r: r, id: id, cpu: cpu, loopSys: newLoopSys(),
		buf: make([]byte, max(64<<10, 2*r.cfg.MsgSize)), lat: latrec.New(), late: latrec.New()}
	var err error
	if l.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("tcpperf: epoll: %w", err)
	}
	if l.wake, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err == nil {
		l.timer, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	}
	if err == nil {
		err = unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, l.wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: evWake})
	}
	if err == nil {
		err = unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, l.timer, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: evTimer})
	}
	if err != nil {
		l.close()
		return nil, fmt.Errorf("tcpperf: event loop: %w", err)
	}
	return l, nil
}

// add hands socket fd, connection id of the run, to the loop.
func (l *loop) add(fd, id int) error {
	c := &conn{fd: fd, id: id, idx: int32(len(l.conns)), tmpl: msgTemplate(id, l.r.cfg.MsgSize)}
	if l.r.cfg.Arrival == ArrivalKernel {
		if err := enableRxTime(fd); err != nil {
			unix.Close(fd)
			return fmt.Errorf("%w: receive timestamps (-arrival kernel): %w", ErrUnsupported, err)
		}
	}
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: connEvents, Fd: c.idx}); err != nil {
		unix.Close(fd)
		return err
	}
	l.conns = append(l.conns, c)
	return nil
}

func (l *loop) close() {
	for _, c := range l.conns {
		unix.Close(c.fd)
	}
	for _, fd := range []int{l.timer, l.wake, l.ep} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

var one = binary.NativeEndian.AppendUint64(nil, 1)

// tryPins pins a thread of its own to each of cpus in turn, loop i's CPU
// cpus[i], as the loops pin themselves, and returns the error of the
// first that fails.
func tryPins(cpus []int) error {
	if i, err := cpupin.Check(cpus); err != nil {
		return configErr("CPUs", "cannot pin loop %d: %w", i, err)
	}
	return nil
}

func (l *loop) wakeUp() { unix.Write(l.wake, one) }

// run is the loop's thread. It reports on ready once locked (and pinned),
// waits for begin, and returns when the run sets quit.
func (l *loop) run(ctx context.Context, ready chan<- error, begin <-chan struct{}) {
	runtime.LockOSThread()
	// Never unlocked: a thread whose affinity was changed ends with the
	// goroutine instead of going back to the scheduler.
	if l.cpu >= 0 {
		if err := cpupin.Pin(l.cpu); err != nil {
			ready <- configErr("CPUs", "cannot pin loop %d: %w", l.id, err)
			return
		}
	}
	ready <- nil
	<-begin
	r := l.r
	if r.quit.Load() {
		return
	}
	cfg := &r.cfg
	open := cfg.QPS > 0
	l.wait = waitPolicy{mode: cfg.Wait, spin: int64(cfg.Spin), batch: int64(cfg.Batch)}
	kernelTime := cfg.Arrival == ArrivalKernel
	if kernelTime {
		l.oob = make([]byte, rxTimeSpace)
		t := time.Now()
		l.wallOff = t.UnixNano() - int64(t.Sub(r.base))
	}
	batching := open && cfg.Wait == WaitBatch
	if batching && r.env.realTime {
		// The runtime's monotonic clock is CLOCK_MONOTONIC.
		var ts unix.Timespec
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		l.monoOff = ts.Nano() - r.now()
	}
	var waiter interface {
		Until(context.Context, time.Time)
	}
	if !r.env.realTime {
		w := r.env.clock.Waiter(cfg.Spin)
		defer w.Close()
		waiter = w
	}
	if !open {
		now := r.now()
		for _, c := range l.conns {
			l.send(c, cfg.Depth, now)
		}
	}
	events := make([]unix.EpollEvent, 256)
	var k int64 // this loop's next message of the schedule
	next := r.due(l.id, 0)
	scheduling, drainSent := open, false
	now, fresh := int64(0), false // fresh: now was read just before, after a poll that found nothing
	armed := int64(-1)            // the timer is set for the send due then
	// Idle time: waits in epoll, jumps of a fake clock, and spinning (from
	// one poll's return to the next's, when neither the events of the
	// first nor the sends between them gave any work).
	polled, worked := r.now(), true
	yielded := polled
	for !r.quit.Load() {
		sent := false
		stopping := r.stopping.Load()
		timeout, jump := -1, false
		if scheduling && !stopping {
			if !fresh {
				now = r.now()
			}
			for next <= now && next < r.end && now < r.cutoff() {
				if k%sendCheck == sendCheck-1 {
					// A long run of sends due (a rate far above what
					// the loop can send) stops at the cut-off, and at a
					// stop.
					if now = r.now(); now >= r.cutoff() || r.stopping.Load() {
						break
					}
				}
				sent = true
				// Only a message sent has a lateness and counts as sent:
				// one due on a failed connection is unsent, one refused a
				// write error (as on EngineNetio).
				if l.send(l.conns[k%int64(len(l.conns))], 1, next) == 1 && r.measured(next) {
					l.sendLate(now, next)
				}
				l.wait.lastSend = now
				k++
				next = r.due(l.id, k)
			}
			switch {
			case next >= r.end || now >= r.cutoff():
				l.n.missed.Add(r.missedFrom(l.id, k))
				scheduling = false
				r.schedDone <- struct{}{}
			case !r.env.realTime:
				timeout, jump = 0, true
			case batching:
				// Sleep through the responses (the kernel times them) until
				// the next send is Batch late, then poll everything at once.
				timeout = 0
				if target := l.wait.batchWake(next); target > now {
					now = r.now() // after the sends
					sleepUntil(l.monoOff + target)
					woke := r.now()
					l.wait.woke(target, woke)
					l.idle(now, woke)
					polled = woke
				}
			default:
				poll, wake := l.wait.plan(now, next, l.inflight > 0)
				// Arming a timer is dear (in a VM, an exit): once per send.
				if wake > now && armed != next {
					unix.TimerfdSettime(l.timer, 0, &unix.ItimerSpec{Value: unix.NsecToTimespec(wake - now)}, nil)
					armed = next
				}
				if poll {
					timeout = 0 // poll the sockets: the send or a response is near
				}
			}
		} else if scheduling {
			scheduling = false
		}
		if !scheduling && cfg.Wait == WaitSpin && r.env.realTime {
			timeout = 0
		}
		if stopping && !scheduling && l.inflight == 0 && !drainSent {
			drainSent = true
			r.drained <- struct{}{}
		}
		if !r.env.realTime && stopping && l.inflight > 0 {
			// Draining on a fake clock, which moves only when told: a
			// while without responses moves it to the drain's end.
			timeout, jump = int(min(r.env.quiet()/time.Millisecond, math.MaxInt32)), true
		}
		if now-yielded > int64(yieldEvery) {
			r.env.yield()
			yielded = now
		}
		var n int
		var err error
		if timeout == 0 {
			n, err = unix.EpollWait(l.ep, events, 0)
		} else {
			before := r.now()
			n, err = unix.EpollWait(l.ep, events, timeout)
			l.idle(before, r.now())
		}
		if err != nil {
			n = 0 // EINTR
		}
		if kernelTime && n > 0 && r.env.realTime {
			t := time.Now()
			now = int64(t.Sub(r.base))
			l.wallOff = t.UnixNano() - now
		} else {
			now = r.now()
		}
		fresh = n == 0
		if !worked && !sent && timeout == 0 {
			l.idle(polled, now)
		}
		polled, worked = now, false
		for _, ev := range events[:n] {
			switch ev.Fd {
			case evWake, evTimer:
				var b [8]byte
				unix.Read(l.wake, b[:])
				if ev.Fd == evTimer {
					unix.Read(l.timer, b[:])
					armed = -1
				}
			default:
				worked = true
				c := l.conns[ev.Fd]
				if ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
					l.readable(c, now)
				}
				if !c.dead && c.out && ev.Events&unix.EPOLLOUT != 0 {
					l.flush(c)
				}
			}
		}
		if jump && n == 0 {
			before := now
			if stopping {
				waiter.Until(ctx, r.base.Add(time.Duration(r.now())+cfg.DrainTimeout))
			} else if batching {
				waiter.Until(ctx, r.base.Add(time.Duration(l.wait.batchWake(next))))
			} else {
				waiter.Until(ctx, r.base.Add(time.Duration(next)))
			}
			now, fresh = r.now(), false
			l.idle(before, now)
			polled = now
		}
	}
}

// send queues n messages on c with intended time t, and writes what the
// socket takes now unless c waits for room. It returns how many it
// queued: the rest are unsent (c had failed) or refused.
func (l *loop) send(c *conn, n int, t int64) int {
	if c.dead {
		l.n.unsentAt(l.r, n, t)
		return 0
	}
	r := l.r
	size := r.cfg.MsgSize
	// At most maxInflight outstanding and maxPend unsent: past that the
	// server is not answering, or not reading.
	room := min(n, (r.maxPend-(len(c.pending)-c.off))/size)
	if c.off > 0 && len(c.pending)+room*size > cap(c.pending) {
		m := copy(c.pending, c.pending[c.off:])
		c.pending, c.off = c.pending[:m], 0
	}
	k := 0
	for ; k < room && c.push(t); k++ {
		o := len(c.pending)
		c.pending = append(c.pending, c.tmpl...)
		putHex(c.pending[o:o+hexLen(size)], c.sent)
		c.sent++
	}
	if k < n {
		l.n.refusedAt(r, n-k, t)
	}
	if k == 0 {
		return 0
	}
	l.sentMsgs(k, t)
	if !c.out {
		l.flush(c)
	}
	return k
}

// flush writes c's pending bytes until the socket takes no more, and asks
// for EPOLLOUT while some are left.
func (l *loop) flush(c *conn) {
	for c.off < len(c.pending) {
		w, err := unix.Write(c.fd, c.pending[c.off:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			break
		}
		if err != nil {
			l.fail(c, &l.n.write)
			return
		}
		c.off += w
	}
	if c.off == len(c.pending) {
		c.pending, c.off = c.pending[:0], 0
	}
	if want := c.off < len(c.pending); want != c.out {
		c.out = want
		ev := unix.EpollEvent{Events: connEvents, Fd: c.idx}
		if want {
			ev.Events |= unix.EPOLLOUT
		}
		unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, c.fd, &ev)
	}
}

// fail marks c dead, counting an error unless the run is stopping, and
// its outstanding messages as lost.
func (l *loop) fail(c *conn, counter *atomic.Int64) {
	if c.dead {
		return
	}
	c.dead = true
	unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, c.fd, nil)
	l.lose(c, counter)
	c.pending, c.off = nil, 0
}

// readable reads what c has, checks and records the whole responses (all
// those of one read share its arrival time: now, the time of the poll, or
// with ArrivalKernel the kernel's receive time of the read's newest data)
// and in closed loop sends as many new messages. Responses have the size
// of messages (in line mode too: one line back per line sent). A read
// after the first, which may hold the answers to messages the first one's
// sent (closed loop), is timed when it starts.
func (l *loop) readable(c *conn, now int64) {
	for first := true; !c.dead; first = false {
		if !first {
			now = l.r.now()
		}
		p := copy(l.buf, c.partial)
		var n int
		var err error
		at := now
		if l.oob != nil {
			var oobn int
			n, oobn, err = l.recv.recv(c.fd, l.buf[p:], l.oob)
			if ts, ok := rxTime(l.oob[:max(oobn, 0)]); ok && n > 0 {
				at = min(ts-l.wallOff, now)
			}

		} else {
			n, err = unix.Read(c.fd, l.buf[p:])
		}
		if err == unix.EINTR {
			continue
		}
		n = max(n, 0)
		if n > 0 {
			l.process(c, l.buf[:p+n], at, now)
		}
		if (n == 0 && err == nil) || (err != nil && err != unix.EAGAIN) {
			l.fail(c, &l.n.read)
		}
		if p+n < len(l.buf) {
			return // the socket is empty (edge-triggered: see connEvents)
		}
	}
}

// process takes the responses in b, which arrived at at (now: the time
// of the poll).
func (l *loop) process(c *conn, b []byte, at, now int64) {
	r := l.r
	size := r.cfg.MsgSize
	k := len(b) / size
	if k > 0 && c.qh < len(c.q) {
		// One round trip per read for the wait policy: the newest
		// response's.
		l.wait.sample(at - c.q[min(c.qh+k, len(c.q))-1])
	}
	got := 0
	if k > 0 {
		got = l.take(c, b, k, at)
	}
	c.partial = append(c.partial[:0], b[k*size:]...)
	if got > 0 && !r.cfg.isOpen() && !r.stopping.Load() && now < r.end {
		l.send(c, got, r.now())
	}
}

// startLoops opens the connections and starts tcpperf's own loops on
// them.
func (r *run) startLoops(ctx context.Context) (engine, error) {
	fds := make([]int, r.cfg.Conns)
	for i := range fds {
		fds[i] = -1
	}
	err := r.connect(ctx, func(ctx context.Context, i int) error {
		fd, err := r.dialFD(ctx)
		fds[i] = fd
		return err
	})
	if err != nil {
		for _, fd := range fds {
			if fd >= 0 {
				unix.Close(fd) // opened before a stop
			}
		}
		return engine{}, err
	}
	r.fds = slices.DeleteFunc(fds, func(fd int) bool { return fd < 0 })
	r.cfg.Loops = min(r.cfg.Loops, len(r.fds))
	cfg := &r.cfg
	r.loops = make([]*loop, 0, cfg.Loops)
	closeAll := func() {
		for _, l := range r.loops {
			l.close()
		}
		for _, fd := range r.fds {
			unix.Close(fd)
		}
	}
	for i := range cfg.Loops {
		cpu := -1
		if len(cfg.CPUs) > 0 {
			cpu = cfg.CPUs[i%len(cfg.CPUs)]
		}
		l, err := newLoop(r, i, cpu)
		if err != nil {
			closeAll()
			return engine{}, err
		}
		r.loops = append(r.loops, l)
	}
	for i, fd := range r.fds {
		if err := r.loops[i%len(r.loops)].add(fd, i); err != nil {
			r.fds = r.fds[i+1:] // add closed fd
			closeAll()
			return engine{}, fmt.Errorf("tcpperf: epoll: %w", err)
		}
	}
	r.fds = nil // the loops close them

	// Start the loops: each locks its thread and pins it, then waits for
	// the clock's base to be set.
	ready := make(chan error, len(r.loops))
	begin := make(chan struct{})
	var loops sync.WaitGroup
	for _, l := range r.loops {
		loops.Add(1)
		go func() {
			defer loops.Done()
			l.run(ctx, ready, begin)
		}()
	}
	var setupErr error
	for range r.loops {
		setupErr = cmp.Or(setupErr, <-ready)
	}
	if setupErr != nil {
		r.quit.Store(true)
		close(begin)
		loops.Wait()
		closeAll()
		return engine{}, setupErr
	}
	return engine{
		begin: func() { close(begin) },
		wake:  r.wakeAll,
		quit:  func() { r.wakeAll(); loops.Wait() },
		close: closeAll,
	}, nil
}

func (r *run) wakeAll() {
	for _, l := range r.loops {
		l.wakeUp()
	}
}

func (r *run) dialFD(ctx context.Context) (int, error) {
	nc, err := r.env.dial(ctx, "tcp", r.cfg.Addr)
	if err != nil {
		return -1, err
	}
	defer nc.Close()
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1, configErr("", "the dialer's %T has no file descriptor", nc)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, fmt.Errorf("dup: %w", derr)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

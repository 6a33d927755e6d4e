package netio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// loopSys is the Linux part of a Loops server.
type loopSys struct {
	lfd       int // the listener's descriptor, polled by every loop
	running   sync.WaitGroup
	quit      atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Epoll data of a loop's own descriptors; a connection's is its index in
// the loop.
const (
	evWake   = -1
	evListen = -2
)

// readEvents are a readable connection's events, edge-triggered: one
// read that does not fill the buffer has emptied the socket, unless the
// peer has also ended its stream (EPOLLRDHUP), which the loop reads to
// the end. A connection waiting for room is polled for EPOLLOUT only.
// The listener is level-triggered and exclusive: one loop is woken per
// connection and accepts it.
const (
	readEvents   = unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET
	roomEvents   = unix.EPOLLOUT | unix.EPOLLET
	listenEvents = unix.EPOLLIN | unix.EPOLLEXCLUSIVE
)

// yieldEvery is how often a loop lets the scheduler run: a goroutine
// that has not been scheduled for 10 ms is seen as running too long, and
// the runtime then takes its processor away at every system call that
// blocks (and polls for that every 20 µs), which cost a loop at 10,000
// connections a fifth more CPU per message.
const yieldEvery = 2 * time.Millisecond

// keepInput is the most capacity a connection keeps for unused input
// once its Handler has used all of it.
const keepInput = 512

// A task is a function Do posted for a connection.
type task struct {
	c *LoopConn
	f func(*LoopConn)
}

// A loop is one event loop: a thread with its own epoll set, accepting
// connections and serving them. Everything about a connection happens on
// its loop.
type loop struct {
	s    *Loops
	id   int
	cpu  int // pinned to this CPU, or -1
	ep   int
	wake int // eventfd: tasks are waiting, or the server closes

	mu      sync.Mutex
	tasks   []task // posted by Do
	running []task // being run, reused

	conns     []*LoopConn // by index; nil where free
	free      []int32
	buf       []byte // read buffer
	out       []byte // the output of the Handler call in progress
	maxQueued int
	maxInput  int

	// After accept(2) failed, the listener is out of the set until resume
	// (zero while it is in), for a pause that doubles while failures
	// last.
	backoff time.Duration
	resume  time.Time
}

func (s *Loops) start() error {
	rc, err := s.ln.SyscallConn()
	if err != nil {
		return err
	}
	// The descriptor stays valid until the listener is closed, which
	// Close does after the loops have ended.
	if err := rc.Control(func(fd uintptr) { s.sys.lfd = int(fd) }); err != nil {
		return err
	}
	n := s.opt.Loops
	if n <= 0 {
		n = max(runtime.GOMAXPROCS(0)-1, 1)
	}
	ready := make(chan error, n)
	for i := range n {
		cpu := -1
		if len(s.opt.CPUs) > 0 {
			cpu = s.opt.CPUs[i%len(s.opt.CPUs)]
		}
		l, err := newLoop(s, i, cpu)
		if err != nil {
			s.stopLoops()
			return err
		}
		s.loops = append(s.loops, l)
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

// Close stops accepting, closes every connection (OnClose learns
// ErrServerClosed; unsent output is dropped), waits for the loops to end
// and closes the listener. It must not be called from a Handler.
func (s *Loops) Close() error {
	s.sys.closeOnce.Do(func() {
		s.stopLoops()
		s.sys.closeErr = s.ln.Close()
	})
	return s.sys.closeErr
}

func (s *Loops) stopLoops() {
	s.sys.quit.Store(true)
	for _, l := range s.loops {
		l.wakeUp()
	}
	s.sys.running.Wait()
}

// acceptAll accepts the connections waiting on the listener. After an
// error other than a connection that went away, most likely out of
// descriptors or memory, where accepting at once would fail again, the
// listener leaves the loop's set for a pause.
func (l *loop) acceptAll() {
	for {
		fd, sa, err := unix.Accept4(l.s.sys.lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		switch err {
		case nil:
			l.backoff = 0
			l.add(fd, sa)
			continue
		case unix.EAGAIN:
			return
		case unix.EINTR, unix.ECONNABORTED:
			continue
		}
		if f := l.s.opt.OnAcceptError; f != nil {
			f(fmt.Errorf("netio: accept: %w", err))
		}
		l.backoff = min(max(2*l.backoff, 5*time.Millisecond), time.Second)
		l.resume = time.Now().Add(l.backoff)
		unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, l.s.sys.lfd, nil)
		return
	}
}

func newLoop(s *Loops, id, cpu int) (*loop, error) {
	l := &loop{s: s, id: id, cpu: cpu, ep: -1, wake: -1,
		maxQueued: s.opt.MaxQueued, maxInput: s.opt.MaxInput,
		buf: make([]byte, max(64<<10, 2*s.opt.MaxInput))}
	var err error
	if l.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err == nil {
		if l.wake, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err == nil {
			err = unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, l.wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: evWake})
		}
		if err == nil {
			err = l.listen()
		}
	}
	if err != nil {
		l.closeFDs()
		return nil, fmt.Errorf("netio: event loop: %w", err)
	}
	return l, nil
}

func (l *loop) closeFDs() {
	for _, fd := range []int{l.wake, l.ep} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

func (l *loop) listen() error {
	return unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, l.s.sys.lfd, &unix.EpollEvent{Events: listenEvents, Fd: evListen})
}

var eventOne = binary.NativeEndian.AppendUint64(nil, 1)

func (l *loop) wakeUp() { unix.Write(l.wake, eventOne) }

// run is the loop's thread: it reports on ready once locked (and pinned)
// and serves until the server quits.
func (l *loop) run(ready chan<- error) {
	defer l.s.sys.running.Done()
	defer l.closeFDs()
	// Never unlocked: a thread whose affinity was changed ends with the
	// goroutine instead of going back to the scheduler.
	runtime.LockOSThread()
	if l.cpu >= 0 {
		var set unix.CPUSet
		set.Set(l.cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			ready <- fmt.Errorf("netio: cannot pin event loop %d to CPU %d: %w", l.id, l.cpu, err)
			return
		}
	}
	ready <- nil
	defer l.shutdown()
	events := make([]unix.EpollEvent, 256)
	yielded := time.Now()
	for !l.s.sys.quit.Load() {
		timeout := -1
		if !l.resume.IsZero() {
			wait := time.Until(l.resume)
			if wait <= 0 {
				l.resume = time.Time{}
				if err := l.listen(); err != nil {
					l.resume = time.Now().Add(time.Second)
				}
				continue
			}
			timeout = int(wait/time.Millisecond) + 1
		}
		if now := time.Now(); now.Sub(yielded) > yieldEvery {
			runtime.Gosched()
			yielded = now
		}
		n, err := unix.EpollWait(l.ep, events, timeout)
		if err != nil {
			n = 0 // EINTR
		}
		for _, ev := range events[:n] {
			switch ev.Fd {
			case evWake:
				l.runTasks() // or the server quits
				continue
			case evListen:
				l.acceptAll()
				continue
			}
			c := l.conns[ev.Fd]
			if c == nil {
				continue
			}
			if c.waiting {
				l.drain(c)
			} else {
				l.readable(c, ev.Events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0)
			}
		}
	}
}

// add serves the accepted connection fd.
func (l *loop) add(fd int, sa unix.Sockaddr) {
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1) // as package net does
	c := &LoopConn{l: l, fd: fd, remote: tcpAddr(sa)}
	if k := len(l.free); k > 0 {
		c.idx = l.free[k-1]
		l.free = l.free[:k-1]
		l.conns[c.idx] = c
	} else {
		c.idx = int32(len(l.conns))
		l.conns = append(l.conns, c)
	}
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, c.fd, &unix.EpollEvent{Events: readEvents, Fd: c.idx}); err != nil {
		l.close(c, fmt.Errorf("netio: epoll: %w", err))
		return
	}
	if f := l.s.opt.OnOpen; f != nil {
		c.calling = true
		f(c)
		c.calling = false
		if l.send(c) && c.closing {
			l.close(c, nil)
		}
	}
}

func (l *loop) post(c *LoopConn, f func(*LoopConn)) {
	l.mu.Lock()
	first := len(l.tasks) == 0
	l.tasks = append(l.tasks, task{c, f})
	l.mu.Unlock()
	if first {
		l.wakeUp()
	}
}

// runTasks runs the functions Do posted, in order. The eventfd is read
// before the tasks are taken, so a post after that wakes the loop again.
func (l *loop) runTasks() {
	var b [8]byte
	unix.Read(l.wake, b[:])
	l.mu.Lock()
	l.running, l.tasks = l.tasks, l.running[:0]
	l.mu.Unlock()
	for i, t := range l.running {
		l.running[i] = task{}
		c := t.c
		if c.closed || c.closing {
			continue
		}
		c.calling = true
		t.f(c)
		c.calling = false
		if l.send(c) && c.closing {
			l.close(c, nil)
		}
	}
}

// tcpAddr is the net.Addr of an accepted peer.
func tcpAddr(sa unix.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)))
	case *unix.SockaddrInet6:
		ip := netip.AddrFrom16(a.Addr)
		if a.ZoneId != 0 {
			ip = ip.WithZone(strconv.FormatUint(uint64(a.ZoneId), 10))
		}
		return net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, uint16(a.Port)))
	}
	return nil
}

// readable reads c until its socket is empty (to the end of its stream if
// the peer has ended it), calling the Handler after each read, and stops
// early once c waits for room or is closed.
func (l *loop) readable(c *LoopConn, ended bool) {
	for !c.closed && !c.closing && !c.waiting {
		p := copy(l.buf, c.in)
		n, err := unix.Read(c.fd, l.buf[p:])
		if err == unix.EINTR {
			continue
		}
		if n > 0 {
			total := p + n
			c.calling = true
			used := l.s.h(c, l.buf[:total])
			c.calling = false
			if used < 0 || used > total {
				panic("netio: Handler returned " + strconv.Itoa(used) + " used of " + strconv.Itoa(total) + " bytes")
			}
			rest := l.buf[used:total]
			switch {
			case len(rest) > l.maxInput:
				l.send(c)
				l.close(c, ErrInputTooLarge)
				return
			case len(rest) == 0 && cap(c.in) > keepInput:
				c.in = nil
			default:
				c.in = append(c.in[:0], rest...)
			}
			if !l.send(c) {
				return
			}
		}
		if n == 0 && err == nil { // the end of the peer's stream
			c.closing = true
			break
		}
		if err != nil && err != unix.EAGAIN {
			l.close(c, err)
			return
		}
		if err != nil || (p+n < len(l.buf) && !ended) {
			break // the socket is empty
		}
	}
	if c.closing && !c.closed && !c.waiting {
		l.close(c, nil)
	}
}

// send writes the output of the Handler call that just returned. It
// reports whether c may be read on: false once c waits for room or is
// closed.
func (l *loop) send(c *LoopConn) bool {
	out := l.out
	l.out = l.out[:0]
	if c.waiting { // a task's output, behind what waits for room
		c.pending = append(c.pending, out...)
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
			l.close(c, err)
			return false
		}
		n += w
	}
	if f := l.s.opt.sent; f != nil && len(out) > 0 {
		f(len(out), n)
	}
	if n == len(out) {
		return !c.closed
	}
	c.pending = append(c.pending[:0], out[n:]...)
	c.off = 0
	c.waiting = true
	l.watch(c, roomEvents)
	return false
}

// drain writes c's pending output once the socket has room again, and
// goes back to reading c when all of it is sent.
func (l *loop) drain(c *LoopConn) {
	for c.off < len(c.pending) {
		w, err := unix.Write(c.fd, c.pending[c.off:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return
		}
		if err != nil {
			l.close(c, err)
			return
		}
		c.off += w
	}
	c.pending, c.off, c.waiting = nil, 0, false
	if c.closing {
		l.close(c, nil)
		return
	}
	// Re-arming reports what arrived meanwhile.
	l.watch(c, readEvents)
}

func (l *loop) watch(c *LoopConn, events uint32) {
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: events, Fd: c.idx}); err != nil {
		l.close(c, fmt.Errorf("netio: epoll: %w", err))
	}
}

func (l *loop) close(c *LoopConn, err error) {
	if c.closed {
		return
	}
	c.closed = true
	unix.Close(c.fd) // which takes it out of the epoll set
	l.conns[c.idx] = nil
	l.free = append(l.free, c.idx)
	c.in, c.pending, c.off = nil, nil, 0
	if f := l.s.opt.OnClose; f != nil {
		f(c, err)
	}
}

// shutdown closes the loop's connections.
func (l *loop) shutdown() {
	for _, c := range l.conns {
		if c != nil {
			l.close(c, ErrServerClosed)
		}
	}
}

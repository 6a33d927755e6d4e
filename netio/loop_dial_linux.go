//go:build linux && !netio_portable

package netio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A dialing is a Dial's connect(2) in progress on a loop: its LoopConn
// is in the loop's table and epoll set, polled for EPOLLOUT, and in its
// heap at the dial's timeout; OnOpen has not run.
type dialing struct {
	at        int64         // the timeout, on the loop's clock; 0 is none
	timeout   time.Duration // this address's share of DialTimeout; 0 is none
	connected bool          // connect(2) completed at once
	remote    net.Addr
	host      string // the address's host: a TLS client's ServerName
	unix      bool
	c         *LoopConn // set on the loop
	done      chan dialResult
	// claim is dialPending until the loop hands the connection over
	// (dialClaimed, before OnOpen) or Dial gives it up at ctx's end
	// (dialAbandoned: the loop closes it, and Dial does not wait for a
	// loop that may be the one calling it).
	claim atomic.Int32
}

type dialResult struct {
	c   *LoopConn
	err error
}

// Dial connects to address on network ("tcp", "tcp4", "tcp6" or "unix";
// names are resolved with net.DefaultResolver, and their addresses tried
// in turn until one connects, each with a share of the time left, as
// package net's Dial does) with a non-blocking connect(2) on one of
// the loops, taken in turn with the accepted connections, and serves the
// connection as an accepted one: with the Handler, and OnOpen run on the
// loop before Dial returns (which may StartTLS: TLS as the client). The
// returned LoopConn is the loop's, as a Handler's is: from other
// goroutines, use it with Do. If OnOpen panics,
// the connection is closed (OnClose learns the *PanicError) and Dial
// returns no LoopConn and a *net.OpError wrapping the same *PanicError
// (errors.Is ErrPanic); the connection counts in LoopStats as Dialed,
// not as a DialError.
//
// The connect is bounded by ctx and by LoopOptions.DialTimeout, which
// the loop keeps on its clock; of the time either leaves, an address
// that is not the last gets an equal share with those after it (at least
// 2 seconds, or all that is left if less), and one that fails or times
// out in it gives way to the next. Dial fails, its socket closed, with
// the first address's error: a
// *net.OpError that matches syscall.ECONNREFUSED (errors.Is) when the
// peer refused, os.ErrDeadlineExceeded when DialTimeout or ctx's
// deadline passed (a net.Error whose Timeout reports true; for ctx's, it
// matches context.DeadlineExceeded too, as package net's Dial's error
// does; either reads as net's, "dial tcp ADDR: i/o timeout"),
// context.Canceled when ctx was cancelled (a ctx ended before
// Dial connects to nothing), and ErrServerClosed once Shutdown or Close
// has begun (which end the dials in flight). A Unix socket whose
// listener's backlog is full fails at once with syscall.EAGAIN, as
// package net's Dial does: the kernel does not say when there is room.
//
// Dial waits for the loop, so it must not be called on one (in a Handler
// or callback): a Handler hands the dial to a goroutine. Called on one,
// it holds the loop until ctx ends, then fails with ctx's error, and the
// loop closes the connection unopened.
func (s *Loops) Dial(ctx context.Context, network, address string) (*LoopConn, error) {
	opErr := func(addr net.Addr, err error) error {
		return &net.OpError{Op: "dial", Net: network, Addr: addr, Err: err}
	}
	if s.isClosed() || s.sys.stopping.Load() {
		return nil, opErr(nil, ErrServerClosed)
	}
	// end is when DialTimeout ends the dial, on the server's clock; zero
	// is never.
	var end time.Time
	if t := s.opt.DialTimeout; t > 0 {
		end = s.opt.Clock().Add(t)
	}
	resolve := s.sys.resolve
	if resolve == nil {
		resolve = func(network, address string) ([]syscall.Sockaddr, error) {
			return dialAddrs(ctx, network, address)
		}
	}
	sas, err := resolve(network, address)
	if err != nil {
		s.loops[0].stats.dialErrors.Add(1)
		return nil, opErr(nil, err)
	}
	host := ""
	if network != "unix" {
		host, _, _ = net.SplitHostPort(address) // dialAddrs has split it
	}
	// name is sa as a failed Dial's error names it: as package net's Dial
	// does, the local system of an empty host as ":port", not the
	// loopback address connected to, and an IPv6 zone as address spelt
	// it (fe80::1%eth0), not as the interface's index.
	name := func(sa syscall.Sockaddr) net.Addr {
		a := sockAddr(sa)
		if ta, ok := a.(*net.TCPAddr); ok {
			if host == "" {
				ta.IP = nil
			} else if ip, err := netip.ParseAddr(host); err == nil && ip.Zone() != "" {
				ta.Zone = ip.Zone()
			}
		}
		return a
	}
	var first error
	for i, sa := range sas {
		if err := ctx.Err(); err != nil {
			// No connect(2) once ctx has ended, as package net's Dial:
			// the peer would be handed a connection closed at once.
			if first == nil {
				first = opErr(name(sa), dialCtxErr(err))
			}
			break
		}
		// This address's share of the time DialTimeout leaves, and of
		// the time ctx's deadline leaves.
		var timeout time.Duration
		if !end.IsZero() {
			var ok bool
			if timeout, ok = dialShare(end.Sub(s.opt.Clock()), len(sas)-i); !ok {
				if first == nil {
					first = opErr(name(sa), os.ErrDeadlineExceeded)
				}
				break
			}
		}
		actx, cancel := ctx, context.CancelFunc(func() {})
		if dl, ok := ctx.Deadline(); ok {
			left := time.Until(dl)
			share, ok := dialShare(left, len(sas)-i)
			if !ok {
				if first == nil {
					first = opErr(name(sa), dialCtxErr(context.DeadlineExceeded))
				}
				break
			}
			if share < left {
				actx, cancel = context.WithTimeout(ctx, share)
			}
		}
		c, err := s.dialOne(actx, sa, host, timeout)
		cancel()
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = opErr(name(sa), err)
		}
		if errors.Is(err, ErrPanic) {
			return nil, first // connected and closed: counted as Dialed, not as a DialError
		}
		if ctx.Err() != nil || errors.Is(err, ErrServerClosed) {
			break
		}
	}
	s.loops[0].stats.dialErrors.Add(1)
	return nil, first
}

// dialShare is the share of the time left that the first of n addresses
// still to try gets, as package net's Dial gives it: an equal share, but
// at least 2 seconds (or all that is left, if less). ok is false if no
// time is left.
func dialShare(left time.Duration, n int) (share time.Duration, ok bool) {
	if left <= 0 {
		return 0, false
	}
	const least = 2 * time.Second
	share = left / time.Duration(max(n, 1))
	if share < least {
		share = min(left, least)
	}
	return share, true
}

// errMissingAddress is what Dial of an empty address fails with, in a
// *net.OpError, as package net's Dial (and so the portable loops' Dial):
// "dial tcp: missing address".
var errMissingAddress = errors.New("missing address")

// dialAddrs resolves address on network.
func dialAddrs(ctx context.Context, network, address string) ([]syscall.Sockaddr, error) {
	switch network {
	case "unix", "tcp", "tcp4", "tcp6":
		if address == "" {
			return nil, errMissingAddress // as package net's Dial
		}
	}
	ipNet := "ip"
	switch network {
	case "unix":
		return []syscall.Sockaddr{&syscall.SockaddrUnix{Name: address}}, nil
	case "tcp4":
		ipNet = "ip4"
	case "tcp6":
		ipNet = "ip6"
	case "tcp":
	default:
		return nil, net.UnknownNetworkError(network)
	}
	host, service, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := net.DefaultResolver.LookupPort(ctx, network, service)
	if err != nil {
		return nil, err
	}
	if host == "" { // the local system, as package net dials it
		host = "127.0.0.1"
		if network == "tcp6" {
			host = "::1"
		}
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		// A literal, as package net takes it, with its zone (fe80::1%eth0),
		// which LookupNetIP drops.
		ips = []netip.Addr{ip}
	} else if ips, err = net.DefaultResolver.LookupNetIP(ctx, ipNet, host); err != nil {
		return nil, err
	}
	var sas []syscall.Sockaddr
	for _, ip := range ips {
		ip = ip.Unmap()
		switch {
		case ip.Is4() && network != "tcp6":
			sas = append(sas, &syscall.SockaddrInet4{Port: port, Addr: ip.As4()})
		case ip.Is6() && network != "tcp4":
			sa := &syscall.SockaddrInet6{Port: port, Addr: ip.As16()}
			if z := ip.Zone(); z != "" {
				sa.ZoneId = zoneIndex(z)
			}
			sas = append(sas, sa)
		}
	}
	if len(sas) == 0 {
		return nil, &net.AddrError{Err: "no suitable address found", Addr: host} // net's text
	}
	return sas, nil
}

// zoneIndex is the interface index of an IPv6 zone, read as package net
// reads it: an interface's name first, else decimal digits alone (no
// sign; at most 0xFFFFFF), else 0.
func zoneIndex(z string) uint32 {
	if ifi, err := net.InterfaceByName(z); err == nil {
		return uint32(ifi.Index)
	}
	var n uint32
	for i := 0; i < len(z); i++ {
		if z[i] < '0' || z[i] > '9' {
			return 0
		}
		if n = n*10 + uint32(z[i]-'0'); n >= 0xFFFFFF {
			return 0xFFFFFF
		}
	}
	return n
}

// dialOne connects to sa, of host, on the loop whose turn it is, for at
// most timeout on the loop's clock (0: no bound but ctx).
func (s *Loops) dialOne(ctx context.Context, sa syscall.Sockaddr, host string, timeout time.Duration) (*LoopConn, error) {
	family := unix.AF_UNIX
	switch sa.(type) {
	case *syscall.SockaddrInet4:
		family = unix.AF_INET
	case *syscall.SockaddrInet6:
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	d := &dialing{remote: sockAddr(sa), host: host, unix: family == unix.AF_UNIX, timeout: timeout, done: make(chan dialResult, 1)}
	if !d.unix {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1) // as package net does
	}
	switch err := syscall.Connect(fd, sa); err {
	case nil:
		d.connected = true
	case unix.EINPROGRESS, unix.EINTR: // EINTR: the connect goes on
	default:
		unix.Close(fd)
		return nil, os.NewSyscallError("connect", err)
	}
	l := s.nextLoop()
	err = l.post(task{lf: func(l *loop) {
		if l == nil { // the loop stopped first
			unix.Close(fd)
			d.done <- dialResult{err: ErrServerClosed}
			return
		}
		l.startDial(fd, d)
	}})
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	var r dialResult
	select {
	case r = <-d.done:
	case <-ctx.Done():
		err := dialCtxErr(ctx.Err())
		// A loop that stopped has ended the dial already, or will.
		l.post(task{lf: func(l *loop) {
			if l != nil && d.c != nil && d.c.dial == d {
				l.dialFailed(d.c, err)
			}
		}})
		if d.claim.CompareAndSwap(dialPending, dialAbandoned) {
			return nil, err
		}
		r = <-d.done // the loop is handing the connection over
	}
	return r.c, r.err
}

// startDial serves the connection fd is making: in the loop's table and
// epoll set, polled for EPOLLOUT until connect(2) completes.
func (l *loop) startDial(fd int, d *dialing) {
	if l.draining {
		unix.Close(fd)
		d.done <- dialResult{err: ErrServerClosed}
		return
	}
	c := &LoopConn{l: l, fd: fd, remote: d.remote, heapIdx: -1, dial: d, watched: roomEvents}
	l.slot(c)
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: roomEvents, Fd: c.idx}); err != nil {
		unix.Close(fd)
		l.free = append(l.free, c.idx)
		d.done <- dialResult{err: fmt.Errorf("netio: epoll: %w", err)}
		return
	}
	l.conns[c.idx] = c
	d.c = c
	if d.connected {
		l.dialed(c)
		return
	}
	if t := d.timeout; t > 0 {
		d.at = l.clock() + int64(t)
		l.schedule(c)
	}
	if f := l.s.opt.dialing; f != nil {
		f()
	}
}

// dialEvent looks at the connect(2) of c, polled for room.
func (l *loop) dialEvent(c *LoopConn, ev uint32) {
	e, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && e != 0 {
		err = unix.Errno(e)
	}
	switch {
	case err != nil:
		l.dialFailed(c, os.NewSyscallError("connect", err))
	case ev&unix.EPOLLOUT != 0:
		l.dialed(c)
	}
}

// dialed serves c, connected: from now on as an accepted connection.
func (l *loop) dialed(c *LoopConn) {
	d := c.dial
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: readEvents, Fd: c.idx}); err != nil {
		l.dialFailed(c, fmt.Errorf("netio: epoll: %w", err))
		return
	}
	if !d.claim.CompareAndSwap(dialPending, dialClaimed) {
		l.dialFailed(c, context.Canceled) // Dial has returned ctx's error
		return
	}
	l.unschedule(c)
	c.dial, c.watched = nil, readEvents
	c.dialed, c.dialHost = true, d.host
	c.readAt = l.clock()
	l.stats.dialed.Add(1)
	l.opened(c, nil) // a dialed connection is no TLS server: its OnOpen may StartTLS
	if err := openPanic(c); err != nil {
		d.done <- dialResult{err: err} // c is closed, OnClose told
		return
	}
	d.done <- dialResult{c: c}
}

// dialFailed ends the dial of c with err: its socket is closed.
func (l *loop) dialFailed(c *LoopConn, err error) {
	d := c.dial
	l.unschedule(c)
	unix.Close(c.fd) // which takes it out of the epoll set
	c.fd, c.dial, c.closed = -1, nil, true
	c.gone.Store(true)
	l.conns[c.idx] = nil
	l.freed = append(l.freed, c.idx) // see run
	d.done <- dialResult{err: err}
}

// slot gives c an index in the loop's table.
func (l *loop) slot(c *LoopConn) {
	if k := len(l.free); k > 0 {
		c.idx = l.free[k-1]
		l.free = l.free[:k-1]
	} else {
		c.idx = int32(len(l.conns))
		l.conns = append(l.conns, nil)
	}
}

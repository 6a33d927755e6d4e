//go:build !linux || netio_portable

package netio

import (
	"cmp"
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"sync/atomic"
	"time"
)

// A dialing is a Dial in progress, known to its loop, which ends it at
// LoopOptions.DialTimeout on its clock, or when the server closes or
// shuts down. The portable Serve connects with a net.Dialer on the
// caller's goroutine, and serves the connection once it has connected.
type dialing struct {
	at     int64 // the timeout, on the loop's clock; 0 is none
	cancel context.CancelCauseFunc
	claim  atomic.Int32 // see dialPending
}

// Dial connects to address on network ("tcp", "tcp4", "tcp6" or "unix";
// names are resolved with net.DefaultResolver, and their addresses tried
// in turn until one connects, each with a share of the time left) with a
// net.Dialer, and serves the
// connection as an accepted one, on the loop whose turn it is: with the
// Handler, and OnOpen run on the loop before Dial returns. The returned
// LoopConn is the loop's, as a Handler's is: from other goroutines, use
// it with Do. If OnOpen panics, the connection is closed (OnClose
// learns the *PanicError) and Dial returns no LoopConn and a
// *net.OpError wrapping the same *PanicError (errors.Is ErrPanic); the
// connection counts in LoopStats as Dialed, not as a DialError.
//
// The connect is bounded by ctx and by LoopOptions.DialTimeout, which
// the loop keeps on its clock; of the time either leaves, an address
// that is not the last gets an equal share with those after it (at least
// 2 seconds, or all that is left if less), and one that fails or times
// out in it gives way to the next, as package net's Dial does (with
// LoopOptions.Clock set, the Dialer does not know the loop's clock:
// DialTimeout bounds the addresses together). Dial fails, its socket
// closed, with a
// *net.OpError that matches syscall.ECONNREFUSED (errors.Is) when the
// peer refused, os.ErrDeadlineExceeded when DialTimeout or ctx's
// deadline passed (a net.Error whose Timeout reports true; for ctx's, it
// matches context.DeadlineExceeded too, as package net's Dial's error
// does; either reads as net's, "dial tcp ADDR: i/o timeout"),
// context.Canceled when ctx was cancelled (a ctx ended before
// Dial connects to nothing), and ErrServerClosed once Shutdown or Close
// has begun (which end the dials in flight).
//
// Dial waits for the loop, so it must not be called on one (in a Handler
// or callback): a Handler hands the dial to a goroutine. Called on one,
// it holds the loop until ctx ends, then fails with ctx's error, and the
// loop closes the connection unopened.
func (s *Loops) Dial(ctx context.Context, network, address string) (*LoopConn, error) {
	opErr := func(err error) error {
		return &net.OpError{Op: "dial", Net: network, Err: err}
	}
	if s.isClosed() || s.sys.stopping.Load() {
		return nil, opErr(ErrServerClosed)
	}
	l := s.nextLoop()
	switch network {
	case "tcp", "tcp4", "tcp6", "unix":
	default:
		l.stats.dialErrors.Add(1)
		return nil, opErr(net.UnknownNetworkError(network))
	}
	dctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	d := &dialing{cancel: cancel}
	if err := l.post(task{lf: func(l *loop) {
		if l == nil {
			cancel(ErrServerClosed)
			return
		}
		l.startDial(d)
	}}); err != nil {
		l.stats.dialErrors.Add(1)
		return nil, opErr(ErrServerClosed)
	}
	var dl net.Dialer
	// why tells why dctx ended, or nil; derr is the dial's error, if
	// any.
	why := func(derr error) error {
		if err := ctx.Err(); err != nil {
			return dialCtxErr(err)
		}
		if dctx.Err() != nil {
			return context.Cause(dctx)
		}
		if errors.Is(derr, os.ErrDeadlineExceeded) || errors.Is(derr, context.DeadlineExceeded) {
			// The connect timed out at ctx's deadline or at
			// DialTimeout's (dl.Deadline), which the Dialer keeps on a
			// timer of its own: ctx may not have ended yet.
			if cd, ok := ctx.Deadline(); ok && (dl.Deadline.IsZero() || !cd.After(dl.Deadline)) {
				return dialCtxErr(context.DeadlineExceeded)
			}
			if !dl.Deadline.IsZero() {
				return os.ErrDeadlineExceeded
			}
		}
		return nil
	}
	if t := s.opt.DialTimeout; t > 0 && s.realClock {
		// The Dialer shares it out among the addresses, as ctx's
		// deadline; the loop ends the dial at it too.
		dl.Deadline = time.Now().Add(t)
	}
	if f := s.opt.dialer; f != nil {
		f(&dl)
	}
	nc, err := dl.DialContext(dctx, network, address)
	if err != nil {
		if cause := why(err); cause != nil {
			var addr net.Addr
			if oe, ok := err.(*net.OpError); ok {
				addr = oe.Addr
			}
			err = &net.OpError{Op: "dial", Net: network, Addr: addr, Err: cause}
		}
		l.post(task{lf: func(l *loop) {
			if l != nil {
				l.endDial(d)
			}
		}})
		l.stats.dialErrors.Add(1)
		return nil, err
	}
	type result struct {
		c   *LoopConn
		err error
	}
	done := make(chan result, 1)
	err = l.post(task{lf: func(l *loop) {
		if l == nil {
			done <- result{err: ErrServerClosed}
			return
		}
		l.endDial(d)
		if err := why(nil); err != nil || !d.claim.CompareAndSwap(dialPending, dialClaimed) {
			done <- result{err: cmp.Or(err, context.Canceled)} // abandoned: Dial closes nc
			return
		}
		host := ""
		if network != "unix" {
			host, _, _ = net.SplitHostPort(address)
		}
		c := l.add(nc, false, host)
		if err := openPanic(c); err != nil {
			done <- result{c: c, err: err} // c is closed, OnClose told
			return
		}
		done <- result{c: c}
	}})
	r := result{err: ErrServerClosed}
	if err == nil {
		select {
		case r = <-done:
		case <-ctx.Done():
			if d.claim.CompareAndSwap(dialPending, dialAbandoned) {
				// The task will not serve nc; the loop may be this
				// goroutine's caller, so it is not waited for.
				r = result{err: dialCtxErr(ctx.Err())}
				break
			}
			r = <-done // the loop is handing the connection over
		}
	}
	if r.c != nil && r.err != nil { // OnOpen panicked: counted as Dialed
		return nil, &net.OpError{Op: "dial", Net: network, Addr: nc.RemoteAddr(), Err: r.err}
	}
	if r.err != nil {
		nc.Close()
		l.stats.dialErrors.Add(1)
		return nil, &net.OpError{Op: "dial", Net: network, Addr: nc.RemoteAddr(), Err: r.err}
	}
	return r.c, nil
}

// startDial keeps d's timeout, and ends it at once if the server is
// shutting down.
func (l *loop) startDial(d *dialing) {
	if l.draining || l.s.sys.quit.Load() {
		d.cancel(ErrServerClosed)
		return
	}
	if t := l.s.opt.DialTimeout; t > 0 {
		d.at = l.clock() + int64(t)
	}
	l.dials = append(l.dials, d)
	if f := l.s.opt.dialing; f != nil {
		f()
	}
}

// endDial forgets d.
func (l *loop) endDial(d *dialing) {
	l.dials = slices.DeleteFunc(l.dials, func(x *dialing) bool { return x == d })
}

// expireDials ends the dials whose timeout has passed.
func (l *loop) expireDials() {
	l.dials = slices.DeleteFunc(l.dials, func(d *dialing) bool {
		if d.at > 0 && d.at <= l.now {
			d.cancel(os.ErrDeadlineExceeded)
			return true
		}
		return false
	})
}

// endDials ends every dial in flight: the server is closing.
func (l *loop) endDials() {
	for _, d := range l.dials {
		d.cancel(ErrServerClosed)
	}
	l.dials = nil
}

// nextDial is the earliest dial timeout, or -1.
func (l *loop) nextDial() int64 {
	at := int64(-1)
	for _, d := range l.dials {
		if d.at > 0 && (at < 0 || d.at < at) {
			at = d.at
		}
	}
	return at
}

package netio

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// detachLinger is how long a detached connection's Close waits for room
// for the output the loop had queued, as Conn.Close's DefaultLinger.
const detachLinger = DefaultLinger

// A detachedConn is a connection Detach took from its loop: its reads
// start with the input the loop had read and its Handler left unused, and
// what the loop had queued is written before anything else.
type detachedConn struct {
	net.Conn
	ready chan struct{} // closed once the loop's call has returned

	mu  sync.Mutex
	in  []byte // read first
	out []byte // written first
	// rerr, if not nil, is what Read returns once in is read instead of
	// reading on: the peer's reset, which the loop found (and so took
	// from the socket) as the connection was detached. Set before ready
	// is closed.
	rerr error

	// Deadlines set before the loop has let go are kept (rd and wd, if
	// rdSet and wdSet) and set on the connection once it has: the loop
	// may still be stopping its own read or write with a deadline of its
	// own, and clearing it after (the portable loops do), which would
	// undo them. settled says they have been set; later ones pass
	// through. dmu is apart from mu, which a Write of out may hold while
	// it blocks: a deadline must get through then.
	dmu          sync.Mutex
	settled      bool
	rdSet, wdSet bool
	rd, wd       time.Time
}

// settle sets the deadlines kept while the loop held the connection, once
// it has let go.
func (d *detachedConn) settle() {
	d.dmu.Lock()
	defer d.dmu.Unlock()
	d.settleLocked()
}

func (d *detachedConn) settleLocked() {
	if d.settled {
		return
	}
	d.settled = true
	if d.rdSet {
		d.Conn.SetReadDeadline(d.rd)
	}
	if d.wdSet {
		d.Conn.SetWriteDeadline(d.wd)
	}
}

func (d *detachedConn) SetDeadline(t time.Time) error      { return d.setDeadline(t, true, true) }
func (d *detachedConn) SetReadDeadline(t time.Time) error  { return d.setDeadline(t, true, false) }
func (d *detachedConn) SetWriteDeadline(t time.Time) error { return d.setDeadline(t, false, true) }

func (d *detachedConn) setDeadline(t time.Time, read, write bool) error {
	d.dmu.Lock()
	select {
	case <-d.ready:
		d.settleLocked()
	default:
		if read {
			d.rd, d.rdSet = t, true
		}
		if write {
			d.wd, d.wdSet = t, true
		}
		d.dmu.Unlock()
		return nil
	}
	d.dmu.Unlock()
	switch {
	case read && write:
		return d.Conn.SetDeadline(t)
	case read:
		return d.Conn.SetReadDeadline(t)
	}
	return d.Conn.SetWriteDeadline(t)
}

// prefix waits for the loop to let go, sends what it had queued, and
// serves what it had read into p.
func (d *detachedConn) prefix(p []byte) (n int, err error) {
	<-d.ready
	d.settle()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.out) > 0 {
		k, err := d.Conn.Write(d.out)
		d.out = d.out[k:]
		if err != nil {
			return 0, err
		}
		d.out = nil
	}
	if p != nil && len(d.in) > 0 {
		n = copy(p, d.in)
		if d.in = d.in[n:]; len(d.in) == 0 {
			d.in = nil
		}
	}
	return n, nil
}

func (d *detachedConn) Read(p []byte) (int, error) {
	if n, err := d.prefix(p); n > 0 || err != nil {
		return n, err
	}
	if d.rerr != nil {
		return 0, d.rerr
	}
	return d.Conn.Read(p)
}

func (d *detachedConn) Write(p []byte) (int, error) {
	if _, err := d.prefix(nil); err != nil {
		return 0, err
	}
	return d.Conn.Write(p)
}

// Close sends what the loop had queued, if no Read or Write has, waiting
// at most detachLinger for room, then closes the connection; it returns
// ErrUnsent if some of it could not be sent.
func (d *detachedConn) Close() error {
	<-d.ready
	d.mu.Lock()
	var err error
	if len(d.out) > 0 {
		d.Conn.SetWriteDeadline(time.Now().Add(detachLinger))
		if _, werr := d.Conn.Write(d.out); werr != nil {
			err = ErrUnsent
		}
		d.out = nil
	}
	d.mu.Unlock()
	if cerr := d.Conn.Close(); err == nil {
		err = cerr
	}
	return err
}

// CloseWrite sends what the loop had queued, if no Read or Write has,
// then shuts down the writing side of the connection (the peer reads the
// end of stream) and leaves its reading side open, for a proxy's
// half-close. It fails with an error matching errors.ErrUnsupported if
// the connection has no CloseWrite (TCP and Unix stream ones have).
func (d *detachedConn) CloseWrite() error {
	if _, err := d.prefix(nil); err != nil {
		return err
	}
	cw, ok := d.Conn.(interface{ CloseWrite() error })
	if !ok {
		return fmt.Errorf("netio: CloseWrite of a %T: %w", d.Conn, errors.ErrUnsupported)
	}
	return cw.CloseWrite()
}

//go:build linux && !netio_portable

package netio

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"slices"

	"golang.org/x/sys/unix"
)

// The loops' part of TLS (see loop_tls.go).

func (t *tlsPipe) Write(p []byte) (int, error) {
	t.mu.Lock()
	onLoop, closed := t.onLoop, t.closed
	t.mu.Unlock()
	c := t.c
	switch {
	case closed:
		return 0, net.ErrClosed
	case onLoop: // on the loop: into the call's output, behind what is sealed
		l := c.l
		if l.tl.owner != c {
			l.tl.owner, l.tl.sealed = c, 0
		}
		l.out = slices.Insert(l.out, l.tl.sealed, p...)
		l.tl.sealed += len(p)
		return len(p), nil
	}
	b := bytes.Clone(p)
	err := c.l.post(task{lf: func(l *loop) {
		if l != nil && !c.closed && !c.closing {
			l.out = append(l.out, b...)
			l.send(c)
		}
	}})
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// startTLS starts c's handshake, on a goroutine.
func (l *loop) startTLS(c *LoopConn, cfg *tls.Config, implicit bool) {
	t := &tlsPipe{c: c, local: c.LocalAddr(), remote: c.remote, implicit: implicit, opened: !implicit,
		running: true, eof: c.eof, rawEOF: c.eof, drain: implicit && l.draining}
	t.cond.L = &t.mu
	t.conn = tls.Server(t, cfg)
	c.tls = t
	if d := l.s.opt.HandshakeTimeout; c.deadline == 0 && d > 0 {
		c.deadline = l.clock() + int64(d)
		t.deadline = c.deadline
	}
	l.schedule(c)
	l.s.sys.handshakes.Add(1)
	go l.handshake(c, t)
}

// handshake runs c's handshake and reports its end to the loop; if the
// loop has stopped, it reports it itself.
func (l *loop) handshake(c *LoopConn, t *tlsPipe) {
	defer l.s.sys.handshakes.Done()
	err := func() (err error) {
		defer func() {
			if v := recover(); v != nil { // in a tls.Config callback
				err = &PanicError{Value: v, Stack: debug.Stack()}
			}
		}()
		return t.conn.HandshakeContext(context.Background())
	}()
	post := l.post(task{lf: func(to *loop) {
		if to == nil {
			l.handshakeGone(c, err)
			return
		}
		to.handshakeDone(c, err)
	}})
	if post != nil {
		l.handshakeGone(c, err)
	}
}

// handshakeError is what OnHandshake learns of a handshake that ended
// with err; closeErr is what closed the connection meanwhile, if closed:
// that is what ended it.
func handshakeError(err error, closed bool, closeErr error) error {
	if err == nil {
		return nil
	}
	if closed && (closeErr != nil || errors.Is(err, net.ErrClosed)) {
		err = closeErr // what ended it
		if err == nil {
			err = ErrClosed
		}
	}
	return fmt.Errorf("%w: %w", ErrHandshake, err)
}

// handshakeDone goes on with c, on its loop, once its handshake is over.
func (l *loop) handshakeDone(c *LoopConn, err error) {
	t := c.tls
	t.running = false
	if t.released {
		l.reportClosed(c, err)
		if t.counted && l.s.sys.open.Add(-1) == 0 {
			l.s.sys.endDrain()
		}
		return
	}
	if err != nil {
		herr := handshakeError(err, false, nil)
		t.state, t.notified = tlsFailed, true
		c.closing, c.closeErr = true, herr
		if f := l.s.opt.OnHandshake; f != nil {
			l.callTimeout(c, f, herr)
		}
		l.out = l.out[:0]
		l.close(c, herr) // after the alert, which the loop has sent
		return
	}
	t.mu.Lock()
	t.onLoop = true
	t.mu.Unlock()
	t.state = tlsOpen
	if t.deadline != 0 && c.deadline == t.deadline {
		c.deadline = 0 // the handshake's; the idle timeout counts from now
	}
	c.readAt = l.clock()
	l.schedule(c)
	if f := l.s.opt.OnHandshake; f != nil && !l.callTimeout(c, f, nil) {
		return
	}
	if t.implicit {
		t.opened = true
		if f := l.s.opt.OnOpen; f != nil && !l.call(c, f) {
			return
		}
	}
	// What came with the peer's last flight, even while output waits:
	// nothing would read it again.
	if !l.tlsRecords(c) {
		return
	}
	t.unlend()
	if !l.sendAndCheck(c) {
		return
	}
	if t.drain && l.draining {
		l.drainOne(c)
	}
}

// reportClosed tells OnHandshake how the handshake of c, closed while it
// ran, ended, then OnClose of c's end.
func (l *loop) reportClosed(c *LoopConn, err error) {
	t := c.tls
	t.released = false
	herr := handshakeError(err, true, t.closeErr)
	if herr == nil {
		t.state = tlsOpen
	} else {
		t.state = tlsFailed
	}
	if f := l.s.opt.OnHandshake; f != nil {
		onClose(f, c, herr)
	}
	if f := l.s.opt.OnClose; f != nil && t.opened {
		onClose(f, c, t.closeErr)
	}
}

// handshakeGone reports the end of a handshake whose loop has stopped
// (the server closed), on the handshake's goroutine: c was closed first.
func (l *loop) handshakeGone(c *LoopConn, err error) {
	if c.tls.released {
		l.reportClosed(c, err)
	}
}

// tlsReleased ends the TLS of c, being closed with err, and reports
// whether OnClose waits for its handshake's end.
func (l *loop) tlsReleased(c *LoopConn, err error) bool {
	t := c.tls
	t.Close()
	t.plain = nil
	if !t.running {
		return false
	}
	t.released, t.closeErr, t.counted = true, err, l.draining
	return true
}

// tlsOpened reports whether c, closed, has been opened: OnClose is
// told only then.
func (c *LoopConn) tlsOpened() bool { return c.tls == nil || c.tls.opened }

// tlsReadable is readable for a TLS connection: what is read goes to the
// handshake, or to the tls.Conn, whose records the Handler gets, one at
// a time.
func (l *loop) tlsReadable(c *LoopConn) {
	t := c.tls
	if t.stopped && t.state == tlsOpen {
		// What was read while reading was off.
		t.stopped = false
		ok := l.tlsRecords(c)
		t.unlend()
		if !ok || !l.sendAndCheck(c) {
			return
		}
	}
	read := 0
	for !c.closed && !c.closing && !c.waiting && !c.eof && !c.unread && !t.rawEOF && t.state != tlsFailed {
		if read >= l.budget {
			if !c.more {
				c.more = true
				l.more = append(l.more, c)
			}
			return
		}
		n, err := unix.Read(c.fd, l.buf)
		if err == unix.EINTR {
			continue
		}
		if n == 0 && err == nil {
			t.rawEOF = true
		}
		if n > 0 || t.rawEOF {
			read += n
			c.readAt = l.now
			if !l.tlsInput(c, l.buf[:max(n, 0)]) {
				return
			}
		}
		if err != nil && err != unix.EAGAIN {
			l.close(c, err)
			return
		}
		if err != nil || (n < len(l.buf) && !c.hup) {
			break // the socket is empty
		}
	}
	if c.closing && !c.closed && !c.waiting {
		l.close(c, c.closeErr)
	}
}

// tlsInput gives what was read to c's handshake or tls.Conn, and reports
// whether c may be read on.
func (l *loop) tlsInput(c *LoopConn, raw []byte) bool {
	t := c.tls
	if t.state == tlsHandshake {
		if !t.push(raw, t.rawEOF) {
			t.drop() // what it holds goes now
			l.close(c, fmt.Errorf("netio: TLS handshake input over %d bytes: %w", MaxHandshakeInput, ErrInputTooLarge))
			return false
		}
		return true
	}
	t.lend(raw, t.rawEOF)
	ok := l.tlsRecords(c)
	t.unlend()
	return ok && l.sendAndCheck(c)
}

// tlsRecords decrypts what c's tls.Conn has been given and hands it to
// the Handler, a record at a time. A record that fails ends TLS with a
// fatal alert, after which nothing more can be sealed: so what the
// Handler wrote before is sealed before the next record is read. It
// stops where reading stops (SetReading(false): stopped notes the
// records left for later), and reports false once c is closed.
func (l *loop) tlsRecords(c *LoopConn) bool {
	t := c.tls
	for !c.closed && !c.closing && !c.eof {
		if c.unread {
			t.stopped = true
			return true
		}
		l.sealOwed(c)
		if c.closing {
			break
		}
		if l.tl.record == nil {
			l.tl.record = make([]byte, maxRecord)
		}
		n, err := t.conn.Read(l.tl.record)
		if n > 0 && !l.tlsHandle(c, l.tl.record[:n]) {
			return false
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, errNotYet):
			return !c.closed
		case c.closed:
			return false
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			// close_notify, or the stream's end: the Handler's last call.
			c.eof = true
			return l.tlsHandle(c, nil)
		default:
			// A bad record (crypto/tls has sent its alert) or the peer's
			// alert.
			t.notified = true
			c.closing, c.closeErr = true, fmt.Errorf("%w: %w", ErrTLS, err)
			return true
		}
	}
	return !c.closed
}

// tlsHandle calls the Handler with p, plaintext, behind what it left
// unused before, and reports whether c is still served.
func (l *loop) tlsHandle(c *LoopConn, p []byte) bool {
	t := c.tls
	in, kept := p, len(t.plain) > 0
	if kept {
		t.plain = append(t.plain, p...)
		in = t.plain
	}
	used, ok := l.handle(c, in)
	if !ok {
		return false
	}
	rest := in[used:]
	if c.eof {
		rest = nil
	}
	if len(rest) > l.maxInput {
		l.send(c)
		l.close(c, ErrInputTooLarge)
		return false
	}
	switch {
	case len(rest) == 0:
		t.plain = t.plain[:0]
		if cap(t.plain) > keepInput {
			t.plain = nil
		}
	case kept:
		t.plain = t.plain[:copy(t.plain, rest)]
	default:
		t.plain = append(t.plain[:0], rest...)
	}
	return true
}

// seal seals the plaintext of the call's output, for c about to send it,
// and after a Close, close_notify.
func (l *loop) seal(c *LoopConn) {
	if l.tl.owner != c {
		l.tl.owner, l.tl.sealed = c, 0
	}
	if c.tls.state == tlsOpen {
		l.sealOwed(c)
		if t := c.tls; c.closing && !t.notified {
			t.notified = true
			t.conn.CloseWrite() // into l.out, behind the last replies
		}
	}
	l.tl.owner, l.tl.sealed = nil, 0 // l.out is sent now
}

// sealOwed seals what c wrote in the call since the last seal, in as
// few records as crypto/tls makes of it (one up to 16 KiB).
func (l *loop) sealOwed(c *LoopConn) {
	if l.tl.owner != c {
		l.tl.owner, l.tl.sealed = c, 0
	}
	if len(l.out) <= l.tl.sealed {
		return
	}
	l.tl.plain = append(l.tl.plain[:0], l.out[l.tl.sealed:]...)
	l.out = l.out[:l.tl.sealed]
	if _, err := c.tls.conn.Write(l.tl.plain); err != nil {
		c.tls.notified = true
		c.closing = true
		if c.closeErr == nil {
			c.closeErr = unsent(fmt.Errorf("%w: %w", ErrTLS, err))
		}
	}
	l.tl.sealed = len(l.out)
	if cap(l.tl.plain) > 4*maxRecord {
		l.tl.plain = nil
	}
}

// tlsGraceful reports whether err, closing c, ends its TLS in good order
// enough that what was sent (an alert behind the replies owed) should
// reach the peer.
func tlsGraceful(err error) bool {
	return errors.Is(err, ErrTLS) || errors.Is(err, ErrHandshake)
}

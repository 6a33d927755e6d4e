package netio

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"time"
)

// TLS on the loops, with the standard crypto/tls. A connection's
// tls.Conn runs over a tlsPipe, a net.Conn its loop feeds with what it
// reads. The handshake runs on a goroutine of its own (crypto/tls cannot
// resume a handshake that a read interrupted), whose reads wait for the
// loop's input and whose writes the loop sends. Once it is done the loop
// drives the tls.Conn itself: a read with no input left returns errNotYet,
// a temporary net.Error, after which crypto/tls keeps what it has of a
// record and reads on at the next call; the records it seals go to the
// loop's output.

var (
	// ErrHandshake is what OnHandshake learns, wrapping the cause, when a
	// TLS handshake fails: crypto/tls's error, a timeout's
	// (os.ErrDeadlineExceeded), or what closed the connection.
	ErrHandshake = errors.New("netio: TLS handshake failed")
	// ErrTLS is what OnClose learns, wrapping crypto/tls's error, for an
	// established TLS connection closed because a record failed (the
	// alert then sent follows the replies owed), the peer sent an alert,
	// or its stream ended inside a record (io.ErrUnexpectedEOF).
	ErrTLS = errors.New("netio: TLS failed")
	// ErrTLSActive is what StartTLS returns on a connection that already
	// uses TLS, and Detach on a TLS connection.
	ErrTLSActive = errors.New("netio: connection uses TLS")
	// ErrHandshaking is what Write returns during a TLS handshake.
	ErrHandshaking = errors.New("netio: TLS handshake in progress")
)

const (
	// MaxHandshakeInput bounds the input a connection's TLS handshake
	// holds unread: a client's flight is a few KiB, but crypto/tls takes a
	// client's certificate message of up to 256 KiB. While the handshake
	// holds that much, the connection is not read (the peer waits, as TCP
	// holds it back) until the handshake takes some or is over: a TLS 1.3
	// client may send data as soon as it has sent its Finished.
	MaxHandshakeInput = 512 << 10
	// maxRecord is the most plaintext a TLS record carries.
	maxRecord = 16 << 10
	// tlsMark is how much output the records of one read may queue
	// before it is sent: with one more record's echo, no more than a
	// plaintext Handler call's echo of one read (readSize).
	tlsMark = readSize - maxRecord
)

// StartTLS starts TLS on the connection with cfg (which must not be
// changed afterwards): as the server on an accepted connection, and as
// the client on one that Dial made, for the server cfg.ServerName names,
// or if that is empty the host of Dial's address, as crypto/tls's Dial
// takes it (a Unix socket has none: cfg then needs a ServerName or
// InsecureSkipVerify). A dialed connection's OnOpen may call it, for TLS
// from the start; Dial then returns during the handshake, and the first
// message goes in OnHandshake. The output written before it in this
// call is sent first, in the clear (an SMTP "220 Ready to start TLS"), and
// the input the Handler leaves unused in this call is thrown away, since
// what followed the upgrade command in the clear must not be taken for
// part of what comes over TLS (RFC 3207 §4.2).
//
// The handshake runs on a goroutine of its own for its duration, its
// input bounded by MaxHandshakeInput, its time by the connection's
// deadline if set (SetDeadline), else LoopOptions.HandshakeTimeout: a
// deadline removed during the handshake leaves it bounded by the latter.
// Meanwhile the Handler is not called and Write fails with
// ErrHandshaking. When it ends, LoopOptions.OnHandshake is told; once it
// succeeded the Handler gets plaintext, and what is written is sealed:
// the output of one call in one record, up to 16 KiB. A failed handshake
// closes the connection.
//
// Like Write, StartTLS may be called only on c's loop (ErrOutsideLoop);
// it fails with ErrTLSActive if c uses TLS already, with ErrClosed once
// c is closing (in OnTimeout too), and with os.ErrInvalid for a nil cfg.
func (c *LoopConn) StartTLS(cfg *tls.Config) error {
	if err := c.open(); err != nil {
		return err
	}
	if c.expired {
		return ErrClosed
	}
	if c.tls != nil {
		return ErrTLSActive
	}
	if cfg == nil {
		return fmt.Errorf("netio: StartTLS: nil tls.Config: %w", os.ErrInvalid)
	}
	c.in, c.inOff = c.in[:0], 0 // in the clear after the upgrade: dropped
	c.l.startTLS(c, cfg, false)
	return nil
}

// ConnectionState returns the state of c's TLS connection, and false if
// c does not use TLS or its handshake has not succeeded. Like Write, it
// may be called only on c's loop.
func (c *LoopConn) ConnectionState() (tls.ConnectionState, bool) {
	if c.tls == nil || c.tls.state != tlsOpen {
		return tls.ConnectionState{}, false
	}
	return c.tls.conn.ConnectionState(), true
}

type tlsState uint8

const (
	tlsHandshake tlsState = iota
	tlsOpen
	tlsFailed
)

// A tlsPipe is the net.Conn below a connection's tls.Conn.
type tlsPipe struct {
	c             *LoopConn
	conn          *tls.Conn
	local, remote net.Addr

	// The loop's.
	state    tlsState
	implicit bool   // LoopOptions.TLSConfig: OnOpen follows the handshake
	opened   bool   // OnOpen ran (or StartTLS): OnClose is told
	running  bool   // the handshake's goroutine has not reported
	released bool   // closed while it ran: the report ends the connection
	counted  bool   // then, counted by a Shutdown
	drain    bool   // a Shutdown passed it by during the handshake
	notified bool   // close_notify sent, or nothing can be sealed any more
	rawEOF   bool   // the peer ended the TCP stream
	stopped  bool   // records left unread while reading was off or output waited
	paused   bool   // in holds MaxHandshakeInput: not read until tlsRoom
	deadline int64  // the handshake's own deadline, if it set one
	bound    int64  // its start plus HandshakeTimeout, if that is positive
	closeErr error  // what closed it, while released
	plain    []byte // plaintext the Handler left unused

	mu     sync.Mutex
	cond   sync.Cond
	in     []byte // ciphertext read by the loop, not yet taken by conn
	eof    bool
	closed bool
	onLoop bool // the handshake is over: the loop drives conn
	wake   bool // the loop waits for room in in: Read tells it (tlsRoom)
}

// tlsLoop is a loop's TLS state: the output of the call in progress is
// l.out[:sealed] sealed, the rest plaintext, for the connection owner.
type tlsLoop struct {
	owner  *LoopConn
	sealed int
	plain  []byte // what is being sealed
	record []byte // what a read of a tls.Conn decrypts
}

// errNotYet is a tlsPipe's read with no input left, once the loop
// drives the tls.Conn: the loop reads on when more comes.
var errNotYet error = notYet{}

type notYet struct{}

func (notYet) Error() string   { return "netio: no TLS input yet" }
func (notYet) Timeout() bool   { return true }
func (notYet) Temporary() bool { return true }

func (t *tlsPipe) Read(p []byte) (int, error) {
	t.mu.Lock()
	for len(t.in) == 0 && !t.onLoop && !t.closed && !t.eof {
		t.cond.Wait()
	}
	if len(t.in) == 0 {
		defer t.mu.Unlock()
		switch {
		case t.closed:
			return 0, net.ErrClosed
		case t.eof:
			return 0, io.EOF
		}
		return 0, errNotYet
	}
	n := copy(p, t.in)
	if t.in = t.in[n:]; len(t.in) == 0 {
		t.in = nil
	}
	wake := t.wake && !t.onLoop
	t.wake = false
	t.mu.Unlock()
	if wake { // on the handshake's goroutine: the loop reads again
		c := t.c
		c.l.post(task{lf: func(l *loop) {
			if l != nil && c.tls == t {
				l.tlsRoom(c)
			}
		}})
	}
	return n, nil
}

// room is how much more the handshake may be given now. With none, the
// loop stops reading, and the handshake's next read tells it (tlsRoom).
func (t *tlsPipe) room() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := MaxHandshakeInput - len(t.in)
	if n <= 0 {
		t.wake = true
		return 0
	}
	return n
}

// push gives the handshake what the loop read, no more than room
// allowed, and returns how much it holds.
func (t *tlsPipe) push(in []byte, eof bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.in = append(t.in, in...)
	t.eof = t.eof || eof
	t.cond.Signal()
	return len(t.in)
}

// lend gives the tls.Conn, after the handshake, what the loop read
// without a copy; unlend lets go of it before the loop's buffer is
// reused, copying what was not read. (crypto/tls copies what it reads.)
func (t *tlsPipe) lend(in []byte, eof bool) {
	t.mu.Lock()
	if len(t.in) == 0 {
		t.in = in
	} else {
		t.in = append(t.in, in...)
	}
	t.eof = t.eof || eof
	t.mu.Unlock()
}

func (t *tlsPipe) unlend() {
	t.mu.Lock()
	if len(t.in) > 0 && !t.closed {
		t.in = bytes.Clone(t.in)
	} else {
		t.in = nil
	}
	t.mu.Unlock()
}

// Close ends the handshake's writes, and its reads once it has read what
// the loop gave it (a client that resets the connection right after its
// last flight has completed the handshake all the same).
func (t *tlsPipe) Close() error {
	t.mu.Lock()
	t.closed = true
	t.cond.Broadcast()
	t.mu.Unlock()
	return nil
}

func (t *tlsPipe) LocalAddr() net.Addr              { return t.local }
func (t *tlsPipe) RemoteAddr() net.Addr             { return t.remote }
func (t *tlsPipe) SetDeadline(time.Time) error      { return nil }
func (t *tlsPipe) SetReadDeadline(time.Time) error  { return nil }
func (t *tlsPipe) SetWriteDeadline(time.Time) error { return nil }

// The loops' part of TLS, the same for both implementations (the
// epoll one reads into it with tlsReadable, the portable one with
// tlsRead).

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

// startTLS starts c's handshake, on a goroutine: the client's on a
// connection Dial made, else the server's.
func (l *loop) startTLS(c *LoopConn, cfg *tls.Config, implicit bool) {
	t := &tlsPipe{c: c, local: c.LocalAddr(), remote: c.remote, implicit: implicit, opened: !implicit,
		running: true, eof: c.eof, rawEOF: c.eof, drain: implicit && l.draining}
	t.cond.L = &t.mu
	if c.dialed {
		if cfg.ServerName == "" && c.dialHost != "" {
			cfg = cfg.Clone() // as crypto/tls's Dial does
			cfg.ServerName = c.dialHost
		}
		t.conn = tls.Client(t, cfg)
	} else {
		t.conn = tls.Server(t, cfg)
	}
	c.tls = t
	if d := l.s.opt.HandshakeTimeout; d > 0 {
		t.bound = l.clock() + int64(d)
		if c.deadline == 0 {
			c.deadline, t.deadline = t.bound, t.bound
		}
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
	if c.closing {
		// Closed meanwhile but not yet released (it lingers): not served.
		// OnHandshake learns what the handshake came to; OnClose, if c
		// was opened, follows when the linger ends.
		herr := handshakeError(err, true, c.closeErr)
		t.state, t.notified = tlsFailed, true
		if herr == nil {
			t.state = tlsOpen
		}
		if f := l.s.opt.OnHandshake; f != nil {
			onClose(f, c, herr)
		}
		return
	}
	if err != nil {
		herr := handshakeError(err, false, nil)
		t.state, t.notified = tlsFailed, true
		c.markClosing()
		c.closeErr = herr
		if f := l.s.opt.OnHandshake; f != nil {
			l.callTimeout(c, f, herr)
		}
		l.out = l.out[:0]
		l.close(c, herr) // after the alert, which the loop has sent
		return
	}
	t.mu.Lock()
	t.onLoop, t.wake = true, false
	t.mu.Unlock()
	t.state = tlsOpen
	// The input held while the handshake was full goes to the Handler
	// first (tlsRecords), then the socket is read again: its events are
	// edge-triggered on epoll, none comes for what is already there.
	paused := t.paused
	t.paused = false
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
	// What came with the peer's last flight, and what the handshake held:
	// while output waits, the records are left for when it has gone.
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
	if paused {
		l.tlsResume(c)
	}
}

// tlsRoom reads c again, its handshake having taken some of the input
// that filled it.
func (l *loop) tlsRoom(c *LoopConn) {
	if t := c.tls; t.paused {
		t.paused = false
		c.readAt = l.now // reading resumes: idle counts from now
		l.schedule(c)
		l.tlsResume(c)
	}
}

// tlsHeld reports whether c is not read because its TLS handshake holds
// MaxHandshakeInput.
func (c *LoopConn) tlsHeld() bool { return c.tls != nil && c.tls.paused }

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

// tlsInput gives what was read to c's handshake or tls.Conn, and reports
// whether c may be read on.
func (l *loop) tlsInput(c *LoopConn, raw []byte) bool {
	t := c.tls
	if t.state == tlsHandshake {
		held := t.push(raw, t.rawEOF)
		if f := l.s.opt.handshakeHeld; f != nil {
			f(held)
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
// stops where reading stops (SetReading(false), or output waiting for
// room: stopped notes the records left for later), and reports false
// once c is closed.
//
// The replies of the records handed so far are sent once they reach
// tlsMark, and if the socket leaves some of them the records left wait
// until it has taken all (drain, writeDone): as on plaintext, a peer
// that does not read its replies is held back, not refused with
// ErrQueueFull because a read (or what its handshake held, up to
// MaxHandshakeInput) brought many records at once.
func (l *loop) tlsRecords(c *LoopConn) bool {
	t := c.tls
	for !c.closed && !c.closing && !c.eof {
		if c.unread || c.waiting {
			t.stopped = true
			return true
		}
		l.sealOwed(c)
		if c.closing {
			break
		}
		if len(l.out) >= tlsMark && !l.send(c) {
			if c.closed {
				return false
			}
			t.stopped = true
			return true
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
		case err == io.EOF:
			// close_notify, or the stream's end at a record's end (which
			// crypto/tls takes for an end): the Handler's last call.
			c.eof = true
			return l.tlsHandle(c, nil)
		default:
			// A bad record (crypto/tls has sent its alert), the peer's
			// alert, or the stream's end inside a record
			// (io.ErrUnexpectedEOF: what came is not all that was sent).
			t.notified = true
			c.markClosing()
			c.closeErr = fmt.Errorf("%w: %w", ErrTLS, err)
			return true
		}
	}
	return !c.closed
}

// tlsOffer hands the Handler, as reading resumes, the plaintext it left
// unused (whole commands it held back while it paused), even if no
// record comes, and reports whether c is still served.
func (l *loop) tlsOffer(c *LoopConn) bool {
	if !c.offer || c.closed || c.closing || c.eof || c.unread || c.waiting {
		return !c.closed // offered later if still due
	}
	c.offer = false
	if len(c.tls.plain) == 0 {
		return true
	}
	return l.tlsHandle(c, nil)
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
		// Its caller sends the output and closes c (c.closing).
		c.closeTooLarge()
		t.plain = t.plain[:0]
		return true
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
		c.markClosing()
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

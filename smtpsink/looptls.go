package smtpsink

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/wirespeed/wirespeed/netio"
)

// TLS on the loops engine. A session's tls.Conn runs over a loopTLS, a
// net.Conn the loop feeds with what it reads. The handshake runs on a
// goroutine of its own, whose reads wait for the loop's input and whose
// writes the loop sends (crypto/tls cannot resume a handshake that a read
// interrupted). Once it is done the loop drives the tls.Conn itself: a
// read with no input left returns errNotYet, a temporary net.Error, after
// which crypto/tls keeps what it has of a record and reads on at the next
// call; writes go to the connection at once.
type loopTLS struct {
	ls    *loopSession
	conn  *tls.Conn
	local net.Addr

	mu     sync.Mutex
	cond   sync.Cond
	in     []byte // ciphertext read by the loop, not yet taken by conn
	eof    bool   // the client ended its stream
	closed bool
	onLoop bool // the handshake is over: the loop drives conn
}

// errNotYet is loopTLS's read with no input left, once the loop drives
// the tls.Conn: the loop calls again when more comes.
var errNotYet error = notYet{}

type notYet struct{}

func (notYet) Error() string   { return "smtpsink: no TLS input yet" }
func (notYet) Timeout() bool   { return true }
func (notYet) Temporary() bool { return true }

// maxHandshakeInput bounds the ciphertext a session's handshake holds
// unread: a client's flight is a few KiB, but crypto/tls takes a
// certificate message (client authentication) of up to 256 KiB.
const maxHandshakeInput = 512 << 10

func (t *loopTLS) Read(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.in) == 0 && !t.onLoop && !t.closed && !t.eof {
		t.cond.Wait()
	}
	if len(t.in) == 0 {
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
	return n, nil
}

func (t *loopTLS) Write(p []byte) (int, error) {
	t.mu.Lock()
	onLoop, closed := t.onLoop, t.closed
	t.mu.Unlock()
	switch {
	case closed:
		return 0, net.ErrClosed
	case onLoop:
		return t.ls.c.Write(p) // on the loop
	}
	b := bytes.Clone(p)
	if err := t.ls.c.Do(func(c *netio.LoopConn) { c.Write(b) }); err != nil {
		return 0, err
	}
	return len(p), nil
}

// push gives the tls.Conn what the loop read; it reports false if a
// handshake would hold more than it may.
func (t *loopTLS) push(in []byte, eof bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.onLoop && len(t.in)+len(in) > maxHandshakeInput {
		return false
	}
	t.in = append(t.in, in...)
	t.eof = t.eof || eof
	t.cond.Signal()
	return true
}

// lend gives the tls.Conn, after the handshake, what the loop read
// without a copy: tlsInput reads it before the loop's call returns, and
// unlend then lets go of it. (crypto/tls copies what it reads.)
func (t *loopTLS) lend(in []byte, eof bool) {
	t.mu.Lock()
	if len(t.in) == 0 {
		t.in = in
	} else {
		t.in = append(t.in, in...) // kept by unlend: the session paused
	}
	t.eof = t.eof || eof
	t.mu.Unlock()
}

// unlend lets go of what lend gave: what tlsInput did not read (it
// stopped at a pause or a stall, and reading is off until then) is copied
// for later; after the end of the stream, a close_notify or a bad record,
// nothing is read again.
func (t *loopTLS) unlend(keep bool) {
	t.mu.Lock()
	if keep && len(t.in) > 0 {
		t.in = bytes.Clone(t.in)
	} else {
		t.in = nil
	}
	t.mu.Unlock()
}

// Close ends the handshake's reads and writes, if it is still going.
func (t *loopTLS) Close() error {
	t.mu.Lock()
	t.closed = true
	t.cond.Broadcast()
	t.mu.Unlock()
	return nil
}

func (t *loopTLS) LocalAddr() net.Addr              { return t.local }
func (t *loopTLS) RemoteAddr() net.Addr             { return t.ls.c.RemoteAddr() }
func (t *loopTLS) SetDeadline(time.Time) error      { return nil }
func (t *loopTLS) SetReadDeadline(time.Time) error  { return nil }
func (t *loopTLS) SetWriteDeadline(time.Time) error { return nil }

// startHandshake starts the server's side of the TLS handshake, after
// STARTTLS's 220 or at once with implicit TLS (then with what the client
// sent while the session waited for a slot, held); the session waits in
// modeHandshake, within Timeout (the command deadline), until it is done.
func (ls *loopSession) startHandshake(held []byte, implicit bool) {
	ss := ls.ss
	t := &loopTLS{ls: ls, in: held, local: ls.c.LocalAddr()}
	t.cond.L = &t.mu
	t.conn = tls.Server(t, ss.cfg.TLS)
	ls.tls, ls.implicit = t, implicit
	ls.mode = modeHandshake
	ls.dl.command()
	ls.arm() // the command deadline, also after a Delay's pause
	timeout := ss.cfg.Timeout
	go func() {
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if timeout > 0 {
			ctx, cancel = context.WithTimeout(ctx, timeout)
		}
		err := t.conn.HandshakeContext(ctx)
		cancel()
		if err == nil {
			// Counted here: the connection may be gone by the time the
			// loop runs handshakeDone.
			ls.ss.s.stats.tls.Add(1)
		}
		ls.c.Do(func(*netio.LoopConn) { ls.handshakeDone(err) })
	}()
}

// handshakeDone goes on with the session on the loop once its handshake
// is over: over TLS, knowing nothing of what came before it (RFC 3207
// §4.2), with implicit TLS from its greeting.
func (ls *loopSession) handshakeDone(err error) {
	if ls.mode != modeHandshake {
		return
	}
	if err != nil {
		ls.close()
		return
	}
	ss, s, t := ls.ss, ls.ss.s, ls.tls
	t.mu.Lock()
	t.onLoop = true
	t.mu.Unlock()
	if s.cfg.Trace != nil {
		st := t.conn.ConnectionState()
		ls.trace('=', []byte(tls.VersionName(st.Version)+" "+tls.CipherSuiteName(st.CipherSuite)))
	}
	ss.tls, ss.tlsConn = true, t.conn
	ss.clientCert = verifiedClient(t.conn.ConnectionState())
	ss.greeted, ss.esmtp, ss.authed, ss.authUser = false, false, false, ""
	ss.reset()
	ls.mode = modeCommand
	ls.dl.command()
	if ls.implicit {
		ls.run(func() bool { return ss.wait(s.k.connect.delay, ss.greet) })
		if ls.mode != modeCommand {
			return
		}
	}
	ls.tlsInput() // what came after the client's last flight
	ls.endCall()
}

// tlsInput decrypts what the loop has given the session's tls.Conn and
// serves it, a record at a time. A record that fails ends TLS with a
// fatal alert, after which nothing more can be sealed: so the replies owed
// to what came before it are sealed before the next record is read (they
// make one record per call all the same, when what the call read ended
// with the commands they answer). It stops where the session stops taking
// input (a pause, a stall); resume reads on.
func (ls *loopSession) tlsInput() {
	buf := tlsScratches.Get().(*[]byte)
	defer tlsScratches.Put(buf)
	for ls.reading() {
		if len(ls.w.tlsOut) > 0 && ls.w.sendTLS() {
			ls.close()
			return
		}
		n, err := ls.tls.conn.Read((*buf)[:cap(*buf)])
		if n > 0 {
			plain := (*buf)[:n]
			if ls.ss.cfg.Trace != nil {
				ls.trace('<', plain)
			}
			ls.input(plain)
		}
		if err != nil {
			var ny notYet
			if !errors.As(err, &ny) {
				// close_notify, the end of the stream, or a bad record:
				// the session ends once what came before is served.
				ls.eof = true
				ls.input(nil)
			}
			return
		}
	}
}

// reading reports whether the session takes input now.
func (ls *loopSession) reading() bool {
	switch ls.mode {
	case modeCommand, modeData, modeChunk, modeSkip:
		return true
	}
	return false
}

// tlsScratches hold what one read of a tls.Conn decrypts: a record's
// plaintext, at most 16 KiB.
var tlsScratches = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// closeTLS sends close_notify, once the handshake is done, and ends a
// handshake still going.
func (ls *loopSession) closeTLS() {
	t := ls.tls
	if t == nil {
		return
	}
	t.mu.Lock()
	onLoop := t.onLoop && !t.closed
	t.mu.Unlock()
	if onLoop {
		ls.w.sendTLS() // the last replies, then close_notify
		t.conn.CloseWrite()
	}
	t.Close()
}

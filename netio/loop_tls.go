package netio

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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
	// (os.ErrDeadlineExceeded), ErrInputTooLarge for a peer that sent
	// more than a handshake holds, or what closed the connection.
	ErrHandshake = errors.New("netio: TLS handshake failed")
	// ErrTLS is what OnClose learns, wrapping crypto/tls's error, for an
	// established TLS connection closed because a record failed (the
	// alert then sent follows the replies owed) or the peer sent an
	// alert.
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
	// client's certificate message of up to 256 KiB. A peer that sends
	// more before the handshake has read it is closed (ErrInputTooLarge).
	MaxHandshakeInput = 512 << 10
	// defaultHandshakeTimeout bounds a handshake without a deadline.
	defaultHandshakeTimeout = 10 * time.Second
	// maxRecord is the most plaintext a TLS record carries.
	maxRecord = 16 << 10
)

// StartTLS starts TLS on the connection, as the server, with cfg (which
// must not be changed afterwards): the output written before it in this
// call is sent first, in the clear (an SMTP "220 Ready to start TLS"), and
// the input the Handler leaves unused in this call is thrown away, since
// what followed the upgrade command in the clear must not be taken for
// part of what comes over TLS (RFC 3207 §4.2).
//
// The handshake runs on a goroutine of its own for its duration, its
// input bounded by MaxHandshakeInput, its time by the connection's
// deadline if set (SetDeadline), else LoopOptions.HandshakeTimeout.
// Meanwhile the Handler is not called and Write fails with
// ErrHandshaking. When it ends, LoopOptions.OnHandshake is told; once it
// succeeded the Handler gets plaintext, and what is written is sealed:
// the output of one call in one record, up to 16 KiB. A failed handshake
// closes the connection.
//
// Like Write, StartTLS may be called only on c's loop (ErrOutsideLoop);
// it fails with ErrTLSActive if c uses TLS already, and with
// os.ErrInvalid for a nil cfg.
func (c *LoopConn) StartTLS(cfg *tls.Config) error {
	if err := c.open(); err != nil {
		return err
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
	stopped  bool   // records left unread while reading was off
	deadline int64  // the handshake's own deadline, if it set one
	closeErr error  // what closed it, while released
	plain    []byte // plaintext the Handler left unused

	mu     sync.Mutex
	cond   sync.Cond
	in     []byte // ciphertext read by the loop, not yet taken by conn
	eof    bool
	closed bool
	onLoop bool // the handshake is over: the loop drives conn
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

// push gives the handshake what the loop read; it reports false if the
// handshake would hold more than it may.
func (t *tlsPipe) push(in []byte, eof bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.in)+len(in) > MaxHandshakeInput {
		return false
	}
	t.in = append(t.in, in...)
	t.eof = t.eof || eof
	t.cond.Signal()
	return true
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

// drop closes t, throwing away what it holds.
func (t *tlsPipe) drop() {
	t.mu.Lock()
	t.in = nil
	t.mu.Unlock()
	t.Close()
}

func (t *tlsPipe) LocalAddr() net.Addr              { return t.local }
func (t *tlsPipe) RemoteAddr() net.Addr             { return t.remote }
func (t *tlsPipe) SetDeadline(time.Time) error      { return nil }
func (t *tlsPipe) SetReadDeadline(time.Time) error  { return nil }
func (t *tlsPipe) SetWriteDeadline(time.Time) error { return nil }

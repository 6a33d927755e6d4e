package netio

import (
	"errors"
	"net"
)

// A Handler answers what a connection of a [Loops] server sent. It is
// called on the connection's event loop with the bytes read so far and
// not yet used, and returns how many of them it used: the rest is given
// to it again, in front of the next bytes read (a used outside 0 to
// len(in) panics). in is valid only during the call. What the Handler writes to c leaves, with everything else it
// wrote in the same call, in one write(2) after it returns.
//
// A Handler must not block: the loop serves its other connections only
// between calls.
type Handler func(c *LoopConn, in []byte) (used int)

// LoopOptions configure a [Loops] server. The zero value is usable.
type LoopOptions struct {
	// Loops is the number of event loops, each on its own locked OS
	// thread; 0 means GOMAXPROCS-1, at least 1. Loops run best with
	// GOMAXPROCS above Loops: with a processor to spare, the runtime
	// leaves a loop's processor alone while the loop waits in epoll_wait;
	// with none, it takes the processor back after 20 µs and returns it at
	// the wake-up, which made the server CPU per message vary up to 1.7x
	// from run to run at 10,000 connections (wirespeed serve sets
	// GOMAXPROCS to its loops plus one).
	Loops int
	// CPUs, if not empty, pins loop i to CPUs[i%len(CPUs)].
	CPUs []int
	// MaxQueued bounds the bytes a connection holds unsent; a Write past
	// it fails with ErrQueueFull. 0 means 1 MiB, as for a Writer.
	MaxQueued int
	// MaxInput bounds the bytes a Handler may leave unused; past it the
	// connection is closed with ErrInputTooLarge. 0 means 64 KiB.
	MaxInput int
	// OnOpen, if set, is called on the loop when a connection is added,
	// before its first Handler call.
	OnOpen func(c *LoopConn)
	// OnClose, if set, is called on the loop when a connection has been
	// closed: err is nil after the peer's end of stream or the
	// Handler's Close, ErrServerClosed when the server closed it, or what
	// went wrong.
	OnClose func(c *LoopConn, err error)
	// OnAcceptError, if set, learns of the errors accept(2) returned; the
	// server goes on accepting after a pause that doubles from 5 ms up to
	// 1 s while they last. nil ignores them.
	OnAcceptError func(err error)

	// sent, for tests, learns of every send of a Handler call's output:
	// its size and how much of it the socket took at once.
	sent func(out, written int)
}

var (
	// ErrInputTooLarge closes a connection whose Handler left more than
	// LoopOptions.MaxInput bytes unused.
	ErrInputTooLarge = errors.New("netio: unused input larger than MaxInput")
	// ErrServerClosed is what OnClose learns for the connections that
	// Loops.Close closed.
	ErrServerClosed = errors.New("netio: server closed")
)

// A LoopConn is a connection of a [Loops] server. Its methods other than
// Do may be called only on its loop: in the Handler, OnOpen, OnClose and
// functions run by Do.
type LoopConn struct {
	l      *loop
	fd     int
	idx    int32
	remote net.Addr
	value  any

	in      []byte // input the Handler left unused
	pending []byte // pending[off:]: output the socket has not taken
	off     int
	waiting bool // for room (EPOLLOUT): the connection is not read
	calling bool // in its Handler: Write appends to the loop's output
	closing bool // Close was called: close once the output is sent
	closed  bool
}

// RemoteAddr returns the peer's address.
func (c *LoopConn) RemoteAddr() net.Addr { return c.remote }

// Value returns what SetValue stored, or nil.
func (c *LoopConn) Value() any { return c.value }

// SetValue stores v with the connection, for the Handler's own state.
func (c *LoopConn) SetValue(v any) { c.value = v }

// Write queues p, to be sent with the rest of the Handler call's output
// when the call returns. It fails with ErrQueueFull, queueing nothing,
// if the connection would then hold more than LoopOptions.MaxQueued
// unsent bytes, and with ErrClosed outside a Handler call or after
// Close.
func (c *LoopConn) Write(p []byte) (int, error) { return loopWrite(c, p) }

// WriteString is Write for a string.
func (c *LoopConn) WriteString(s string) (int, error) { return loopWrite(c, s) }

func loopWrite[T []byte | string](c *LoopConn, p T) (int, error) {
	if !c.calling || c.closing {
		return 0, ErrClosed
	}
	l := c.l
	if len(l.out)+len(c.pending)-c.off+len(p) > l.maxQueued {
		return 0, ErrQueueFull
	}
	l.out = append(l.out, p...)
	return len(p), nil
}

// Do runs f on c's loop, as soon as the loop gets to it, where f may use c
// as a Handler does: what f writes leaves in one write(2) when it
// returns, behind the output queued before. Do may be called from any
// goroutine and does not wait for f; f does not run if c has been closed,
// or Close has been called, by then. It is how a Handler that hands a
// request to another goroutine answers it later.
func (c *LoopConn) Do(f func(c *LoopConn)) { c.l.post(c, f) }

// Close closes the connection once what the Handler wrote has been sent;
// nothing more is read from it. OnClose learns a nil error.
func (c *LoopConn) Close() error {
	if c.closed || c.closing {
		return ErrClosed
	}
	c.closing = true
	return nil
}

// Loops is a server whose connections are served by event loops, each a
// thread with its own epoll set, instead of a goroutine per connection.
// See [Serve].
type Loops struct {
	ln    *net.TCPListener
	h     Handler
	opt   LoopOptions
	loops []*loop
	sys   loopSys // the platform's part
}

// Serve serves the connections ln accepts with h, on opt.Loops event
// loops (Linux only; elsewhere it fails with errors.ErrUnsupported), until
// Close. If opt is nil, defaults apply. The listener is the server's from
// now on: do not call its Accept.
//
// A loop reads a readable connection into its own buffer, calls h, and
// writes what h wrote with one write(2): pipelined requests read together
// are answered together, and a waiting connection holds no buffer. A
// connection whose output the socket did not take all of is not read
// again until it has been sent, so a peer that does not read its
// responses stops being read, and a connection holds at most MaxQueued
// bytes of output and MaxInput of input. Nothing is allocated per
// message, except the output a full socket leaves waiting, and a
// function passed to Do.
func Serve(ln *net.TCPListener, h Handler, opt *LoopOptions) (*Loops, error) {
	s := &Loops{ln: ln, h: h}
	if opt != nil {
		s.opt = *opt
	}
	if s.opt.MaxQueued <= 0 {
		s.opt.MaxQueued = defaultMaxQueue
	}
	if s.opt.MaxInput <= 0 {
		s.opt.MaxInput = 64 << 10
	}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

// Addr returns the listener's address.
func (s *Loops) Addr() net.Addr { return s.ln.Addr() }

package netio

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
)

// LoopStats are the counts of a [Loops] server, as [Loops.Stats] returns
// them. Each count covers all the loops; the counts are read one after
// the other while the loops run, so that they need not add up exactly
// at any one moment (Open is read last).
type LoopStats struct {
	// Open is the connections being served now: accepted or dialed, and
	// not yet closed or detached. A connection closed while its output
	// lingers (see LoopConn.Close) counts until its socket is closed.
	Open int64 `json:"open"`
	// Accepted and Dialed are the connections the loops have served
	// since they started: accepted from a listener, or made by Dial.
	// DialErrors is the dials that failed (refused, timed out,
	// cancelled, or ended by Close).
	Accepted   int64 `json:"accepted"`
	Dialed     int64 `json:"dialed"`
	DialErrors int64 `json:"dial_errors"`
	// Closed is the connections closed so far, by cause.
	Closed LoopCloses `json:"closed"`
	// Detached is the connections Detach gave to a goroutine.
	Detached int64 `json:"detached"`
	// Queued is the bytes of output waiting for room in the sockets now
	// (what LoopConn.Queued counts, between calls), over all
	// connections.
	Queued int64 `json:"queued"`
}

// LoopCloses counts closed connections by the cause OnClose learns.
type LoopCloses struct {
	// Handler: closed by LoopConn.Close (nil or ErrUnsent) before the
	// peer ended its stream.
	Handler int64 `json:"handler"`
	// Peer: closed by LoopConn.Close once the peer had ended its stream
	// (an echo's Close at EOF), or because the peer reset the
	// connection or went away (ECONNRESET, EPIPE, ECONNABORTED,
	// ETIMEDOUT; on Plan 9, whose errors are strings, those count as
	// Error), or ended its stream during a TLS handshake (ErrHandshake
	// with io.EOF or io.ErrUnexpectedEOF) or inside a TLS record (ErrTLS
	// with io.ErrUnexpectedEOF).
	Peer int64 `json:"peer"`
	// Idle: ErrIdleTimeout; WriteTimeout: ErrWriteTimeout; Deadline: the
	// deadline SetDeadline set (os.ErrDeadlineExceeded); InputTooLarge:
	// ErrInputTooLarge. Each counts the reason the connection was
	// closed: one closed for MaxInput, or by the idle timeout or its
	// deadline, whose output then could not all be sent (the write
	// timeout, a failed write, the peer's reset: OnClose learns the
	// reason with that error and ErrUnsent) counts as InputTooLarge,
	// Idle or Deadline; one closed by Close whose output the write
	// timeout cut short, as WriteTimeout.
	Idle          int64 `json:"idle"`
	WriteTimeout  int64 `json:"write_timeout"`
	Deadline      int64 `json:"deadline"`
	InputTooLarge int64 `json:"input_too_large"`
	// Server: closed by Loops.Close, or by Shutdown once its context
	// ended (ErrServerClosed); a connection Shutdown closes in good
	// order counts as a Close's.
	Server int64 `json:"server"`
	// Error: everything else: a panic in a call on the loop (ErrPanic),
	// and errors of the system (a failed write or epoll_ctl, say).
	Error int64 `json:"error"`
}

// Total is the sum of the counts.
func (c LoopCloses) Total() int64 {
	return c.Handler + c.Peer + c.Idle + c.WriteTimeout + c.Deadline + c.InputTooLarge + c.Server + c.Error
}

// loopStats are a loop's counts: written by the loop only, read by Stats.
type loopStats struct {
	open, accepted, dialed, dialErrors, detached, queued       atomic.Int64
	handler, peer, idle, write, deadline, input, server, other atomic.Int64
}

// Stats returns the server's counts. It may be called from any goroutine,
// at any time (after Close, they are the final ones).
func (s *Loops) Stats() LoopStats {
	var st LoopStats
	for _, l := range s.loops {
		ls := &l.stats
		st.Accepted += ls.accepted.Load()
		st.Dialed += ls.dialed.Load()
		st.DialErrors += ls.dialErrors.Load()
		st.Detached += ls.detached.Load()
		st.Queued += ls.queued.Load()
		c := &st.Closed
		c.Handler += ls.handler.Load()
		c.Peer += ls.peer.Load()
		c.Idle += ls.idle.Load()
		c.WriteTimeout += ls.write.Load()
		c.Deadline += ls.deadline.Load()
		c.InputTooLarge += ls.input.Load()
		c.Server += ls.server.Load()
		c.Error += ls.other.Load()
	}
	for _, l := range s.loops {
		st.Open += l.stats.open.Load()
	}
	return st
}

// released counts a connection that leaves the loop with err, what
// OnClose learns; eof is whether its peer had ended its stream.
func (ls *loopStats) released(err error, eof bool) {
	ls.open.Add(-1)
	ls.cause(err, eof).Add(1)
}

func (ls *loopStats) cause(err error, eof bool) *atomic.Int64 {
	switch {
	case err == nil || err == ErrUnsent:
		if eof {
			return &ls.peer
		}
		return &ls.handler
	case errors.Is(err, ErrPanic):
		return &ls.other
	case errors.Is(err, ErrDetached):
		return &ls.detached
	case errors.Is(err, ErrServerClosed):
		return &ls.server
	// A connection closed for MaxInput or a timeout whose output the
	// write timeout (or a failed write) then cut short counts under the
	// reason it was closed, which err leads with (droppedErr).
	case errors.Is(err, ErrInputTooLarge):
		return &ls.input
	case errors.Is(err, ErrIdleTimeout):
		return &ls.idle
	case leads(err, os.ErrDeadlineExceeded):
		return &ls.deadline
	case errors.Is(err, ErrWriteTimeout):
		return &ls.write
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &ls.deadline
	case peerErr(err), handshakeEOF(err):
		return &ls.peer
	}
	return &ls.other
}

// leads reports whether err is target, or joins errors (fmt.Errorf's
// "%w: %w") the first of which leads with target.
func leads(err, target error) bool {
	for err != target {
		j, ok := err.(interface{ Unwrap() []error })
		if !ok {
			return false
		}
		errs := j.Unwrap()
		if len(errs) == 0 {
			return false
		}
		err = errs[0]
	}
	return true
}

// handshakeEOF reports whether err is a TLS handshake's failure, or a
// record's, because the peer ended its stream: a TCP probe that connects
// and closes, a client that gives up, as a reset is the peer's.
func handshakeEOF(err error) bool {
	return (errors.Is(err, ErrHandshake) || errors.Is(err, ErrTLS)) && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF))
}

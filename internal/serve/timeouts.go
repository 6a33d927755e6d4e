package serve

import (
	"crypto/tls"
	"errors"
	"net"
	"time"

	"github.com/wirespeed/wirespeed/netio"
)

// timeout resolves a Config timeout as netio.LoopOptions does: 0 means
// def, a negative value none (returned as 0).
func timeout(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// maxTimeout caps the std and netio-conn engines' timeouts, as netio's
// loops cap theirs: 2^62 ns, 146 years, is none the sooner for being cut
// there, and T+T/slackDiv cannot overflow (it did for a timeout near
// the largest Duration, which set a deadline in the past).
const maxTimeout = time.Duration(1 << 62)

// slackDiv sets how often the std and netio-conn engines move a deadline:
// a deadline set for a timeout T is set T+T/slackDiv ahead, and moved only
// by a read (or write) that comes T/slackDiv or more after it was set. So
// each read or write gets between T and T+T/slackDiv, and a busy
// connection pays for a clock reading per read and write but a deadline
// (a runtime timer's update) only every T/slackDiv.
const slackDiv = 4

// deadlines keeps a connection's read deadline (the idle timeout) and
// write deadline (the write timeout) for the std and netio-conn engines.
// beforeRead and beforeWrite may be called from two goroutines (-delay's
// reader and writer), one each.
type deadlines struct {
	c           net.Conn // the connection served
	raw         net.Conn // the one under c's TLS or netio.Conn layer, or c
	now         func() time.Time
	idle, write time.Duration // 0: none
	readSet     time.Time     // when the read deadline was last set
	writeSet    time.Time     // when the write deadline was last set
	failed      bool          // a writeOut failed
}

func newDeadlines(c, raw net.Conn, cfg *Config, h *hooks) *deadlines {
	d := &deadlines{c: c, raw: raw, now: time.Now,
		idle:  min(timeout(cfg.IdleTimeout, netio.DefaultIdleTimeout), maxTimeout),
		write: min(timeout(cfg.WriteTimeout, netio.DefaultWriteTimeout), maxTimeout)}
	if h.clock != nil {
		d.now = h.clock
	}
	return d
}

// beforeRead makes sure the read about to start fails if nothing comes
// for the idle timeout (between it and 1+1/slackDiv times it).
func (d *deadlines) beforeRead() {
	if d.idle <= 0 {
		return
	}
	// A zero readSet is long ago: Sub saturates.
	if t := d.now(); t.Sub(d.readSet) >= d.idle/slackDiv {
		d.readSet = t
		d.c.SetReadDeadline(t.Add(d.idle + d.idle/slackDiv)) // a closed c fails the read
	}
}

// beforeWrite makes sure the write about to start fails if it is not done
// within the write timeout (between it and 1+1/slackDiv times it).
func (d *deadlines) beforeWrite() {
	if d.write <= 0 {
		return
	}
	if t := d.now(); t.Sub(d.writeSet) >= d.write/slackDiv {
		d.writeSet = t
		d.c.SetWriteDeadline(t.Add(d.write + d.write/slackDiv))
	}
}

// writeOut writes p to the connection within the write timeout; a failure
// is recorded in failed.
func (d *deadlines) writeOut(p []byte) error {
	d.beforeWrite()
	_, err := d.c.Write(p)
	if err != nil {
		d.failed = true
	}
	return err
}

// handshake runs c's TLS handshake within netio.DefaultHandshakeTimeout
// (as the netio engine's LoopOptions.HandshakeTimeout bounds it), or the
// idle timeout if that is shorter, and reports whether it succeeded. It
// then clears the deadlines for beforeRead and beforeWrite to set.
func (d *deadlines) handshake(c *tls.Conn) bool {
	bound := netio.DefaultHandshakeTimeout
	if d.idle > 0 {
		bound = min(bound, d.idle)
	}
	c.SetDeadline(d.now().Add(bound))
	if c.Handshake() != nil {
		return false
	}
	return c.SetDeadline(time.Time{}) == nil
}

// A timeoutFlag sets a Config timeout from the command line, where the
// default is netio's (def) and 0 turns it off: it stores 0 for def and a
// negative value for 0, as Config takes them, so that only a value other
// than the default reaches a comparison engine, which refuses it.
type timeoutFlag struct {
	p   *time.Duration
	def time.Duration
}

func (f timeoutFlag) String() string {
	if f.p == nil { // the flag package's zero Value
		return "0s"
	}
	return timeout(*f.p, f.def).String()
}

func (f timeoutFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return errors.New("not a duration")
	case d < 0:
		return errors.New("negative (0 turns the timeout off)")
	case d == 0:
		*f.p = -1
	case d == f.def:
		*f.p = 0
	default:
		*f.p = d
	}
	return nil
}

// timeoutArg is the command-line value of a Config timeout d whose
// default is def.
func timeoutArg(d, def time.Duration) string { return timeout(d, def).String() }

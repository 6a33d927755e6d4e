package smtpsink

import "time"

// A deadline is a session's time limit for its input, kept without I/O or
// a clock of its own (the driver says what time it is), so that any
// driver can apply it: a goroutine setting its connection's read
// deadline, or an event loop's timer.
//
// A command line must arrive whole within timeout of the sink's starting
// to wait for it. Message data (DATA's, or a BDAT chunk's) must arrive at
// rate bytes a second on average: its deadline starts timeout ahead, each
// read of n bytes moves it on by n/rate, never to more than timeout ahead
// of that read (the scheme of Postfix's smtpd_min_data_rate, with a cap,
// so that a fast start buys no long silence later). A rate of 0 makes
// the data's deadline timeout after each read.
type deadline struct {
	timeout time.Duration // 0: none
	rate    int64         // bytes a second; 0: none
	at      time.Time     // the deadline, once armed
	armed   bool          // at is set for the current command or data
	data    bool          // reading message data
	credit  int           // data bytes read since the last beforeRead
}

// command starts the wait for a command line: the deadline is armed at
// the first read for it.
func (d *deadline) command() { d.armed, d.data, d.credit = false, false, 0 }

// startData starts a message's data (or a chunk's): the deadline is
// armed at its first read.
func (d *deadline) startData() { d.armed, d.data, d.credit = false, true, 0 }

// beforeRead arms the deadline if it is not yet, or moves it on for the
// data read since the last call (taking now for the time those bytes
// came: one clock reading per read), and returns it; ok is false if there
// is none, expired if it has passed.
func (d *deadline) beforeRead(now time.Time) (at time.Time, ok, expired bool) {
	if d.timeout <= 0 {
		return time.Time{}, false, false
	}
	switch {
	case !d.armed:
		d.at, d.armed = now.Add(d.timeout), true
	case d.credit > 0:
		limit := now.Add(d.timeout)
		if d.rate <= 0 {
			d.at = limit
		} else if d.at = d.at.Add(time.Duration(int64(d.credit) * int64(time.Second) / d.rate)); d.at.After(limit) {
			d.at = limit
		}
	}
	d.credit = 0
	return d.at, true, !now.Before(d.at)
}

// afterRead counts n bytes read.
func (d *deadline) afterRead(n int) {
	if d.data && n > 0 {
		d.credit += n
	}
}

// moveDeadline returns the deadline to set on a connection, whose
// deadline is setAt, for a wait that must end at at, and whether to set
// it. A command's is set as it is. Message data's moves on at each read:
// the connection gets it plus a 64th of the timeout, and a new one only
// once it has moved past that (or back), so that a stream of data costs
// a timer change every timeout/64, not one a read; the data's deadline is
// then kept up to timeout/64 late.
func moveDeadline(at, setAt time.Time, data bool, timeout time.Duration) (time.Time, bool) {
	if !data {
		return at, !at.Equal(setAt)
	}
	slack := timeout / 64
	if at.After(setAt) || at.Add(slack).Before(setAt) {
		return at.Add(slack), true
	}
	return setAt, false
}

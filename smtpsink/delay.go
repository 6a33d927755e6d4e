package smtpsink

import (
	"time"

	"github.com/wirespeed/wirespeed/internal/sleep"
)

// wait waits d and then returns then(), or false if the server closes
// first. On the loops engine the session pauses instead, and then runs on
// the loop once d has passed; wait returns true at once.
func (ss *session) wait(d time.Duration, then func() bool) bool {
	switch {
	case d <= 0:
	case ss.loop != nil:
		ss.loop.pause(d, then)
		return true
	case !ss.sleep(d):
		return false
	}
	return then()
}

// The last stretch of a wait goes to a sleep.Sleeper, which wakes on time
// (a Go timer fires up to a millisecond late in a quiet process, which a
// client measuring the wait would see), spinning for its last sleepSpin;
// before it, a timer that Close cuts short.
const (
	preciseWait = 20 * time.Millisecond
	sleepSpin   = 30 * time.Microsecond
)

// sleep waits d, or until the server closes (then it returns false).
func (ss *session) sleep(d time.Duration) bool { return ss.s.sleep(&ss.sleeper, d) }

// sleep waits d with the Sleeper *sl (made at the first wait), or until
// the server closes (then it returns false).
func (s *Server) sleep(sl **sleep.Sleeper, d time.Duration) bool {
	if s.h.sleep != nil {
		s.h.sleep(d)
		return true
	}
	until := time.Now().Add(d)
	if far := d - preciseWait; far > 0 {
		t := time.NewTimer(far)
		defer t.Stop()
		select {
		case <-t.C:
		case <-s.kill:
			return false
		}
	}
	if *sl == nil {
		*sl, _ = sleep.New(sleepSpin) // on failure, still a working Sleeper
	}
	(*sl).Until(until)
	select {
	case <-s.kill:
		return false
	default:
		return true
	}
}

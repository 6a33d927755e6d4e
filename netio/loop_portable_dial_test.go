//go:build unix && (!linux || netio_portable)

package netio

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestLoopsDialDialerDeadline: the portable Dial gives its net.Dialer
// DialTimeout's end as its Deadline, so that the Dialer shares the time
// out among a name's addresses, as it shares ctx's deadline (each tried
// in turn, with its share, until one connects); the loop cancelling the
// whole dial at DialTimeout left the first address all of it. With a
// fake Clock the Dialer has no Deadline: the loop's clock bounds the
// dial as a whole.
func TestLoopsDialDialerDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	for _, fake := range []bool{false, true} {
		var deadline time.Time
		opt := &LoopOptions{Loops: 1, DialTimeout: time.Hour}
		if fake {
			SetLoopClock(opt, newFakeClock().Now)
		}
		SetDialerHook(opt, func(d *net.Dialer) { deadline = d.Deadline })
		s := startLoops(t, echo, opt)
		before := time.Now()
		c, err := s.Dial(context.Background(), "tcp", ln.Addr().String())
		after := time.Now()
		if err != nil {
			t.Fatal(err)
		}
		c.Do(func(c *LoopConn) { c.Close() })
		switch {
		case fake && !deadline.IsZero():
			t.Errorf("with a fake clock, the Dialer's Deadline is %v, want none", deadline)
		case !fake && (deadline.Before(before.Add(time.Hour)) || deadline.After(after.Add(time.Hour))):
			t.Errorf("the Dialer's Deadline is %v, want DialTimeout (1h) after the Dial began (%v)", deadline, before)
		}
	}
}

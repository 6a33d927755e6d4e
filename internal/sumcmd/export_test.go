package sumcmd

import (
	"io"
	"time"
)

// Test hooks.

// fakeTerminals takes the writers in ttys for terminals, and draws the
// progress line from the start, every tick.
func fakeTerminals(tick time.Duration, ttys ...io.Writer) terminals {
	return terminals{is: func(w any) bool {
		for _, tty := range ttys {
			if w == any(tty) {
				return true
			}
		}
		return false
	}, tick: tick}
}

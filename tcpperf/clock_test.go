package tcpperf

import (
	"context"
	"sync"
	"time"

	"github.com/wirespeed/wirespeed/internal/sleep"
)

// fakeClock is a clock that moves only when told: when a pacer waits for an
// instant, it jumps there (so pacers are never late and a schedule runs as
// fast as the machine allows), and Advance moves it on, as a server that
// takes its time does. Timers from After fire when the clock passes them.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
	moved  func(now time.Time) // called after every move, without the lock
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
	} else {
		c.timers = append(c.timers, fakeTimer{c.now.Add(d), ch})
	}
	return ch
}

func (c *fakeClock) Waiter(time.Duration) sleep.Waiter { return c }

func (c *fakeClock) Until(_ context.Context, t time.Time) { c.moveTo(t) }

func (c *fakeClock) Close() error { return nil }

// Advance moves the clock on by d.
func (c *fakeClock) Advance(d time.Duration) { c.moveTo(c.Now().Add(d)) }

func (c *fakeClock) moveTo(t time.Time) {
	c.mu.Lock()
	if t.After(c.now) {
		c.now = t
	}
	now := c.now
	kept := c.timers[:0]
	for _, tm := range c.timers {
		if tm.at.After(now) {
			kept = append(kept, tm)
		} else {
			tm.ch <- now
		}
	}
	clear(c.timers[len(kept):])
	c.timers = kept
	moved := c.moved
	c.mu.Unlock()
	if moved != nil {
		moved(now)
	}
}

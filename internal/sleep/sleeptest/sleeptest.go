// Package sleeptest provides a fake sleep.Clock for deterministic tests of
// code that acts on a schedule.
package sleeptest

import (
	"context"
	"sync"
	"time"

	"github.com/wirespeed/wirespeed/internal/sleep"
)

// A Clock moves only when told: when a waiter waits for an instant, the
// clock jumps there (so waiters are never late and a schedule runs as fast
// as the machine allows), and Advance moves it on, as a server that takes
// its time does. Timers from After fire when the clock passes them.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
	// Moved, if set before the clock is used, is called after every move,
	// without the clock's lock held.
	Moved func(now time.Time)
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

// NewClock returns a Clock at a fixed instant.
func NewClock() *Clock { return &Clock{now: time.Unix(1_700_000_000, 0)} }

var _ sleep.Clock = (*Clock)(nil)

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After returns a channel that receives the time once the clock passes d
// from now.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.atLocked(c.now.Add(d))
}

// At returns a channel that receives the clock's time once it reaches t.
func (c *Clock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.atLocked(t)
}

func (c *Clock) atLocked(t time.Time) <-chan time.Time {
	ch := make(chan time.Time, 1)
	if !t.After(c.now) {
		ch <- c.now
	} else {
		c.timers = append(c.timers, fakeTimer{t, ch})
	}
	return ch
}

// Waiter returns the clock itself: its Until moves the clock.
func (c *Clock) Waiter(time.Duration) sleep.Waiter { return c }

// Until moves the clock to t, if it is not past it.
func (c *Clock) Until(_ context.Context, t time.Time) { c.moveTo(t) }

// Close does nothing.
func (c *Clock) Close() error { return nil }

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) { c.moveTo(c.Now().Add(d)) }

func (c *Clock) moveTo(t time.Time) {
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
	moved := c.Moved
	c.mu.Unlock()
	if moved != nil {
		moved(now)
	}
}

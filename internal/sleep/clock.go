package sleep

import (
	"context"
	"time"
)

// A Clock is the time source of code that acts on a schedule (tcpperf's
// pacers, smtpsource's sessions). [System] is the real one; tests pass a
// fake that moves only when told.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
	// At returns a channel that receives once the clock reaches t: a
	// deadline read as a duration from an earlier Now would come late
	// on a clock that moved in between (a fake one may then never get
	// there).
	At(t time.Time) <-chan time.Time
	// Waiter returns a waiter for one goroutine's schedule, spinning for
	// the last spin before each instant.
	Waiter(spin time.Duration) Waiter
}

// A Waiter waits for instants on one goroutine's schedule.
type Waiter interface {
	// Until returns at t, or soon after ctx is done.
	Until(ctx context.Context, t time.Time)
	Close() error
}

// System is the real clock, waiting with a [Sleeper].
type System struct{}

func (System) Now() time.Time                         { return time.Now() }
func (System) After(d time.Duration) <-chan time.Time { return time.After(d) }

func (System) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }

func (System) Waiter(spin time.Duration) Waiter {
	sl, _ := New(spin) // on failure New still returns a working Sleeper
	return systemWaiter{sl}
}

// maxNap bounds one sleep, so that a waiter notices cancellation.
const maxNap = 50 * time.Millisecond

type systemWaiter struct{ *Sleeper }

func (w systemWaiter) Until(ctx context.Context, t time.Time) {
	for time.Until(t) > maxNap {
		w.Sleeper.Until(time.Now().Add(maxNap))
		if ctx.Err() != nil {
			return
		}
	}
	w.Sleeper.Until(t)
}

package smtpsource

import (
	"context"
	"net"
	"time"

	"github.com/wirespeed/wirespeed/internal/sleep"
)

// env is what a run takes from its surroundings: the network and the
// clock. Run uses the real ones; the tests pass fakes (export_test.go).
type env struct {
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	clock clock
}

// A clock is a run's time source.
type clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
	// Sleeper returns a waiter for one session's open-loop schedule.
	Sleeper(spin time.Duration) sleeper
}

type sleeper interface {
	// Until returns at t, or soon after ctx is done.
	Until(ctx context.Context, t time.Time)
	Close() error
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func (realClock) Sleeper(spin time.Duration) sleeper {
	sl, _ := sleep.New(spin)
	return realSleeper{sl}
}

type realSleeper struct{ *sleep.Sleeper }

// maxNap bounds one sleep, so that a waiting session notices cancellation.
const maxNap = 50 * time.Millisecond

func (s realSleeper) Until(ctx context.Context, t time.Time) {
	for time.Until(t) > maxNap {
		s.Sleeper.Until(time.Now().Add(maxNap))
		if ctx.Err() != nil {
			return
		}
	}
	s.Sleeper.Until(t)
}

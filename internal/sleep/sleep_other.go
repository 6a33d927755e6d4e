//go:build !linux

package sleep

import "time"

// A Sleeper waits until an instant: it sleeps while the instant is more than
// Spin away and spins on the clock for the rest (Go timers alone wake up to
// about a millisecond late). On Linux it uses a timerfd and spins far less.
type Sleeper struct{ Spin time.Duration }

// New returns a Sleeper; spin is raised to the granularity of Go's
// timers on this system.
func New(spin time.Duration) (*Sleeper, error) {
	return &Sleeper{Spin: max(spin, coarseSpin)}, nil
}

// Until returns at t or just after it.
func (s *Sleeper) Until(t time.Time) {
	if d := time.Until(t) - s.Spin; d > 0 {
		time.Sleep(d)
	}
	for time.Now().Before(t) {
	}
}

// Close does nothing.
func (s *Sleeper) Close() error { return nil }

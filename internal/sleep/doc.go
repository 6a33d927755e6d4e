// Package sleep waits until an instant with microsecond precision, for load
// generators and delayed responders that must act on a schedule: it sleeps
// through the Go runtime while the instant is far and spins on the clock for
// the last stretch, so it never returns before the instant and rarely long
// after it.
package sleep

import "time"

// coarseSpin is the spin window where only Go timers are available: they wake
// up to about a millisecond late.
const coarseSpin = 2 * time.Millisecond

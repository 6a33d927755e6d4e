// Package tcpperfenv carries a test's clock into tcpperf.Run from outside
// package tcpperf: the tests of `wirespeed tcpperf` (internal/tcpperfcmd)
// run the command on a fake clock, so that what they check does not hang
// on how fast the machine is. It is internal, so tcpperf's public API has
// no clock: a program's runs are always on the system clock.
package tcpperfenv

import (
	"context"
	"time"

	"github.com/wirespeed/wirespeed/internal/sleep"
)

// Env is what a run takes from its surroundings in place of the real
// ones; zero fields are the real ones.
type Env struct {
	// Clock, if set, is the run's clock instead of the system's: a fake
	// one (sleeptest.Clock) makes the loops jump it to each send instead
	// of waiting, and moves only when told, so that a closed-loop run
	// ends when the test (its server) has moved it past the end.
	Clock sleep.Clock
	// DrainQuiet is how long a loop on a fake clock waits, in real time,
	// for a response while it drains before it takes the server for a
	// silent one and moves the clock to the drain's end (0: tcpperf's
	// default, a second). A test whose server always answers sets it long,
	// as a guard against a hang, so that a slow machine is not taken for
	// a silent server.
	DrainQuiet time.Duration
}

type key struct{}

// With returns ctx carrying e, for tcpperf.Run.
func With(ctx context.Context, e Env) context.Context {
	return context.WithValue(ctx, key{}, e)
}

// From returns the Env ctx carries (the zero Env if none).
func From(ctx context.Context) Env {
	e, _ := ctx.Value(key{}).(Env)
	return e
}

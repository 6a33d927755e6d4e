package tcpperf

import (
	"context"
	"net"
	"time"

	"github.com/wirespeed/wirespeed/internal/sleep"
	"github.com/wirespeed/wirespeed/netio"
)

// env is what a run takes from its surroundings: the network, the clock
// and the process's CPU time. Run uses the real ones (sleep.System,
// getrusage); the tests pass fakes (export_test.go).
type env struct {
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	clock sleep.Clock
	// realTime: clock is the system clock, so a loop waits for its next
	// send in epoll (a timerfd) and serves its sockets meanwhile. With a
	// fake clock a loop polls its sockets and then moves the clock on with
	// the clock's Waiter.
	realTime bool
	cpu      func() time.Duration // user + system time of the process
	// loopDial dials for EngineNetio; nil for the Loops' Dial.
	loopDial func(ctx context.Context, s *netio.Loops, network, addr string) (*netio.LoopConn, error)
	// drainQuiet replaces fakeDrainQuiet, if set (internal/tcpperfenv).
	drainQuiet time.Duration
	// yield lets the scheduler run (runtime.Gosched, or a test's count);
	// see yieldEvery.
	yield func()
}

// quiet is how long a loop on a fake clock waits, in real time, for a
// response while it drains: fakeDrainQuiet, unless the run was given
// another.
func (e *env) quiet() time.Duration {
	if e.drainQuiet > 0 {
		return e.drainQuiet
	}
	return fakeDrainQuiet
}

// fakeDrainQuiet is how long a loop on a fake clock waits, in real time,
// for a response while it drains before it moves the clock to the drain's
// end, unless the run was given another (env.drainQuiet). A test whose
// server answers gives a long one, a guard against a hang (100 ms took a
// loaded machine for a silent server, and a second is a window all the
// same); one whose server leaves messages unanswered takes this, so as
// not to wait long for nothing.
const fakeDrainQuiet = time.Second

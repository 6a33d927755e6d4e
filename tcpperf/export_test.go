package tcpperf

import (
	"context"
	"net"
	"runtime"
	"time"

	"github.com/wirespeed/wirespeed/internal/sleep"
	"github.com/wirespeed/wirespeed/netio"
)

// Exported for testing only.

// Env is what RunEnv takes from the test; nil fields are the real ones.
type Env struct {
	Dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	Clock sleep.Clock          // a fake clock makes the loops jump it instead of waiting
	CPU   func() time.Duration // the process's CPU time
	// LoopDial dials for EngineNetio (nil: the Loops' Dial).
	LoopDial func(ctx context.Context, s *netio.Loops, network, addr string) (*netio.LoopConn, error)
	// DrainQuiet is how long a loop draining on a fake clock waits, in
	// real time, for a response before it moves the clock to the drain's
	// end (0: testDrainQuiet). A test of a server that leaves messages
	// unanswered sets a short one (SilentQuiet).
	DrainQuiet time.Duration
	// Yield is called where a loop lets the scheduler run (nil:
	// runtime.Gosched).
	Yield func()
}

// testDrainQuiet is the tests' DrainQuiet: long, a guard against a hang,
// so that a server that answers, however slowly on a loaded machine, is
// never taken for a silent one.
const testDrainQuiet = time.Minute

// SilentQuiet is the DrainQuiet of the tests whose server leaves
// messages unanswered: the package's own, a second.
const SilentQuiet = fakeDrainQuiet

// RunEnv is Run in e.
func RunEnv(ctx context.Context, cfg Config, e Env) (*Result, error) {
	en := env{dial: e.Dial, clock: e.Clock, cpu: e.CPU, loopDial: e.LoopDial, drainQuiet: e.DrainQuiet, yield: e.Yield}
	if en.yield == nil {
		en.yield = runtime.Gosched
	}
	if en.drainQuiet == 0 {
		en.drainQuiet = testDrainQuiet
	}
	if en.dial == nil {
		var d net.Dialer
		en.dial = d.DialContext
	}
	if en.clock == nil {
		en.clock, en.realTime = sleep.System{}, true
	}
	if en.cpu == nil {
		en.cpu = processCPU
	}
	return runIn(ctx, cfg, en)
}

// RunWith is Run with dial (nil for net.Dialer's) and clk (nil for the
// system clock).
func RunWith(ctx context.Context, cfg Config, dial func(ctx context.Context, network, addr string) (net.Conn, error), clk sleep.Clock) (*Result, error) {
	return RunEnv(ctx, cfg, Env{Dial: dial, Clock: clk})
}

var (
	CheckFDLimit   = checkFDLimit
	CheckPorts     = checkPorts
	ParsePortRange = parsePortRange
)

package tcpperf

import (
	"context"
	"net"

	"github.com/wirespeed/wirespeed/internal/sleep"
)

// Exported for testing only.

// RunWith is Run with dial (nil for net.Dialer's) and clk (nil for the
// system clock).
func RunWith(ctx context.Context, cfg Config, dial func(ctx context.Context, network, addr string) (net.Conn, error), clk sleep.Clock) (*Result, error) {
	e := env{dial: dial, clock: clk}
	if e.dial == nil {
		var d net.Dialer
		e.dial = d.DialContext
	}
	if e.clock == nil {
		e.clock = sleep.System{}
	}
	return runIn(ctx, cfg, e)
}

var CheckFDLimit = checkFDLimit

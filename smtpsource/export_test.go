package smtpsource

import (
	"context"
	"net"
	"time"

	"github.com/wirespeed/wirespeed/internal/sleep"
)

// Exported for testing only.

// RunWith is Run with dial (nil for net.Dialer's) and clk (nil for the
// system clock).
func RunWith(ctx context.Context, cfg Config, dial func(ctx context.Context, network, addr string) (net.Conn, error), clk sleep.Clock) (*Result, error) {
	e := env{dial: dial, clock: clk}
	if e.clock == nil {
		e.clock = sleep.System{}
	}
	return runIn(ctx, cfg, e)
}

var (
	PatternBody = patternBody
	MakeBody    = makeBody
	CRLFLines   = crlfLines
	Network     = network
	Dialer      = dialer
)

// MessageDigest is the digest of message k of a run with cfg that started
// at start.
func MessageDigest(cfg Config, start time.Time, k int64) Digest {
	cfg.check()
	return newTemplate(&cfg, start).digest(k)
}

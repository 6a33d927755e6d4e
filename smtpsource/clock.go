package smtpsource

import (
	"context"
	"net"

	"github.com/wirespeed/wirespeed/internal/sleep"
)

// env is what a run takes from its surroundings: the network and the
// clock. Run uses the real ones (sleep.System); the tests pass fakes
// (export_test.go).
type env struct {
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	clock sleep.Clock
}

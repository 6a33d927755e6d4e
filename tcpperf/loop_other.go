//go:build !linux

package tcpperf

import (
	"context"
	"fmt"
)

// defaultEngine serves the connections unless Config.Engine says: off
// Linux, netio's loops (portable: Go's poller under them).
const defaultEngine = EngineNetio

// loopSys: tcpperf's own loops need epoll, so off Linux a loop is only
// what EngineNetio's loops share with them.
type loopSys struct{}

func newLoopSys() loopSys { return loopSys{} }

// startLoops fails: tcpperf's own loops need epoll.
func (r *run) startLoops(context.Context) (engine, error) {
	return engine{}, fmt.Errorf("%w: engine %s (use %s)", ErrUnsupported, EngineTcpperf, EngineNetio)
}

// tryPins does nothing: off Linux no loop is pinned (tcpperf's own loops
// do not run, and netio's portable ones refuse Config.CPUs).
func tryPins([]int) error { return nil }

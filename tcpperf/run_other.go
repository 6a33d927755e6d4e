//go:build !linux

package tcpperf

import "context"

// runIn fails: the event loops need epoll.
func runIn(ctx context.Context, cfg Config, env env) (*Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	return nil, ErrUnsupported
}

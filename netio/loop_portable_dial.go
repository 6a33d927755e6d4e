//go:build !linux || netio_portable

package netio

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
)

// dialing: the portable Serve dials on the caller's goroutine; a
// LoopConn is served once connected.
type dialing struct{}

// Dial is not there yet on the portable Serve.
func (s *Loops) Dial(ctx context.Context, network, address string) (*LoopConn, error) {
	return nil, fmt.Errorf("netio: Dial: %w", errors.ErrUnsupported)
}

func (l *loop) startTLS(c *LoopConn, cfg *tls.Config, implicit bool) {
	c.closing, c.closeErr = true, fmt.Errorf("%w: %w", ErrHandshake, errors.ErrUnsupported)
}

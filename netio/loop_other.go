//go:build !linux

package netio

import (
	"errors"
	"fmt"
)

// Event loops are Linux's (epoll) here.
type (
	loopSys struct{}
	loop    struct {
		out       []byte
		maxQueued int
	}
)

func (l *loop) post(*LoopConn, func(*LoopConn)) {}

func (s *Loops) start() error {
	return fmt.Errorf("netio: event loops: %w", errors.ErrUnsupported)
}

// Close closes the listener.
func (s *Loops) Close() error { return s.ln.Close() }

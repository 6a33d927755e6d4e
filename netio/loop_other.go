//go:build !linux

package netio

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"
)

// Event loops are Linux's (epoll) here.
type (
	loopSys struct{}
	loop    struct {
		s         *Loops
		id        int
		out       []byte
		maxQueued int
		maxDo     int
		stats     loopStats
	}
	dialing struct{}
)

var errNoLoops = fmt.Errorf("netio: event loops: %w", errors.ErrUnsupported)

func (l *loop) post(task) error                     { return errNoLoops }
func (l *loop) addTimer(*LoopTimer, time.Duration)  {}
func (l *loop) timerStopped()                       {}
func (l *loop) setDeadline(*LoopConn, time.Time)    {}
func (l *loop) resumeReading(*LoopConn)             {}
func (l *loop) localAddr(*LoopConn) net.Addr        { return nil }
func (l *loop) detach(*LoopConn) (net.Conn, error)  { return nil, errNoLoops }
func (s *Loops) start() error                       { return errNoLoops }
func (s *Loops) addListener(net.Listener) error     { return errNoLoops }
func (s *Loops) isClosed() bool                     { return true }
func (s *Loops) Shutdown(ctx context.Context) error { return nil }

// Close does nothing: there are no loops to close.
func (s *Loops) Close() error { return nil }

// Dial fails: there are no loops to dial on.
func (s *Loops) Dial(context.Context, string, string) (*LoopConn, error) { return nil, errNoLoops }

func (l *loop) startTLS(*LoopConn, *tls.Config, bool) {}

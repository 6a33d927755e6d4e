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
		out       []byte
		maxQueued int
		maxDo     int
	}
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
func (s *Loops) isClosed() bool                     { return true }
func (s *Loops) Shutdown(ctx context.Context) error { return s.ln.Close() }

// Close closes the listener.
func (s *Loops) Close() error { return s.ln.Close() }

func (l *loop) startTLS(*LoopConn, *tls.Config, bool) {}

//go:build unix

package smtpsink

import (
	"io"
	"net"
	"runtime"
	"syscall"
	"time"
)

// A spinner reads a TCP connection without letting the sink's thread go
// idle (Config.Spin): until its time is up it retries a non-blocking
// read, yielding to the other goroutines between tries, and then waits
// for input as net.Conn's Read does.
type spinner struct {
	rc      syscall.RawConn
	d       time.Duration   // Config.Spin, at most Config.Timeout
	kill    <-chan struct{} // the server's: closed when it closes
	onEmpty func()          // hooks.spinEmpty
	read    func(fd uintptr) bool
	p       []byte
	n       int
	err     error
	until   time.Time
}

// newSpinner returns the reader of c for s's sessions, or nil if c is not
// a TCP connection or s does not spin.
func newSpinner(c net.Conn, s *Server) io.Reader {
	tc, ok := c.(*net.TCPConn)
	if !ok || s.cfg.Spin <= 0 {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	d := s.cfg.Spin
	if t := s.cfg.Timeout; t > 0 && t < d {
		d = t // no spinning past the read deadline
	}
	return newSpinReader(rc, d, s.kill, s.h.spinEmpty)
}

func newSpinReader(rc syscall.RawConn, d time.Duration, kill <-chan struct{}, onEmpty func()) *spinner {
	s := &spinner{rc: rc, d: d, kill: kill, onEmpty: onEmpty}
	s.read = s.try // bound once, so that a Read does not allocate
	return s
}

// try reads what has arrived; it returns false (wait for input) once the
// spin is over.
func (s *spinner) try(fd uintptr) bool {
	for {
		n, err := syscall.Read(int(fd), s.p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			if s.onEmpty != nil {
				s.onEmpty()
			}
			select {
			case <-s.kill:
				s.n, s.err = 0, errClosing
				return true
			default:
			}
			if !time.Now().Before(s.until) {
				return false
			}
			runtime.Gosched()
			continue
		case err != nil:
			s.n, s.err = 0, err
		case n == 0 && len(s.p) > 0:
			s.n, s.err = 0, io.EOF
		default:
			s.n, s.err = n, nil
		}
		return true
	}
}

// Read reads into p as net.Conn's Read does, spinning first.
func (s *spinner) Read(p []byte) (int, error) {
	s.p, s.until = p, time.Now().Add(s.d)
	if err := s.rc.Read(s.read); err != nil {
		s.p = nil
		return 0, err
	}
	s.p = nil
	return s.n, s.err
}

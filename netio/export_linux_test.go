//go:build !netio_portable

package netio

import (
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Exported for testing only.

// Wake makes every loop of s go round once, reading its clock, as if
// something had arrived; it reports the loops that could not be woken.
func (s *Loops) Wake() (errs []error) {
	for _, l := range s.loops {
		if err := l.post(task{lf: func(*loop) {}}); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Sync waits until every loop of s has gone round once more after a
// post, so that it has looked at its clock and its timeouts since.
func (s *Loops) Sync() {
	for _, l := range s.loops {
		done := make(chan struct{})
		err := l.post(task{lf: func(l *loop) {
			if l == nil || l.post(task{lf: func(*loop) { close(done) }}) != nil {
				close(done)
			}
		}})
		if err != nil {
			close(done)
		}
		<-done
	}
}

// HandOff gives the connected socket of c (a duplicate of its descriptor)
// to the first loop of s, as an accepting loop hands over a connection
// it accepted, and reports whether the loop took it.
func (s *Loops) HandOff(c *net.TCPConn) error {
	f, err := c.File()
	if err != nil {
		return err
	}
	fd, err := unix.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		return err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return err
	}
	return s.loops[0].post(task{lf: func(l *loop) {
		if l != nil {
			l.add(fd, nil, false)
		}
	}})
}

// portableLoops: the Loops server is the portable one.
const portableLoops = false

// lingerSeesAcks: a close's linger ends once the peer has acknowledged
// the output (SIOCOUTQ).
const lingerSeesAcks = true

// FD is c's socket; only on c's loop (in a Handler, OnOpen or Do).
func (c *LoopConn) FD() int { return c.fd }

// QueuedTasks is how many tasks wait for the first loop of s.
func (s *Loops) QueuedTasks() int {
	l := s.loops[0]
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.tasks)
}

// TCPState is the TCP state of c's socket (TCP_INFO), or -1. Call it
// while c's loop is held in a call.
func TCPState(c *LoopConn) int {
	info, err := unix.GetsockoptTCPInfo(c.fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return -1
	}
	return int(info.State)
}

// SetResolveHook makes s's Dial take the addresses f gives for its
// network and address instead of resolving them. Call it before any
// Dial.
func (s *Loops) SetResolveHook(f func(network, address string) ([]syscall.Sockaddr, error)) {
	s.sys.resolve = f
}

// DialTimeouts are the times left, on their loops' clocks, to the
// connect(2)s of s's Dials that have a timeout.
func (s *Loops) DialTimeouts() []time.Duration {
	var ds []time.Duration
	for _, l := range s.loops {
		done := make(chan struct{})
		err := l.post(task{lf: func(l *loop) {
			defer close(done)
			if l == nil {
				return
			}
			for _, c := range l.conns {
				if c != nil && c.dial != nil && c.dial.at > 0 {
					ds = append(ds, time.Duration(c.dial.at-l.clock()))
				}
			}
		}})
		if err == nil {
			<-done
		}
	}
	return ds
}

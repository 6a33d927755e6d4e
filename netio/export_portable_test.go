//go:build !linux || netio_portable

package netio

import (
	"net"
	"runtime"
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
// post, so that it has looked at its clock and its timeouts since, and
// until the write timeouts it found are decided (their writes return).
func (s *Loops) Sync() {
	for _, l := range s.loops {
		done := make(chan struct{})
		err := l.post(task{lf: func(l *loop) {
			err := error(ErrServerClosed)
			if l != nil {
				err = l.post(task{lf: func(l *loop) {
					if l == nil || l.settling == 0 {
						close(done)
					} else {
						l.settled = append(l.settled, done)
					}
				}})
			}
			if err != nil {
				close(done)
			}
		}})
		if err != nil {
			close(done)
		}
		<-done
	}
}

// HandOff gives c (a duplicate of its socket where the system has one)
// to the first loop of s, as the accepting goroutine hands over a
// connection it accepted, and reports whether the loop took it.
func (s *Loops) HandOff(c *net.TCPConn) error {
	var nc net.Conn = c
	if f, err := c.File(); err == nil {
		nc, err = net.FileConn(f)
		f.Close()
		if err != nil {
			return err
		}
	}
	return s.loops[0].post(task{lf: func(l *loop) {
		if l != nil {
			l.add(nc, true, "")
		}
	}})
}

// portableLoops: the Loops server is the portable one.
const portableLoops = true

// lingerSeesAcks: a close's linger ends once the peer has acknowledged
// the output only where the system tells (SIOCOUTQ, Linux); elsewhere it
// waits for the peer's end of stream or the linger time.
const lingerSeesAcks = runtime.GOOS == "linux"

// SetNoDup makes the Loops server started with opt take its listeners as
// ones the system cannot duplicate (TCPListener.File fails, as on js and
// wasip1): it accepts from the listener itself.
func SetNoDup(opt *LoopOptions) { opt.noDup = true }

package sleep

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// A Sleeper waits until an instant with microsecond precision: a timerfd
// read through the Go netpoller wakes it shortly before the instant (other
// goroutines, such as response readers, run meanwhile), and it spins on the
// clock for the last Spin. time.Sleep, by contrast, wakes up to about a
// millisecond late when the process is otherwise idle.
type Sleeper struct {
	Spin time.Duration
	fd   int
	f    *os.File
	buf  [8]byte
}

// New returns a Sleeper that spins for the last spin before each
// instant. Close releases its timer.
func New(spin time.Duration) (*Sleeper, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &Sleeper{Spin: max(spin, coarseSpin)}, nil // fall back to time.Sleep
	}
	return &Sleeper{Spin: spin, fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}, nil
}

// Until returns at t or just after it.
func (s *Sleeper) Until(t time.Time) {
	for {
		d := time.Until(t) - s.Spin
		if d <= 0 {
			break
		}
		if s.f == nil {
			time.Sleep(d)
			continue
		}
		ts := unix.NsecToTimespec(int64(d))
		if err := unix.TimerfdSettime(s.fd, 0, &unix.ItimerSpec{Value: ts}, nil); err != nil {
			time.Sleep(d)
			continue
		}
		s.f.Read(s.buf[:]) // blocks in the netpoller until the timer fires
	}
	for time.Now().Before(t) {
	}
}

// Close releases the timer.
func (s *Sleeper) Close() error {
	if s.f != nil {
		return s.f.Close()
	}
	return nil
}

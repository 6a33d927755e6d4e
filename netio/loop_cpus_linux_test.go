package netio

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A CPU the system does not have is refused by both implementations,
// with an error matching os.ErrInvalid that names it: the epoll loops
// failed to pin to it with EINVAL, which os.ErrInvalid does not match,
// and the portable loops served as if it were a CPU.
func TestLoopsImpossibleCPU(t *testing.T) {
	if runtime.NumCPU() > 900 {
		t.Skip("CPU 999 may exist here")
	}
	for _, cpus := range [][]int{{999}, {firstCPU(t), 999}} {
		ln := listenTCP(t, nil)
		s, err := Serve(ln, echo, &LoopOptions{Loops: 2, CPUs: cpus})
		if err == nil {
			s.Close()
			t.Fatalf("CPUs %v: Serve served", cpus)
		}
		ln.Close()
		if !errors.Is(err, os.ErrInvalid) || !strings.Contains(err.Error(), "999") {
			t.Errorf("CPUs %v: Serve failed with %v, want os.ErrInvalid naming CPU 999", cpus, err)
		}
		if s, err := NewLoops(echo, &LoopOptions{Loops: 1, CPUs: cpus}); !errors.Is(err, os.ErrInvalid) {
			if s != nil {
				s.Close()
			}
			t.Errorf("CPUs %v: NewLoops failed with %v, want os.ErrInvalid", cpus, err)
		}
	}
	// A CPU this process runs on is one.
	s := startLoops(t, echo, &LoopOptions{Loops: 1, CPUs: []int{firstCPU(t)}})
	s.Close()
}

// firstCPU is the first CPU this process may run on.
func firstCPU(t *testing.T) int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	for cpu := range len(set) * 64 {
		if set.IsSet(cpu) {
			return cpu
		}
	}
	t.Fatal("this process may run on no CPU")
	return -1
}

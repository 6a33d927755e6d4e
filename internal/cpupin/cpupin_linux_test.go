package cpupin

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// allowed is the CPUs this process may run on, and one it may not (-1
// when it may run on every CPU a set holds).
func allowed(t *testing.T) (on []int, off int) {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	off = -1
	for cpu := range Max {
		if set.IsSet(cpu) {
			on = append(on, cpu)
		} else if off < 0 {
			off = cpu
		}
	}
	return on, off
}

func TestPin(t *testing.T) {
	on, off := allowed(t)
	if len(on) == 0 {
		t.Fatal("this process may run on no CPU")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		cpu := on[len(on)-1]
		if err := Pin(cpu); err != nil {
			t.Errorf("Pin(%d): %v", cpu, err)
			return
		}
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			t.Error(err)
			return
		}
		if set.Count() != 1 || !set.IsSet(cpu) {
			t.Errorf("after Pin(%d) the thread's CPUs are %d of them, CPU %d among them: %v", cpu, set.Count(), cpu, set.IsSet(cpu))
		}
	}()
	<-done

	bad := []int{-1, Max, Max + 5}
	if off >= 0 {
		bad = append(bad, off)
	}
	for _, cpu := range bad {
		i, err := Check([]int{on[0], cpu})
		if i != 1 || !errors.Is(err, os.ErrInvalid) || !strings.Contains(err.Error(), "CPU "+strconv.Itoa(cpu)) {
			t.Errorf("Check(%d, %d) = %d, %v; want 1 and os.ErrInvalid naming CPU %d", on[0], cpu, i, err, cpu)
		}
	}
	if i, err := Check(on); i != -1 || err != nil {
		t.Errorf("Check(%v) = %d, %v; want -1, nil", on, i, err)
	}
	if i, err := Check(nil); i != -1 || err != nil {
		t.Errorf("Check(nil) = %d, %v; want -1, nil", i, err)
	}
}

package cpupin

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Max is the number of CPUs a thread can be pinned to: CPUs 0 to Max-1,
// the bits of x/sys/unix's CPU set.
const Max = len(unix.CPUSet{}) * 64

// Pin pins the calling goroutine's thread to cpu. The goroutine must have
// locked its thread (runtime.LockOSThread) and should never unlock it: a
// thread whose affinity changed had better end with its goroutine than go
// back to the scheduler.
func Pin(cpu int) error {
	if cpu < 0 || cpu >= Max {
		return fmt.Errorf("CPU %d is not one a thread can be pinned to (0 to %d): %w", cpu, Max-1, os.ErrInvalid)
	}
	var set unix.CPUSet
	set.Set(cpu)
	switch err := unix.SchedSetaffinity(0, &set); err {
	case nil:
		return nil
	case unix.EINVAL:
		return fmt.Errorf("CPU %d is not one this process may run on (not online, or not in its cpuset): %w (sched_setaffinity: %w)", cpu, os.ErrInvalid, err)
	default:
		return fmt.Errorf("CPU %d: sched_setaffinity: %w", cpu, err)
	}
}

// Check pins a thread of its own to each of cpus in turn and reports the
// first that Pin refuses: its index in cpus and Pin's error. It reports
// -1 and nil when every one can be pinned to.
func Check(cpus []int) (int, error) {
	if len(cpus) == 0 {
		return -1, nil
	}
	type result struct {
		i   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		// Never unlocked: the thread, its affinity changed, ends with
		// the goroutine.
		runtime.LockOSThread()
		for i, cpu := range cpus {
			if err := Pin(cpu); err != nil {
				done <- result{i, err}
				return
			}
		}
		done <- result{-1, nil}
	}()
	r := <-done
	return r.i, r.err
}

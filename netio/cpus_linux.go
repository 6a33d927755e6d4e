package netio

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// checkPins pins a thread of its own to each of cpus in turn, as the
// epoll loops pin theirs, and reports the first that fails: a CPU the
// system does not have online, or one this process may not run on (a
// cpuset's), with os.ErrInvalid. So both implementations refuse the
// CPUs the epoll loops cannot be pinned to, before any loop starts.
func checkPins(cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the thread, its affinity changed, ends with
		// the goroutine instead of going back to the scheduler.
		runtime.LockOSThread()
		for i, cpu := range cpus {
			var set unix.CPUSet
			set.Set(cpu) // past the set's 1024 CPUs: none, which EINVAL refuses
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				if err == unix.EINVAL {
					errc <- fmt.Errorf("netio: Serve: CPUs[%d] is %d, a CPU this process cannot run on (not online, or not in its cpuset): %w (sched_setaffinity: %w)", i, cpu, os.ErrInvalid, err)
				} else {
					errc <- fmt.Errorf("netio: Serve: CPUs[%d] is %d: sched_setaffinity: %w", i, cpu, err)
				}
				return
			}
		}
		errc <- nil
	}()
	return <-errc
}

package netio

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/cpupin"
)

// checkPins pins a thread of its own to each of cpus in turn, as the
// epoll loops pin theirs, and reports the first that fails: a CPU the
// system does not have online, or one this process may not run on (a
// cpuset's), with os.ErrInvalid. So both implementations refuse the
// CPUs the epoll loops cannot be pinned to, before any loop starts.
func checkPins(cpus []int) error {
	if i, err := cpupin.Check(cpus); err != nil {
		return fmt.Errorf("netio: Serve: CPUs[%d]: %w", i, err)
	}
	return nil
}

//go:build unix

package bench

import (
	"os"
	"syscall"
)

// rusage is an ended process's peak RSS in KiB (as Linux reports it) and
// its voluntary context switches, where the system reports them.
func rusage(ps *os.ProcessState) (maxRSSKiB, waits int64, ok bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, false
	}
	return int64(ru.Maxrss), int64(ru.Nvcsw), true
}

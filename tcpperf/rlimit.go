package tcpperf

import "fmt"

// checkFDLimit reports whether a soft RLIMIT_NOFILE of soft (hard limit
// hard) leaves need file descriptors, and if not, how to raise it. It does
// not raise the limit itself: the Go runtime already raised the soft limit
// to the hard one at start-up, and a process that changes it changes what
// its child processes inherit.
func checkFDLimit(need, soft, hard uint64) error {
	switch {
	case soft >= need:
		return nil
	case hard < need:
		return fmt.Errorf("%w: need %d file descriptors, the hard limit is %d (raise it as root, e.g. ulimit -Hn %d, or use fewer -conns)", ErrFDLimit, need, hard, need)
	}
	return fmt.Errorf("%w: need %d file descriptors, the soft limit is %d (raise it with ulimit -n %d, or use fewer -conns)", ErrFDLimit, need, soft, need)
}

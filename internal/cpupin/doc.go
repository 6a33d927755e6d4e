// Package cpupin pins OS threads to CPUs, as netio's and tcpperf's event
// loops pin theirs, on Linux (the only system it builds anything for).
//
// A CPU a thread cannot be pinned to (not online, not in the process's
// cpuset, or past the Max CPUs a set holds) is refused with an error
// matching os.ErrInvalid that names it.
package cpupin

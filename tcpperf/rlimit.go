package tcpperf

import (
	"fmt"
	"strconv"
	"strings"
)

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
		return fmt.Errorf("%w: need %d file descriptors, the hard limit is %d (raise it as root, e.g. ulimit -Hn %d, or use fewer connections: Config.Conns, -conns)", ErrFDLimit, need, hard, need)
	}
	return fmt.Errorf("%w: need %d file descriptors, the soft limit is %d (raise it with ulimit -n %d, or use fewer connections: Config.Conns, -conns)", ErrFDLimit, need, soft, need)
}

// portRangeFile holds the ephemeral port range of outgoing connections.
const portRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// parsePortRange parses the contents of portRangeFile ("32768\t60999\n").
func parsePortRange(s string) (lo, hi int, err error) {
	f := strings.Fields(s)
	if len(f) == 2 {
		lo, err = strconv.Atoi(f[0])
		if err == nil {
			hi, err = strconv.Atoi(f[1])
		}
		if err == nil && lo <= hi {
			return lo, hi, nil
		}
	}
	return 0, 0, fmt.Errorf("tcpperf: %s: cannot parse %q", portRangeFile, s)
}

// checkPorts reports whether the ephemeral ports lo to hi leave one each
// for conns connections to one address (every connection to it needs its
// own local port, and ports of recently closed connections may still be in
// TIME_WAIT).
func checkPorts(conns, lo, hi int) error {
	if n := hi - lo + 1; conns > n {
		return fmt.Errorf("%w: %d connections to one address need as many local ports, the ephemeral range %d-%d has %d (widen it, e.g. sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\", or run from several client hosts)", ErrPorts, conns, lo, hi, n)
	}
	return nil
}

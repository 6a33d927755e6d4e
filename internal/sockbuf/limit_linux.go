package sockbuf

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Capped returns what a warning should say when the system gives a socket
// smaller buffers than size bytes (Linux caps SO_RCVBUF and SO_SNDBUF at
// net.core.rmem_max and wmem_max silently, for root too, and at MaxSize/2,
// which it doubles to keep for its bookkeeping), and "" when it does not
// or cannot be told.
func Capped(size int) string {
	rmax, rok := sysctl("rmem_max")
	wmax, wok := sysctl("wmem_max")
	if !rok || !wok {
		return ""
	}
	rmax, wmax = min(rmax, MaxSize/2), min(wmax, MaxSize/2)
	if size <= rmax && size <= wmax {
		return ""
	}
	return fmt.Sprintf("the system gives a socket at most %d bytes to receive and %d to send (net.core.rmem_max, wmem_max)", rmax, wmax)
}

// sysctl reads /proc/sys/net/core/name as a number.
func sysctl(name string) (int, bool) {
	b, err := os.ReadFile("/proc/sys/net/core/" + name)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, err == nil && n > 0
}

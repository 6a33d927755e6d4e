package smtpsinkcmd

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
)

// A -T the system caps (net.core.rmem_max) is used as capped, as Postfix's
// smtp-sink does, and said so on stderr: smaller buffers than asked for
// are otherwise silent.
func TestWindowCapped(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		t.Fatal(err)
	}
	rmax, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, size := range []int{8192, rmax + 1} {
		var stderr strings.Builder
		err := Run(done, []string{"-T", strconv.Itoa(size), "-addr", "127.0.0.1:0"}, &strings.Builder{}, &stderr)
		said := strings.Contains(stderr.String(), "-T "+strconv.Itoa(size)+": the system gives a socket at most")
		if err != nil || said != (size > rmax) {
			t.Errorf("-T %d (rmem_max %d): %v, stderr %q", size, rmax, err, stderr.String())
		}
	}
}

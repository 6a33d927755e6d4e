package smtpsinkcmd

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/sockbuf"
)

// A -T the system caps (net.core.rmem_max) is used as capped, as Postfix's
// smtp-sink does, and said so on stderr: smaller buffers than asked for
// are otherwise silent. (sockbuf's test checks Capped against the kernel.)
// A unix: address takes no -T, and no warning.
func TestWindowCapped(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		t.Fatal(err)
	}
	rmax, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	big := min(rmax+1, sockbuf.MaxSize)
	if sockbuf.Capped(big) == "" {
		t.Fatalf("-T %d is not capped (rmem_max %d)", big, rmax)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	unix := "unix:" + filepath.Join(t.TempDir(), "s")
	for _, c := range []struct {
		size int
		addr string
		warn bool
	}{{8192, "127.0.0.1:0", false}, {big, "127.0.0.1:0", true}, {big, unix, false}} {
		var stderr strings.Builder
		err := Run(done, []string{"-T", strconv.Itoa(c.size), "-addr", c.addr}, &strings.Builder{}, &stderr)
		said := strings.Contains(stderr.String(), "-T "+strconv.Itoa(c.size)+": the system gives a socket at most")
		if err != nil || said != c.warn {
			t.Errorf("-T %d -addr %s (rmem_max %d): %v, stderr %q", c.size, c.addr, rmax, err, stderr.String())
		}
	}
}

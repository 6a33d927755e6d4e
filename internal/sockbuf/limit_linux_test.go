package sockbuf

import (
	"strings"
	"syscall"
	"testing"
)

// Capped warns exactly when the kernel gives a socket less than it was
// asked for, to receive or to send (getsockopt reports twice what
// Linux gives).
func TestCapped(t *testing.T) {
	rmax, ok := sysctl("rmem_max")
	if !ok {
		t.Fatal("no net.core.rmem_max")
	}
	for _, size := range []int{rmax / 2, rmax, rmax + 1, 4 * rmax, MaxSize/2 + 1, MaxSize} {
		if size > MaxSize || size < 0 {
			continue // not a C int (a host whose rmem_max is near it)
		}
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		gave := size
		for _, opt := range []int{syscall.SO_RCVBUF, syscall.SO_SNDBUF} {
			if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, opt, size); err != nil {
				t.Fatal(err)
			}
			got, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, opt)
			if err != nil {
				t.Fatal(err)
			}
			gave = min(gave, got/2)
		}
		syscall.Close(fd)
		w := Capped(size)
		if capped := gave < size; capped != (w != "") || capped && !strings.Contains(w, "net.core.rmem_max") {
			t.Errorf("size %d: the kernel gave %d; Capped says %q", size, gave, w)
		}
	}
}

//go:build darwin || linux || openbsd

package netio

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

const haveRawWrite = true

// rawWrite is one non-blocking write of iov on fd, for flushFD. A full
// socket is not an error: it wrote 0, and the rest is the flusher's. One
// buffer, the usual case, goes with write(2) through unix.Syscall directly
// (unsafe for the buffer's address), which keeps the call chain one frame
// deep where syscall.Write adds two; several go with unix.Writev. The two
// frames push a connection's goroutine past its first 2 KiB of stack:
// BenchmarkConnStack reads about 8 KiB of stack per waiting connection
// with unix.Write here, and under 2 KiB with this.
func rawWrite(fd uintptr, iov [][]byte) (int, syscall.Errno) {
	for {
		var n int
		var errno syscall.Errno
		if len(iov) == 1 {
			r, _, e := unix.Syscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(iov[0]))), uintptr(len(iov[0])))
			n, errno = int(r), e
		} else {
			k, err := unix.Writev(int(fd), iov)
			n = k
			if err != nil {
				errno = err.(syscall.Errno)
			}
		}
		switch errno {
		case 0:
			return n, 0
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return 0, 0
		}
		return 0, errno
	}
}

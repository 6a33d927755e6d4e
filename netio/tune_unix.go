//go:build unix

package netio

import "syscall"

func setsockoptInt(fd uintptr, level, opt, v int) error {
	return syscall.SetsockoptInt(int(fd), level, opt, v)
}

func getsockoptInt(fd uintptr, level, opt int) (int, error) {
	return syscall.GetsockoptInt(int(fd), level, opt)
}

//go:build unix

package netio

import (
	"os"
	"syscall"
)

func setsockoptInt(fd uintptr, level, opt, v int) error {
	return syscall.SetsockoptInt(int(fd), level, opt, v)
}

func getsockoptInt(fd uintptr, level, opt int) (int, error) {
	return syscall.GetsockoptInt(int(fd), level, opt)
}

func isTCPSocket(fd uintptr) (bool, error) {
	typ, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TYPE)
	if err != nil {
		return false, os.NewSyscallError("getsockopt", err)
	}
	if typ != syscall.SOCK_STREAM {
		return false, nil
	}
	sa, err := syscall.Getsockname(int(fd))
	if err != nil {
		return false, os.NewSyscallError("getsockname", err)
	}
	switch sa.(type) {
	case *syscall.SockaddrInet4, *syscall.SockaddrInet6:
		return true, nil
	}
	return false, nil
}

//go:build darwin || linux || openbsd

package netio

import "golang.org/x/sys/unix"

const haveWritev = true

func writevNonblock(fd int, iov [][]byte) (int, error) { return unix.Writev(fd, iov) }

//go:build unix || windows

package unixsock

import "syscall"

// sunPath is the size of a socket address's path, its NUL included.
const sunPath = len(syscall.RawSockaddrUnix{}.Path)

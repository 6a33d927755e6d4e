//go:build unix && !(darwin || linux || openbsd)

package netio

import "syscall"

// haveRawWrite is false: Conn.Read sends the queue through the connection.
const haveRawWrite = false

func rawWrite(uintptr, [][]byte) (int, syscall.Errno) { return 0, syscall.ENOSYS }

package tcpperf

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rxTimeSpace is room for the control message of one receive timestamp.
var rxTimeSpace = unix.CmsgSpace(16)

// enableRxTime asks the kernel to time each packet fd receives (a
// software timestamp as the packet enters the stack), returned with
// recvmsg as a control message.
func enableRxTime(fd int) error {
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, 1)
}

// rxTime returns the receive time, in Unix nanoseconds, of the control
// messages oob of a recvmsg, if they hold one (SO_TIMESTAMPNS_NEW's
// struct __kernel_timespec: two 64-bit words on every architecture). A
// message whose length is below its header's or past the end of oob ends
// the search (ParseOneSocketControlMessage checks both).
func rxTime(oob []byte) (int64, bool) {
	for len(oob) >= unix.SizeofCmsghdr {
		h, data, rest, err := unix.ParseOneSocketControlMessage(oob)
		if err != nil {
			return 0, false
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPNS_NEW && len(data) >= 16 {
			sec, nsec := int64(binary.NativeEndian.Uint64(data)), int64(binary.NativeEndian.Uint64(data[8:]))
			if sec <= 0 {
				return 0, false
			}
			return sec*1e9 + nsec, true
		}
		oob = rest
	}
	return 0, false
}

// A timedRecv reads a socket with its control messages (recvmsg) and
// allocates nothing: unix.Recvmsg allocates a socket address on each call
// (about 110 bytes a read), which at 60,000 msg/s over 10,000 connections
// made the tool collect its garbage every second, with a mark of 3 to 6
// ms on the loop's core (GODEBUG=gctrace=1). The header and its one I/O
// vector live with the loop and are filled in for each call.
type timedRecv struct {
	msg unix.Msghdr
	iov unix.Iovec
}

// recv reads from fd into p, and the control messages into oob; both must
// be non-empty. It returns the bytes read and the length of the control
// messages; err is the call's errno.
//
// unsafe: the header's address is passed to the kernel, which reads and
// writes it (and the buffers it points to, which p and oob keep alive)
// only during the call; t lives in the loop.
func (t *timedRecv) recv(fd int, p, oob []byte) (n, oobn int, err error) {
	t.iov.Base = &p[0]
	t.iov.SetLen(len(p))
	t.msg.Iov = &t.iov
	t.msg.SetIovlen(1)
	t.msg.Control = &oob[0]
	t.msg.SetControllen(len(oob))
	r, _, errno := unix.Syscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&t.msg)), 0)
	if errno != 0 {
		return 0, 0, errno
	}
	return int(r), int(t.msg.Controllen), nil
}

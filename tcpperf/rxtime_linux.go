package tcpperf

import (
	"encoding/binary"

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

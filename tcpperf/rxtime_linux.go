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
// struct __kernel_timespec: two 64-bit words on every architecture).
func rxTime(oob []byte) (int64, bool) {
	hdr := unix.CmsgLen(0) // the header, aligned
	for len(oob) >= unix.SizeofCmsghdr {
		var n uint64
		var level, typ uint32
		if unix.SizeofCmsghdr == 16 { // size_t cmsg_len, int level, int type
			n, level, typ = binary.NativeEndian.Uint64(oob), binary.NativeEndian.Uint32(oob[8:]), binary.NativeEndian.Uint32(oob[12:])
		} else {
			n, level, typ = uint64(binary.NativeEndian.Uint32(oob)), binary.NativeEndian.Uint32(oob[4:]), binary.NativeEndian.Uint32(oob[8:])
		}
		if n < uint64(hdr) || n > uint64(len(oob)) {
			return 0, false
		}
		data := oob[hdr:n]
		if level == unix.SOL_SOCKET && typ == unix.SO_TIMESTAMPNS_NEW && len(data) >= 16 {
			sec, nsec := int64(binary.NativeEndian.Uint64(data)), int64(binary.NativeEndian.Uint64(data[8:]))
			if sec <= 0 {
				return 0, false
			}
			return sec*1e9 + nsec, true
		}
		oob = oob[min(unix.CmsgSpace(int(n)-hdr), len(oob)):]
	}
	return 0, false
}

package smtpsink

import (
	"net"
	"syscall"
)

// ackNow asks the kernel to acknowledge what c has received at once
// instead of after the delayed-ACK timer, and to leave its interactive
// ("pingpong") mode until the sink next replies (TCP_QUICKACK, tcp(7)).
// See connIO.Read. It is a hint: the caller may ignore its error.
func ackNow(c syscall.RawConn) error {
	var err error
	if cerr := c.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
	}); cerr != nil {
		return cerr
	}
	return err
}

// rawConn returns c's file descriptor access, if it is a TCP connection.
func rawConn(c net.Conn) syscall.RawConn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

package smtpsink

import (
	"net"
	"syscall"
)

// A quickAck sets TCP_QUICKACK (tcp(7)) on a connection: the kernel
// acknowledges what has arrived at once instead of after the delayed-ACK
// timer, until the sink next sends. See connIO.
type quickAck struct {
	rc  syscall.RawConn
	set func(fd uintptr) // made once, so that ack does not allocate
	err error
}

// newQuickAck returns nil if c is not a TCP connection.
func newQuickAck(c net.Conn) *quickAck {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	q := &quickAck{rc: rc}
	q.set = func(fd uintptr) { q.err = quickAckFD(fd) }
	return q
}

// The engines' defaults: the loops engine where netio's loops run.
const defaultEngine = EngineLoops

// setQuickAck sets TCP_QUICKACK on a connection of the loops engine; a
// failure is ignored, as ack's may be.
func setQuickAck(fd uintptr) { quickAckFD(fd) }

func quickAckFD(fd uintptr) error {
	return syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
}

// ack asks for the ACK now. It is a hint: the caller may ignore its
// error.
func (q *quickAck) ack() error {
	if err := q.rc.Control(q.set); err != nil {
		return err
	}
	return q.err
}

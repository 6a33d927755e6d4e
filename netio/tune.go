package netio

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// ErrNoSyscallConn is returned by SetNotSentLowat and GetSockOpts for a
// connection that does not expose its socket (it does not implement
// syscall.Conn).
var ErrNoSyscallConn = errors.New("netio: connection has no socket to tune")

// SockOpts are socket options as the kernel reports them: Linux reports
// twice the buffer sizes set. The net package sets the first three
// ((*net.TCPConn).SetNoDelay, SetWriteBuffer, SetReadBuffer) but cannot read
// them back. The TCP options are read only on a TCP socket: on another
// (a Unix socket), they are left zero.
type SockOpts struct {
	NoDelay      bool // TCP_NODELAY; false on a socket other than TCP
	SendBuffer   int  // SO_SNDBUF
	RecvBuffer   int  // SO_RCVBUF
	NotSentLowat int  // TCP_NOTSENT_LOWAT; 0 where unsupported or unset, or on a socket other than TCP
}

// SetNotSentLowat sets TCP_NOTSENT_LOWAT where the system has it (Linux):
// the socket reports writable only while less than bytes are unsent, which
// keeps queued data in the Writer, where backpressure sees it, instead of
// in the kernel. Elsewhere it returns an error matching
// errors.ErrUnsupported. A value the kernel's int cannot hold (beyond
// 32 bits) fails with an error matching syscall.EINVAL, rather than set
// what is left of it.
func SetNotSentLowat(c net.Conn, bytes int) error {
	if notSentLowat < 0 {
		return fmt.Errorf("netio: TCP_NOTSENT_LOWAT: %w", errors.ErrUnsupported)
	}
	if int64(bytes) != int64(int32(bytes)) {
		return fmt.Errorf("netio: setsockopt TCP_NOTSENT_LOWAT %d: %w", bytes, syscall.EINVAL)
	}
	return setInt(c, ipprotoTCP, notSentLowat, bytes, "TCP_NOTSENT_LOWAT")
}

// GetSockOpts reads the options of c's socket back from the kernel. A
// [Conn] is seen through to the connection it wraps. On a socket other
// than TCP (a Unix stream socket, say), it reads the buffer sizes and
// leaves the TCP options (NoDelay, NotSentLowat) zero, with no error.
func GetSockOpts(c net.Conn) (SockOpts, error) {
	var o SockOpts
	var nd int
	var err error
	read := func(level, opt int, dst *int) {
		if err == nil {
			*dst, err = getInt(c, level, opt)
		}
	}
	tcp, err := isTCP(c)
	if tcp {
		read(ipprotoTCP, tcpNodelay, &nd)
	}
	read(solSocket, soSndbuf, &o.SendBuffer)
	read(solSocket, soRcvbuf, &o.RecvBuffer)
	if tcp && notSentLowat >= 0 {
		read(ipprotoTCP, notSentLowat, &o.NotSentLowat)
	}
	o.NoDelay = nd != 0
	return o, err
}

// isTCP reports whether c's socket is a TCP one: a stream socket of the
// Internet families.
func isTCP(c net.Conn) (bool, error) {
	rc, err := rawConn(c)
	if err != nil {
		return false, err
	}
	var tcp bool
	var serr error
	if err := rc.Control(func(fd uintptr) { tcp, serr = isTCPSocket(fd) }); err != nil {
		return false, err
	}
	if serr != nil {
		return false, fmt.Errorf("netio: %w", serr)
	}
	return tcp, nil
}

func rawConn(c net.Conn) (syscall.RawConn, error) {
	if w, ok := c.(*Conn); ok {
		c = w.Conn
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, ErrNoSyscallConn
	}
	return sc.SyscallConn()
}

func setInt(c net.Conn, level, opt, v int, name string) error {
	rc, err := rawConn(c)
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = setsockoptInt(fd, level, opt, v) }); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("netio: setsockopt %s: %w", name, serr)
	}
	return nil
}

func getInt(c net.Conn, level, opt int) (int, error) {
	rc, err := rawConn(c)
	if err != nil {
		return 0, err
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) { v, gerr = getsockoptInt(fd, level, opt) }); err != nil {
		return 0, err
	}
	if gerr != nil {
		return 0, fmt.Errorf("netio: getsockopt: %w", gerr)
	}
	return v, nil
}

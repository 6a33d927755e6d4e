//go:build unix && (!linux || netio_portable)

package netio

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// initRaw readies cs's writes on its descriptor (descWrite), if its
// connection has one.
func initRaw(l *loop, cs *connSys) {
	sc, ok := cs.nc.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	cs.rc = rc
	cs.try = func(fd uintptr) bool {
		for cs.tn < len(cs.tp) {
			n, err := unix.Write(int(fd), cs.tp[cs.tn:])
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN || err == nil && n <= 0:
				return !cs.tall // no room: rc's Write waits for it, or not
			case err != nil:
				cs.terr = os.NewSyscallError("write", err)
				return true
			}
			cs.tn += n
			cs.wAt = l.clock()
		}
		return true
	}
}

// descWrite writes p with write(2) on cs's non-blocking descriptor: what
// the socket takes of it now, or with all, all of it, waiting for room.
// It records the time of each progress in cs.wAt. ok is false where cs
// has no descriptor.
func descWrite(cs *connSys, p []byte, all bool) (n int, err error, ok bool) {
	if cs.rc == nil {
		return 0, nil, false
	}
	cs.tp, cs.tn, cs.terr, cs.tall = p, 0, nil, all
	if err := cs.rc.Write(cs.try); err != nil {
		cs.terr = err // closed, or its deadline (an interruption)
	}
	n, err = cs.tn, cs.terr
	cs.tp, cs.tn, cs.terr = nil, 0, nil
	return n, err, true
}

// watchReset waits, without reading, until the peer of cs's connection
// resets it (SO_ERROR), and returns that error as readDone has a read's
// (sysErr: the error number), with reset true; or until the wait is
// interrupted (its read deadline, or the connection's close), returning
// why. Input and the peer's end of stream do not end it: they wait for a
// read. A connection closing when its reset is found lingers on to a
// clean end, as the epoll loops end a linger at a reset.
func watchReset(cs *connSys) (reset bool, err error) {
	var errno syscall.Errno
	err = cs.rc.Read(func(fd uintptr) bool {
		e, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ERROR)
		if err == nil && e != 0 {
			errno = syscall.Errno(e)
			return true
		}
		return false // wait for the next event
	})
	if errno != 0 {
		return true, errno
	}
	return false, err
}

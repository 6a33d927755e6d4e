package netio

import (
	"io"
	"io/fs"
	"net"
	"os"
	"reflect"
	"syscall"

	"golang.org/x/sys/unix"
)

// spliceStep bounds one step of a spliced ReadFrom: what the pipe between
// source and destination holds.
const spliceStep = 1 << 20

// spliceSteps copies r to w.dst for ReadFrom with splice(2), through a
// pipe of its own, in steps: a splice from the source into the pipe,
// then, as the step's write, from the pipe into the destination. Close
// stops it between two, as it stops a copy through a buffer; what the
// pipe holds then is dropped, as a buffer's read is. ok false (a
// destination or source splice does not take, or no pipe) leaves the
// copy, nothing read, to the buffer.
func (w *Writer) spliceSteps(r io.Reader) (total int64, ok bool, err error) {
	dst, ok := spliceDst(w.dst)
	if !ok {
		return 0, false, nil
	}
	lr, _ := r.(*io.LimitedReader)
	if lr != nil {
		r = lr.R
	}
	src := r
	rc, ok := spliceSource(r)
	if !ok {
		return 0, false, nil
	}
	wc, err := dst.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	var p [2]int
	if unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK) != nil {
		return 0, false, nil
	}
	pr, pw := p[0], p[1]
	defer unix.Close(pr)
	defer unix.Close(pw)
	step := spliceStep
	if n, err := unix.FcntlInt(uintptr(pw), unix.F_SETPIPE_SZ, spliceStep); err == nil {
		step = n
	} else if n, err := unix.FcntlInt(uintptr(pw), unix.F_GETPIPE_SZ, 0); err == nil {
		step = n
	} else {
		step = 64 << 10
	}
	for {
		want := step
		if lr != nil {
			if lr.N <= 0 {
				return total, true, nil
			}
			want = int(min(lr.N, int64(step)))
		}
		if w.copyStopped() {
			return total, true, nil
		}
		// The source's read, which may wait: Close does not wait for it.
		var nr int
		var serr error
		rerr := rc.Read(func(fd uintptr) bool {
			nr, serr = spliceRetry(int(fd), pw, want)
			return serr != unix.EAGAIN
		})
		if rerr == nil && serr != nil {
			if total == 0 && (serr == unix.EINVAL || serr == unix.ENOSYS) {
				return 0, false, nil // this source does not splice
			}
			rerr = os.NewSyscallError("splice", serr)
		}
		if rerr != nil {
			return total, true, readError(src, rerr)
		}
		if nr == 0 {
			return total, true, nil // end of the source
		}
		if lr != nil {
			lr.N -= int64(nr)
		}
		if !w.beginCopyWrite() {
			return total, true, nil
		}
		left, nw := nr, 0
		var werr error
		err := wc.Write(func(fd uintptr) bool {
			for left > 0 {
				n, e := spliceRetry(pr, int(fd), left)
				if e == unix.EAGAIN {
					return false
				}
				if e != nil || n == 0 {
					werr = io.ErrShortWrite // n == 0: no progress, no error
					if e != nil {
						werr = os.NewSyscallError("splice", e)
					}
					return true
				}
				left, nw = left-n, nw+n
			}
			return true
		})
		w.endCopyWrite(int64(nw))
		total += int64(nw)
		if w.spliceHook != nil {
			w.spliceHook(int64(nw))
		}
		if err == nil {
			err = werr
		}
		if err != nil {
			return total, true, writeError(dst, err)
		}
	}
}

// spliceRetry is one splice(2) of at most n bytes, not blocking on the
// pipe, retried if a signal interrupts it.
func spliceRetry(in, out, n int) (int, error) {
	for {
		k, err := unix.Splice(in, nil, out, nil, n, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
		if err != unix.EINTR {
			return int(k), err
		}
	}
}

// readError and writeError wrap a spliced step's error as the source's
// Read and the destination's Write wrap theirs (a *net.OpError, or a
// *fs.PathError for a file), so that ReadFrom's errors are of one kind
// whether it splices or not.
func readError(r io.Reader, err error) error {
	err = unwrapRaw(err)
	switch r := r.(type) {
	case interface{ Name() string }: // *os.File and os's wrapper of it
		return &fs.PathError{Op: "read", Path: r.Name(), Err: err}
	case interface {
		LocalAddr() net.Addr
		RemoteAddr() net.Addr
	}:
		return opError("read", r.LocalAddr(), r.RemoteAddr(), err)
	}
	return err
}

func writeError(c net.Conn, err error) error {
	if err == io.ErrShortWrite {
		return err
	}
	return opError("write", c.LocalAddr(), c.RemoteAddr(), unwrapRaw(err))
}

// unwrapRaw returns the error inside the *net.OpError ("raw-read",
// "raw-write") that a socket's RawConn wraps its errors in, so that it is
// not wrapped twice.
func unwrapRaw(err error) error {
	if oe, ok := err.(*net.OpError); ok && (oe.Op == "raw-read" || oe.Op == "raw-write") {
		return oe.Err
	}
	return err
}

func opError(op string, local, remote net.Addr, err error) error {
	e := &net.OpError{Op: op, Source: local, Addr: remote, Err: err}
	if local != nil {
		e.Net = local.Network()
	}
	return e
}

// spliceDst reports whether w.dst can be spliced to: a TCP connection or
// a Unix stream socket.
func spliceDst(x io.Writer) (interface {
	net.Conn
	syscall.Conn
}, bool) {
	switch c := x.(type) {
	case *net.TCPConn:
		return c, true
	case *net.UnixConn:
		a, ok := c.LocalAddr().(*net.UnixAddr)
		return c, ok && a.Net == "unix"
	}
	return nil, false
}

// spliceSource returns r's descriptor if it can be spliced from: a regular
// file (read from its offset), or a stream socket or pipe on Go's poller
// (not blocking: a read that must wait waits there). r is a type of
// package net or os: a *net.TCPConn, *net.UnixConn or *os.File, or the
// wrappers of them, hiding their WriteTo, that io.Copy is handed by those
// WriteTo methods. Another type that has a descriptor (syscall.Conn) may
// read it its own way (one that embeds a *net.TCPConn, and reads through
// a bufio.Reader, say): it is read with its Read.
func spliceSource(r io.Reader) (syscall.RawConn, bool) {
	t := reflect.TypeOf(r)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if p := t.PkgPath(); p != "net" && p != "os" {
		return nil, false
	}
	sc, ok := r.(syscall.Conn)
	if !ok {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, false
	}
	ok = false
	err = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) != nil {
			return
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			ok = true
			return
		case unix.S_IFSOCK:
			if t, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TYPE); err != nil || t != unix.SOCK_STREAM {
				return
			}
		case unix.S_IFIFO:
		default:
			return
		}
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		ok = err == nil && fl&unix.O_NONBLOCK != 0
	})
	return rc, err == nil && ok
}

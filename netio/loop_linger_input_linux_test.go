package netio

import (
	"errors"
	"io"
	"net"
	"runtime"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// rcvbufListener listens on loopback with a receive buffer of 4 MiB,
// which the connections it accepts inherit, so that megabytes of input
// can wait in a server's socket; it skips the test where the system
// allows less.
func rcvbufListener(t *testing.T) net.Listener {
	t.Helper()
	var serr error
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		err := rc.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
		})
		return errors.Join(err, serr)
	}}
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var size int
	rc, _ := ln.(*net.TCPListener).SyscallConn()
	rc.Control(func(fd uintptr) { size, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF) })
	if err != nil || size < 8<<20 {
		ln.Close()
		t.Skipf("a receive buffer of %d bytes (%v): net.core.rmem_max is below 4 MiB", size, err)
	}
	return ln
}

// closeOverInput: the server replies, the peer reads the reply (its
// socket acknowledges it) and then sends size bytes, all of which wait in
// the server's socket when a Do closes the connection. The close throws
// the input away and ends the linger at once, as the peer has all of
// the output: OnClose learns nil before the loop's clock (fake, never
// advanced) moves, and the peer reads the end of the stream, its socket
// not reset (CLOSE_WAIT). With now, OnClose has learned it once the loop
// has gone round twice after the close; else the close may take more
// turns, each throwing a bounded part of the input away.
func closeOverInput(t *testing.T, size int, now bool) {
	ln := rcvbufListener(t)
	held := make(chan *LoopConn, 1)
	h := func(c *LoopConn, in []byte) int {
		c.Write([]byte("reply"))
		held <- c
		return len(in)
	}
	closed := make(chan error, 1)
	opt := &LoopOptions{Loops: 1, OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetLoopClock(opt, newFakeClock().Now)
	s, err := Serve(ln, h, opt)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("a"))
	lc := <-held
	reply := make([]byte, 5)
	if _, err := io.ReadFull(c, reply); err != nil || string(reply) != "reply" {
		t.Fatalf("reply: %q, %v", reply, err)
	}
	running, sent, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	if err := lc.Do(func(lc *LoopConn) {
		close(running)
		<-sent
		// The loop is here: the input waits in the socket (but what
		// the portable engine's reading goroutine took, a read's worth).
		// Hold until it is there and the peer has acknowledged the reply.
		fd := lc.FD()
		for {
			in, err1 := unix.IoctlGetInt(fd, unix.SIOCINQ)
			out, err2 := unix.IoctlGetInt(fd, unix.SIOCOUTQ)
			if err1 != nil || err2 != nil {
				panic(errors.Join(err1, err2))
			}
			if in >= size-readSize && out == 0 {
				break
			}
			runtime.Gosched()
		}
		lc.Close()
		close(done)
	}); err != nil {
		t.Fatal(err)
	}
	<-running
	if _, err := c.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	close(sent)
	<-done
	if now {
		s.Sync()
		select {
		case err := <-closed:
			if err != nil {
				t.Fatalf("OnClose learned %v, want nil", err)
			}
		default:
			t.Fatal("the connection still lingers: the peer has all of the output, its input waited in the socket")
		}
	} else if err := <-closed; err != nil {
		t.Fatalf("OnClose learned %v, want nil", err)
	}
	got, err := io.ReadAll(c)
	if err != nil || len(got) != 0 {
		t.Fatalf("the peer read %q, %v; want the end of the stream", got, err)
	}
	wantNotReset(t, c.(*net.TCPConn))
	if st := s.Stats(); st.Open != 0 || st.Closed.Handler != 1 {
		t.Fatalf("Stats: %+v, want none open, one closed by the Handler", st)
	}
}

// TestLoopsCloseInputWaitingAcked: a close with input waiting in the
// socket, the peer having acknowledged all of the output, reads the input
// and ends at once with nil on both engines; the portable engine waited
// for the linger time (ErrUnsent) while input was in the socket.
func TestLoopsCloseInputWaitingAcked(t *testing.T) { closeOverInput(t, 256<<10, true) }

// TestLoopsCloseInputOverDiscardBound: a close with more input waiting
// than a turn throws away (1 MiB on epoll), the peer having acknowledged
// all of the output, reads all of it, over several turns, before it
// closes: the epoll engine closed over the input left, resetting the
// connection.
func TestLoopsCloseInputOverDiscardBound(t *testing.T) { closeOverInput(t, 5<<19, false) }

//go:build unix

package netio

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"syscall"
	"testing"
	"time"
)

// A connection closed for MaxInput lingers as a Handler's Close does: the
// replies its Handler wrote before are sent, then the end of the stream,
// not a reset. It closed at once, its input unread, which reset it and
// dropped the replies the peer had not read (it read "connection reset
// by peer"; `wirespeed serve -engine netio -mode line -tls` so ended a
// client's too long line).
func TestLoopsMaxInputLingers(t *testing.T) {
	closed := make(chan error, 1)
	replied := false
	h := func(c *LoopConn, in []byte) int {
		if !replied {
			replied = true
			c.Write([]byte("reply\n"))
		}
		return 0
	}
	s := startLoops(t, h, &LoopOptions{MaxInput: 100, OnClose: func(c *LoopConn, err error) { closed <- err }})
	c := dial(t, s)
	go func() {
		c.Write([]byte("x"))
		c.Write(bytes.Repeat([]byte("y"), 1<<20)) // past MaxInput, more than the loop reads
		c.CloseWrite()
	}()
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "reply\n" {
		t.Fatalf("read %q, %v; want the reply and the end of the stream", got, err)
	}
	if err := <-closed; !errors.Is(err, ErrInputTooLarge) {
		t.Fatalf("OnClose learned %v, want ErrInputTooLarge", err)
	}
}

// maxInputReply is what the Handlers of the tests below write in the call
// that leaves more than MaxInput unused: more than the sockets of
// serveOn(listenTCP(SO_SNDBUF 16 KiB)) and dialSmallWindow hold, so that
// most of it waits for room when the loop closes the connection.
var maxInputReply = bytes.Repeat([]byte("500 line too long\r\n"), 1<<16)

// maxInputServer serves a Handler that answers input past MaxInput (100)
// with maxInputReply, in the call that leaves it unused; waited learns
// whether the socket left some of the reply waiting for room.
func maxInputServer(t *testing.T, opt *LoopOptions, closed chan<- error) (s *Loops, waited <-chan bool) {
	w := make(chan bool, 1)
	h := func(c *LoopConn, in []byte) int {
		if len(in) > 100 {
			c.Write(maxInputReply)
		}
		return 0
	}
	opt.MaxInput, opt.MaxQueued = 100, 64<<20
	opt.OnClose = func(c *LoopConn, err error) { closed <- err }
	SetSentHook(opt, func(out, written int) {
		if out >= len(maxInputReply) { // sealed, with TLS
			select {
			case w <- written < out:
			default:
			}
		}
	})
	return serveOn(t, listenTCP(t, map[int]int{syscall.SO_SNDBUF: 16 << 10}), h, opt), w
}

// Output still waiting for room in the socket when MaxInput closes the
// connection is sent before the close, as a Close's is: the peer reads
// all of it (an error reply, say), then the end of the stream, and
// OnClose learns ErrInputTooLarge alone. The loop dropped it: the peer
// read the first few KiB of the reply, and OnClose learned ErrUnsent.
func TestLoopsMaxInputSendsWaiting(t *testing.T) {
	closed := make(chan error, 1)
	s, waited := maxInputServer(t, &LoopOptions{}, closed)
	c := dialSmallWindow(t, s)
	go func() {
		c.Write(bytes.Repeat([]byte("y"), 1<<20)) // a line that never ends
		c.CloseWrite()
	}()
	if !<-waited { // the peer reads nothing until then
		t.Fatal("the socket took all of the reply at once: nothing waited for room")
	}
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
	got, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(got, maxInputReply) {
		t.Fatalf("read %d bytes of the %d-byte reply, %v; want all of it and the end of the stream", len(got), len(maxInputReply), err)
	}
	if err := <-closed; !errors.Is(err, ErrInputTooLarge) || errors.Is(err, ErrUnsent) {
		t.Fatalf("OnClose learned %v, want ErrInputTooLarge without ErrUnsent", err)
	}
}

// A peer that reads none of the output waiting when MaxInput closes the
// connection holds it until the write timeout, as a Close's: then
// OnClose learns ErrUnsent with ErrInputTooLarge (and ErrWriteTimeout);
// a peer's reset ends the wait at once, with ErrUnsent too.
// The loop closed at once, and dropped the output a peer slow to read
// would have read.
func TestLoopsMaxInputUnsent(t *testing.T) {
	clk := newFakeClock()
	closed := make(chan error, 1)
	opt := &LoopOptions{IdleTimeout: time.Hour, WriteTimeout: time.Minute}
	SetLoopClock(opt, clk.Now)
	s, waited := maxInputServer(t, opt, closed)
	c := dialSmallWindow(t, s) // and never read
	c.Write(bytes.Repeat([]byte("y"), 1<<20))
	if !<-waited {
		t.Fatal("the socket took all of the reply at once: nothing waited for room")
	}
	s.Sync()
	select {
	case err := <-closed:
		t.Fatalf("closed (%v) before the write timeout", err)
	default:
	}
	if err := advanceToWriteTimeout(t, s, clk, time.Minute, closed); !errors.Is(err, ErrInputTooLarge) || !errors.Is(err, ErrUnsent) {
		t.Fatalf("OnClose learned %v, want ErrInputTooLarge and ErrUnsent", err)
	}

	// A peer that resets the connection ends the wait too.
	c = dialSmallWindow(t, s)
	c.Write(bytes.Repeat([]byte("y"), 1<<20))
	if !<-waited {
		t.Fatal("the socket took all of the reply at once: nothing waited for room")
	}
	c.SetLinger(0)
	c.Close()
	if err := <-closed; !errors.Is(err, ErrInputTooLarge) || !errors.Is(err, ErrUnsent) {
		t.Fatalf("after the peer's reset, OnClose learned %v, want ErrInputTooLarge and ErrUnsent", err)
	}
}

// Over TLS too, the reply waiting for room reaches the peer, sealed, and
// close_notify behind it: the peer reads all of it and a clean end. It
// read a part of it, and an unexpected end of the stream (or a reset).
func TestLoopsMaxInputSendsWaitingTLS(t *testing.T) {
	srv, cli := tlsConfigs(t)
	closed := make(chan error, 1)
	s, waited := maxInputServer(t, &LoopOptions{TLSConfig: srv}, closed)
	tc := tls.Client(dialSmallWindow(t, s), cli)
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	go tc.Write(bytes.Repeat([]byte("y"), 1<<20)) // a line that never ends
	if !<-waited {                                // the peer reads nothing until then
		t.Fatal("the socket took all of the reply at once: nothing waited for room")
	}
	tc.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
	got, err := io.ReadAll(tc)
	if err != nil || !bytes.Equal(got, maxInputReply) {
		t.Fatalf("read %d bytes of the %d-byte reply, %v; want all of it and close_notify", len(got), len(maxInputReply), err)
	}
	if err := <-closed; !errors.Is(err, ErrInputTooLarge) || errors.Is(err, ErrUnsent) {
		t.Fatalf("OnClose learned %v, want ErrInputTooLarge without ErrUnsent", err)
	}
}

// A deadline that passes while a close for MaxInput waits for its output
// changes nothing: OnTimeout is not called (it could write nothing), and
// OnClose learns ErrInputTooLarge, with ErrUnsent if the peer does not
// take the output by the write timeout. The deadline's timeout called
// OnTimeout and replaced the close's error: OnClose learned the write
// timeout alone (or os.ErrDeadlineExceeded once the peer had read it
// all), neither ErrInputTooLarge nor ErrUnsent, on both engines.
func TestLoopsMaxInputDeadline(t *testing.T) {
	for _, reads := range []bool{false, true} {
		clk := newFakeClock()
		closed := make(chan error, 1)
		timedOut := make(chan error, 1)
		opt := &LoopOptions{IdleTimeout: time.Hour, WriteTimeout: time.Minute,
			OnOpen: func(c *LoopConn) { c.SetDeadline(clk.Now().Add(10 * time.Second)) },
			OnTimeout: func(c *LoopConn, err error) {
				select {
				case timedOut <- err:
				default:
				}
			}}
		SetLoopClock(opt, clk.Now)
		s, waited := maxInputServer(t, opt, closed)
		c := dialSmallWindow(t, s)
		go c.Write(bytes.Repeat([]byte("y"), 1<<20))
		if !<-waited {
			t.Fatal("the socket took all of the reply at once: nothing waited for room")
		}
		clk.advance(s, 20*time.Second) // past the deadline, short of the write timeout
		s.Sync()
		select {
		case err := <-timedOut:
			t.Errorf("reads %v: OnTimeout(%v) for a connection MaxInput closes", reads, err)
		case err := <-closed:
			t.Fatalf("reads %v: closed (%v) at the deadline, before the write timeout", reads, err)
		default:
		}
		if !reads {
			err := advanceToWriteTimeout(t, s, clk, time.Minute, closed)
			if !errors.Is(err, ErrInputTooLarge) || !errors.Is(err, ErrUnsent) {
				t.Errorf("OnClose learned %v, want ErrInputTooLarge and ErrUnsent", err)
			}
			continue
		}
		c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
		if got, err := io.ReadAll(c); err != nil || !bytes.Equal(got, maxInputReply) {
			t.Fatalf("read %d bytes of the %d-byte reply, %v; want all of it and the end of the stream", len(got), len(maxInputReply), err)
		}
		if err := <-closed; err != ErrInputTooLarge {
			t.Errorf("the peer read it all: OnClose learned %v, want ErrInputTooLarge", err)
		}
		if st := s.Stats(); st.Closed.InputTooLarge != 1 {
			t.Errorf("Stats.Closed %+v, want the close counted as InputTooLarge", st.Closed)
		}
	}
}

// A connection MaxInput closes whose output the peer does not take by
// the write timeout counts in Stats as InputTooLarge, the reason it was
// closed (OnClose learns ErrInputTooLarge with the write timeout and
// ErrUnsent): it counted as WriteTimeout.
func TestLoopsMaxInputWriteTimeoutStats(t *testing.T) {
	clk := newFakeClock()
	closed := make(chan error, 1)
	opt := &LoopOptions{IdleTimeout: time.Hour, WriteTimeout: time.Minute}
	SetLoopClock(opt, clk.Now)
	s, waited := maxInputServer(t, opt, closed)
	c := dialSmallWindow(t, s) // which reads nothing
	go c.Write(bytes.Repeat([]byte("y"), 1<<20))
	if !<-waited {
		t.Fatal("the socket took all of the reply at once: nothing waited for room")
	}
	err := advanceToWriteTimeout(t, s, clk, time.Second, closed)
	if !errors.Is(err, ErrInputTooLarge) || !errors.Is(err, ErrUnsent) {
		t.Errorf("OnClose learned %v, want ErrInputTooLarge and ErrUnsent with the write timeout", err)
	}
	if st := s.Stats(); st.Closed.InputTooLarge != 1 || st.Closed.WriteTimeout != 0 {
		t.Errorf("Stats.Closed %+v, want the close counted as InputTooLarge", st.Closed)
	}
}

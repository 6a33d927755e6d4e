//go:build unix

package netio

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// echoBack is a Handler that writes back what it is given; a Write that
// fails closes the connection, and errs learns why.
func echoBack(errs chan<- error) Handler {
	return func(c *LoopConn, in []byte) int {
		if _, err := c.Write(in); err != nil {
			select {
			case errs <- err:
			default:
			}
			c.Close()
		}
		return len(in)
	}
}

// burst writes total bytes of a pattern to w, without reading, and tells
// wrote when it is done.
func burst(w io.Writer, total int, wrote chan<- error) []byte {
	p := make([]byte, total)
	for i := range p {
		p[i] = byte(i*7 + i>>12)
	}
	go func() {
		_, err := w.Write(p)
		wrote <- err
	}()
	return p
}

// readBack reads len(want) bytes from r and compares them with want;
// errs says why the server closed, if it did.
func readBack(t *testing.T, r io.Reader, want []byte, errs <-chan error) {
	t.Helper()
	got := make([]byte, len(want))
	n, err := io.ReadFull(r, got)
	if err != nil {
		select {
		case serr := <-errs:
			t.Fatalf("read %d of %d bytes: %v; the server's Write failed: %v", n, len(want), err, serr)
		default:
			t.Fatalf("read %d of %d bytes: %v", n, len(want), err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the echo differs from what was sent")
	}
	select {
	case serr := <-errs:
		t.Fatalf("the server's Write failed: %v", serr)
	default:
	}
}

// TestLoopsTLSBackpressureSmallQueue: a peer that sends a burst of 4 MiB and reads
// its replies only once the server has been held back (the socket left
// some of a call's output) is held back as on plaintext, with
// MaxQueued as small as one read's echo: the records are not all handed
// to the Handler, their replies queued, before any is sent.
func TestLoopsTLSBackpressureSmallQueue(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		name := "plaintext"
		if useTLS {
			name = "tls"
		}
		t.Run(name, func(t *testing.T) {
			errs := make(chan error, 1)
			opt := &LoopOptions{Loops: 1, MaxQueued: readSize}
			held := make(chan struct{})
			var once bool
			SetSentHook(opt, func(out, written int) {
				if written < out && !once {
					once = true
					close(held)
				}
			})
			var cli *tls.Config
			if useTLS {
				opt.TLSConfig, cli = tlsConfigs(t)
			}
			s := startLoops(t, echoBack(errs), opt)
			var conn net.Conn = dial(t, s)
			if useTLS {
				tc := tls.Client(conn, cli)
				if err := tc.Handshake(); err != nil {
					t.Fatal(err)
				}
				conn = tc
			}
			wrote := make(chan error, 1)
			want := burst(conn, 4<<20, wrote)
			select {
			case <-held:
			case err := <-wrote: // all taken without waiting: nothing held back
				wrote <- err
			}
			readBack(t, conn, want, errs)
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLoopsTLSBackpressureAfterHandshake: the records a TLS 1.3 client
// sent behind its Finished while VerifyConnection held the handshake
// (MaxHandshakeInput of them) are not all handed to the Handler at once
// when it ends: a Handler that echoes them, with MaxQueued below what
// they hold, is held back as on plaintext, not refused with
// ErrQueueFull.
func TestLoopsTLSBackpressureAfterHandshake(t *testing.T) {
	hs := newHeldServer(t)
	errs := make(chan error, 1)
	opt := &LoopOptions{Loops: 1, TLSConfig: hs.srv, MaxQueued: 256 << 10}
	held := newHeldHook(opt)
	s := startLoops(t, echoBack(errs), opt)
	t.Cleanup(hs.release) // before the server's Close, which waits for the handshake
	tc := tls.Client(dial(t, s), hs.cli)
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	want := burst(tc, 2<<20, wrote)
	if !held.wait(s) {
		t.Fatalf("the connection was closed with its handshake held: stats %+v", s.Stats())
	}
	hs.release()
	readBack(t, tc, want, errs)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
}

// TestLoopsTLSBackpressureAllHeld: when the records the handshake held
// are all the peer sent, the socket has nothing more to raise an event:
// the records left while the replies waited for room are handed to the
// Handler once they have gone, and all of it comes back.
func TestLoopsTLSBackpressureAllHeld(t *testing.T) {
	hs := newHeldServer(t)
	const total = 448 << 10
	errs := make(chan error, 1)
	handed, blocked := make(chan struct{}), make(chan struct{})
	var n int
	var once bool
	h := func(c *LoopConn, in []byte) int {
		if n += len(in); n == total {
			close(handed)
		}
		return echoBack(errs)(c, in)
	}
	opt := &LoopOptions{Loops: 1, TLSConfig: hs.srv, MaxQueued: 256 << 10}
	held := make(chan int, 256)
	SetHandshakeHeldHook(opt, func(n int) {
		select {
		case held <- n:
		default:
		}
	})
	SetSentHook(opt, func(out, written int) {
		if written < out && !once {
			once = true
			close(blocked)
		}
	})
	// Small buffers both ways, so that the replies wait for room.
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, 16<<10) })
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Serve(ln, h, opt)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	t.Cleanup(hs.release) // before the server's Close, which waits for the handshake
	raw := &writeSizes{Conn: dialSmallWindow(t, s)}
	tc := tls.Client(raw, hs.cli)
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	want := burst(tc, total, wrote)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	// All the client wrote after its ClientHello is held.
	for want := raw.after(1); <-held != want; {
	}
	hs.release()
	select {
	case <-blocked: // the replies wait for room, records are left
	case <-handed: // the socket took them all
		t.Log("the replies never waited for room")
	}
	tc.SetReadDeadline(time.Now().Add(time.Minute)) // a failure's bound only
	readBack(t, tc, want, errs)
}

//go:build !netio_portable

package netio

import (
	"errors"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLoopsCloseInputNotYetPolled: input that reached the socket after
// the read that emptied it, its event not yet handled by the loop (the
// loop is busy in a Do), is still read and thrown away by the close:
// the peer reads the end of the stream, not
// ECONNRESET (Unix), and its socket is not reset (TCP). The loop's mark that its last
// read emptied the socket does not hold once data has arrived, whether
// or not epoll's event for it has been handled.
func TestLoopsCloseInputNotYetPolled(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			var ln net.Listener
			var err error
			if network == "tcp" {
				ln, err = net.Listen("tcp", "127.0.0.1:0")
			} else {
				ln, err = net.Listen("unix", filepath.Join(t.TempDir(), "s"))
			}
			if err != nil {
				t.Fatal(err)
			}
			held := make(chan *LoopConn, 1)
			h := func(c *LoopConn, in []byte) int {
				c.Write([]byte("reply"))
				held <- c
				return len(in)
			}
			closed := make(chan error, 1)
			s, err := Serve(ln, h, &LoopOptions{Loops: 1, OnClose: func(c *LoopConn, err error) { closed <- err }})
			if err != nil {
				ln.Close()
				t.Fatal(err)
			}
			defer s.Close()
			c, err := net.Dial(network, s.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write([]byte("a")) // one short read: the socket is empty after it
			lc := <-held
			reply := make([]byte, 5)
			if _, err := io.ReadFull(c, reply); err != nil || string(reply) != "reply" {
				t.Fatalf("first reply: %q, %v", reply, err)
			}
			running, sent := make(chan struct{}), make(chan struct{})
			if err := lc.Do(func(lc *LoopConn) {
				close(running)
				<-sent
				// The loop is here, not in epoll_wait: the input's event
				// waits. Hold until the input is in the socket and the
				// peer has all the output (acknowledged, or read).
				for {
					in, err1 := unix.IoctlGetInt(lc.FD(), unix.SIOCINQ)
					out, err2 := unix.IoctlGetInt(lc.FD(), unix.SIOCOUTQ)
					if err1 != nil || err2 != nil {
						panic(errors.Join(err1, err2))
					}
					if in > 0 && out == 0 {
						break
					}
					runtime.Gosched()
				}
				lc.Close()
			}); err != nil {
				t.Fatal(err)
			}
			<-running
			c.Write([]byte("more input, sent before the close"))
			close(sent)
			got, err := io.ReadAll(c)
			if err != nil || len(got) != 0 {
				t.Fatalf("the peer read %q, %v; want the end of the stream", got, err)
			}
			if err := <-closed; err != nil {
				t.Fatalf("OnClose learned %v, want nil", err)
			}
			if uc, ok := c.(*net.UnixConn); ok {
				// The socket is closed now; had it input left unread, the
				// peer's socket would have an error, ECONNRESET, that the
				// read to the end of the stream may have come before.
				if n, err := uc.Read(make([]byte, 1)); n != 0 || err != io.EOF {
					t.Fatalf("the peer read %d bytes, %v after the server's close; want the end of the stream", n, err)
				}
			}
			if tc, ok := c.(*net.TCPConn); ok {
				// The end of the stream was read before the close.
				wantNotReset(t, tc)
			}
			if st := s.Stats(); st.Open != 0 || st.Closed.Handler != 1 {
				t.Fatalf("Stats: %+v, want none open, one closed by the Handler", st)
			}
		})
	}
}

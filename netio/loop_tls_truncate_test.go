//go:build unix

package netio

import (
	"errors"
	"io"
	"net"
	"testing"
)

// TestLoopsTLSTruncated: a TLS stream cut off inside a record (the TCP
// stream ends with no close_notify where a record is not whole) is a
// failure, as crypto/tls's Read has it (io.ErrUnexpectedEOF), not the
// peer's end: OnClose learns ErrTLS with it, and the Handler is not told
// of an end that did not come; Stats counts it as the peer's close, as a
// reset. One cut off at a record's end is the stream's end, as
// crypto/tls takes it too (sites close so).
func TestLoopsTLSTruncated(t *testing.T) {
	for _, v := range tlsVersions {
		for _, cut := range []bool{false, true} {
			t.Run(v.name+map[bool]string{false: "/at a record's end", true: "/inside a record"}[cut], func(t *testing.T) {
				srv, cli := tlsConfigs(t)
				cli.MinVersion, cli.MaxVersion = v.v, v.v
				closed := make(chan error, 1)
				eof := make(chan string, 1)
				h := func(c *LoopConn, in []byte) int {
					if c.EOF() {
						eof <- string(in)
						c.Close()
					}
					return 0 // kept until the end
				}
				s := startLoops(t, h, &LoopOptions{TLSConfig: srv, OnClose: func(c *LoopConn, err error) { closed <- err }})
				tc, tap := dialTLS(t, s, cli)
				if _, err := tc.Write([]byte("abc")); err != nil {
					t.Fatal(err)
				}
				if cut {
					// A record header for 100 bytes, and 10 of them.
					tap.Conn.Write(append([]byte{23, 3, 3, 0, 100}, make([]byte, 10)...))
				}
				tap.Conn.(*net.TCPConn).CloseWrite()
				err := <-closed
				switch {
				case cut && (!errors.Is(err, ErrTLS) || !errors.Is(err, io.ErrUnexpectedEOF)):
					t.Errorf("OnClose learned %v, want ErrTLS with io.ErrUnexpectedEOF", err)
				case cut && len(eof) > 0:
					t.Errorf("the Handler was told of the stream's end, with %q", <-eof)
				case !cut && err != nil:
					t.Errorf("OnClose learned %v, want nil", err)
				case !cut && len(eof) == 0:
					t.Error("the Handler was not told of the stream's end")
				case !cut:
					if got := <-eof; got != "abc" {
						t.Errorf("the Handler's last call had %q, want abc", got)
					}
				}
				if st := s.Stats().Closed; st.Peer != 1 || st.Total() != 1 {
					t.Errorf("Stats: %+v, want one Peer close", st)
				}
			})
		}
	}
}

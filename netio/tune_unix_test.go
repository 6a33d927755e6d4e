//go:build unix

package netio

import (
	"net"
	"testing"
)

// TestGetSockOptsUnix: on a Unix stream socket, GetSockOpts reads the
// buffer sizes, with no error, and leaves the TCP options zero.
func TestGetSockOptsUnix(t *testing.T) {
	cli, _ := unixPair(t)
	if err := cli.SetWriteBuffer(96 << 10); err != nil {
		t.Fatal(err)
	}
	for _, c := range []net.Conn{cli, NewConn(cli, nil)} {
		o, err := GetSockOpts(c)
		if err != nil {
			t.Fatalf("GetSockOpts(%T): %v", c, err)
		}
		if o.SendBuffer < 96<<10 || o.RecvBuffer <= 0 {
			t.Fatalf("GetSockOpts(%T): buffers %+v, want them read", c, o)
		}
		if o.NoDelay || o.NotSentLowat != 0 {
			t.Fatalf("GetSockOpts(%T): TCP options %+v, want them zero", c, o)
		}
	}
}

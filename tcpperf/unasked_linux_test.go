package tcpperf

import (
	"context"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// A response nobody asked for is a content error of the measurement
// only, as a wrong one is: a server that writes a message's worth first,
// before any request (here in the warm-up: the dialer returns each
// connection once those bytes have come, so the loop reads them with
// nothing outstanding), and then echoes, has the measurement's messages
// all received and no error. It read a content error, and the command
// exited 1. (Its latencies, p50 90ms and max 190ms, are the fake clock's,
// not the server's, as they are against a plain echo server: see
// fakeClock.)
func TestUnaskedMeasuredOnly(t *testing.T) {
	addr := server(t, func(c net.Conn) {
		c.Write(msgTemplate(0, 64))
		io.Copy(c, c)
	})
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, a)
		if err != nil {
			return nil, err
		}
		rc, err := c.(*net.TCPConn).SyscallConn()
		if err == nil {
			// Wait, without taking them, for the server's 64 bytes.
			err = rc.Read(func(fd uintptr) bool {
				var b [64]byte
				n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
				return err != syscall.EAGAIN && (err != nil || n == len(b))
			})
		}
		return c, err
	}
	res, err := RunWith(context.Background(), Config{
		Engine: EngineTcpperf, Addr: addr, Conns: 1, QPS: 100, MsgSize: 64,
		Warmup: 100 * time.Millisecond, Duration: 200 * time.Millisecond,
	}, dial, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 20 || res.Received != 20 || res.ContentErrors != 0 || res.Errors != 0 {
		t.Fatalf("want the measurement's 20 messages received, the warm-up's unasked response not counted: %+v", res)
	}
}

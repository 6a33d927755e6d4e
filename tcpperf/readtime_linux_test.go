package tcpperf

import (
	"bytes"
	"context"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tickingClock is a fake clock that moves on a microsecond at each
// reading, so that what is read later is later.
type tickingClock struct{ *fakeClock }

func (c tickingClock) Now() time.Time {
	c.Advance(time.Microsecond)
	return c.fakeClock.Now()
}

// A closed loop's responses read after it sent new messages, in the same
// round of reads of a connection, are timed when read, not at the poll
// before: responses to those new messages were timed before their send
// (a negative latency, recorded as 1ns; a deep closed loop read p50 0.0µs).
// The server answers the first messages before they are sent (their bytes
// are known), a buffer and a bit of them, which are all in the socket when
// the loop first reads it: the first read fills the buffer, the loop
// sends as many new messages, and the second read holds the answers to
// the first of those.
func TestClosedLoopReadTime(t *testing.T) {
	const size, depth = 64, 1024 // a read buffer (64 KiB) of responses
	const ahead = depth + 64
	var early []byte
	for seq := range uint64(ahead) {
		m := msgTemplate(0, size)
		putHex(m[:hexLen(size)], seq)
		early = append(early, m...)
	}
	written := make(chan struct{})
	addr := server(t, func(c net.Conn) {
		if _, err := c.Write(early); err != nil {
			return
		}
		close(written)
		// The requests answered already, then an echo.
		if _, err := io.CopyN(io.Discard, c, int64(len(early))); err == nil {
			io.Copy(c, c)
		}
	})
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 1<<20) })
		}}
		c, err := d.DialContext(ctx, network, a)
		if err != nil {
			return nil, err
		}
		<-written
		// Until the early answers are all in the socket.
		rc, err := c.(*net.TCPConn).SyscallConn()
		if err != nil {
			return nil, err
		}
		for n := 0; n < len(early); {
			rc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
			if n < len(early) {
				time.Sleep(time.Millisecond)
			}
		}
		return c, nil
	}
	clk := tickingClock{newFakeClock()}
	var hlog bytes.Buffer
	res, err := RunEnv(context.Background(), Config{
		Engine: EngineTcpperf, Addr: "ignored", Conns: 1, Depth: depth, MsgSize: size,
		Duration: 10 * time.Millisecond, HdrLog: &hlog,
	}, Env{Dial: func(ctx context.Context, network, _ string) (net.Conn, error) { return dial(ctx, network, addr) }, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if res.Received < ahead || res.Errors != 0 {
		t.Fatalf("want the %d answered early received, no errors: %+v", ahead, res)
	}
	h, err := LogHistogram(&hlog)
	if err != nil {
		t.Fatal(err)
	}
	if h.Min() < int64(time.Microsecond) {
		t.Errorf("least latency %dns, want a microsecond at least (each reading of the clock is one later): responses timed before their send", h.Min())
	}
}

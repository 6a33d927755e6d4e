package netio

import (
	"bytes"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLoopsWriteTimeoutSlowReader: a peer that reads slowly but steadily
// is not closed by the write timeout, though the socket's buffer never
// empties enough for the loop to write more: bytes leave all the time.
func TestLoopsWriteTimeoutSlowReader(t *testing.T) {
	const total = 1 << 20
	clk := newFakeClock()
	conns := make(chan *LoopConn, 1)
	closed := make(chan error, 1)
	waiting := make(chan struct{})
	var once sync.Once
	opt := &LoopOptions{IdleTimeout: -1, WriteTimeout: time.Minute,
		OnOpen: func(c *LoopConn) {
			c.Write(bytes.Repeat([]byte("w"), total))
			conns <- c
		},
		OnClose: func(c *LoopConn, err error) { closed <- err }}
	SetSentHook(opt, func(out, written int) {
		if written < out {
			once.Do(func() { close(waiting) })
		}
	})
	SetLoopClock(opt, clk.Now)
	s := serveOn(t, listenTCP(t, map[int]int{syscall.SO_SNDBUF: 256 << 10}), echo, opt)
	nc := dialSmallWindow(t, s)
	lc := <-conns
	<-waiting
	// The server's socket queue, as the loop sees it.
	outq := func() int {
		q := make(chan int, 1)
		err := lc.Do(func(c *LoopConn) {
			c.Control(func(fd uintptr) {
				n, _ := unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
				q <- n
			})
		})
		if err != nil {
			t.Fatalf("the connection was closed: %v (%v)", err, <-closed)
		}
		return <-q
	}
	got := 0
	buf := make([]byte, 16<<10)
	for step := range 4 { // 160 s, 16 KiB a 40 s
		before := outq()
		n, err := io.ReadFull(nc, buf)
		got += n
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		// Wait for the peer's acknowledgements to reach the server's
		// socket (a change of its queue), so the loop can see them: as
		// long as they take, a minute being a hang. A peer that still
		// holds input may keep its window shut (receiver-side silly
		// window avoidance: 8 KiB held of a 32 KiB buffer did, under
		// load), and the server would hear of no progress however long
		// it waited; such a reader reads on, as a steady one does. It
		// then takes at most its 32 KiB buffer more a step: over the
		// first two steps (80 s, past the minute's timeout) too little to
		// free the third of the server's socket buffer that EPOLLOUT
		// waits for, so the loop cannot have written: only its look at
		// the socket's queue keeps the connection.
		for deadline := time.Now().Add(time.Minute); outq() == before; {
			if held := inq(t, nc); held > 0 {
				n, err := nc.Read(buf[:min(held, len(buf))])
				got += n
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				continue
			}
			if time.Now().After(deadline) {
				t.Fatalf("step %d: the server's socket saw no acknowledgement in a minute", step)
			}
			time.Sleep(time.Millisecond)
		}
		clk.advance(s, 40*time.Second)
		select {
		case err := <-closed:
			t.Fatalf("a steady reader closed after %d s: %v", 40*(step+1), err)
		default:
		}
	}
	n, err := io.CopyN(io.Discard, nc, int64(total-got))
	if err != nil {
		t.Fatalf("read %d of the %d bytes queued: %v", got+int(n), total, err)
	}
}

// inq is the input waiting in c's socket (SIOCINQ).
func inq(t *testing.T, c *net.TCPConn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var ierr error
	if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); err != nil {
		t.Fatal(err)
	}
	if ierr != nil {
		t.Fatal(ierr)
	}
	return n
}

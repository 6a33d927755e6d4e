package tcpperf

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// swapping is a faulty server of size-byte messages: it answers each
// message of the two connections whose first message is connection a's
// or b's (it holds one until it has the other's) with the other's
// message of the same place, once both have come, and echoes the other
// connections. How many messages it answered crossed comes on swapped
// once both connections have closed.
func swapping(size, a, b int) (handle func(net.Conn), swapped <-chan int64) {
	var mu sync.Mutex
	type held struct {
		c     net.Conn
		first []byte
		done  chan struct{}
	}
	var waiting *held
	out := make(chan int64, 1)
	isOf := func(m []byte, id int) bool { return checkMsg(m, msgTemplate(id, size), 0) }
	return func(c net.Conn) {
		m := make([]byte, size)
		if _, err := io.ReadFull(c, m); err != nil {
			return
		}
		if !isOf(m, a) && !isOf(m, b) {
			if _, err := c.Write(m); err == nil {
				io.Copy(c, c)
			}
			return
		}
		mu.Lock()
		if waiting == nil {
			h := &held{c, m, make(chan struct{})}
			waiting = h
			mu.Unlock()
			<-h.done // the partner answers on c too: keep it open
			return
		}
		p := waiting
		mu.Unlock()
		defer close(p.done)
		pm := p.first
		var n int64
		for {
			if _, err := p.c.Write(m); err != nil {
				break
			}
			if _, err := c.Write(pm); err != nil {
				break
			}
			n += 2
			m, pm = make([]byte, size), make([]byte, size)
			if _, err := io.ReadFull(c, m); err != nil {
				break
			}
			if _, err := io.ReadFull(p.c, pm); err != nil {
				break
			}
		}
		out <- n
	}, out
}

// A server (or proxy) that mixes up two connections answers each with
// the other's messages, sequence numbers and all: every one of them is a
// content error, as a wrong byte is. Connections 0 and 26, whose
// messages were the same, had them all received.
func TestOtherConnectionsResponse(t *testing.T) {
	const size, conns = 64, 27
	forEngines(t, func(t *testing.T, engine string) {
		handle, swapped := swapping(size, 0, 26)
		addr := server(t, handle)
		res, err := RunWith(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: conns, QPS: 1350, MsgSize: size,
			Duration: 200 * time.Millisecond,
		}, nil, newFakeClock())
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		select {
		case n = <-swapped:
		case <-time.After(time.Minute):
			t.Fatalf("the server never swapped connections 0 and 26 in a minute: %+v", res)
		}
		if res.Sent != 270 || n != 20 || res.ContentErrors != n || res.Errors != n || res.Received != res.Sent-n {
			t.Fatalf("want 270 sent, 20 of them crossed (%d), those content errors, the others received and no other error: %+v", n, res)
		}
	})
}

package tcpperf

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// misanswering echoes 64-byte messages but, at the connection's message
// 5, writes instead what answer makes of message 4's echo and 5's
// (both at once, so the run reads them while message 5 is outstanding).
func misanswering(answer func(prev, cur []byte) []byte) func(net.Conn) {
	return func(c net.Conn) {
		var prev []byte
		for i := 0; ; i++ {
			cur := make([]byte, 64)
			if _, err := io.ReadFull(c, cur); err != nil {
				return
			}
			out := cur
			if i == 5 {
				out = answer(prev, cur)
			}
			if _, err := c.Write(out); err != nil {
				return
			}
			prev = cur
		}
	}
}

// Responses are matched to messages in order, but resynchronised by the
// sequence number each carries: a server that sends one response twice
// (message 4's again, before 5's) has one unasked response, a content
// error, and every other message received; one that drops a response
// (5's) has that message alone a content error. Either made every later
// response of the connection a content error: 5 received of 20.
func TestResync(t *testing.T) {
	for _, c := range []struct {
		name             string
		answer           func(prev, cur []byte) []byte
		received, errors int64
	}{
		{"duplicate", func(prev, cur []byte) []byte { return append(append([]byte(nil), prev...), cur...) }, 20, 1},
		{"dropped", func(prev, cur []byte) []byte { return nil }, 19, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			forEngines(t, func(t *testing.T, engine string) {
				addr := server(t, misanswering(c.answer))
				res, err := RunWith(context.Background(), Config{
					Engine: engine, Addr: addr, Conns: 1, QPS: 100, MsgSize: 64,
					Duration: 200 * time.Millisecond,
				}, nil, newFakeClock())
				if err != nil {
					t.Fatal(err)
				}
				if res.Sent != 20 || res.Received != c.received || res.ContentErrors != c.errors || res.Errors != c.errors {
					t.Fatalf("want 20 sent, %d received, %d content errors and no other: %+v", c.received, c.errors, res)
				}
			})
		})
	}
}

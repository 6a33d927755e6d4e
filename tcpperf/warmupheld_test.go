package tcpperf

import (
	"bufio"
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// A closed loop's messages still in flight when the measurement begins
// are the measurement's: a server that stopped answering in the warm-up
// left the measurement without a message (a connection sends no more
// than Depth), and the run read sent 0, errors 0, as a clean one (the
// command exited 0); and a stall across the start was charged nowhere.
func TestClosedLoopWarmupHeld(t *testing.T) {
	t.Run("silent", func(t *testing.T) {
		forEngines(t, func(t *testing.T, engine string) {
			clk := newFakeClock()
			// The server reads the 3 messages of the warm-up, moves the
			// clock past the measurement's end (as the time a silent
			// server takes would) and answers nothing.
			addr := server(t, func(c net.Conn) {
				if _, err := io.CopyN(io.Discard, c, 3*64); err == nil {
					clk.Advance(300 * time.Millisecond)
				}
				io.Copy(io.Discard, c)
			})
			res, err := RunEnv(context.Background(), Config{
				Engine: engine, Addr: addr, Conns: 1, Depth: 3, MsgSize: 64,
				Warmup: 100 * time.Millisecond, Duration: 100 * time.Millisecond, DrainTimeout: 10 * time.Millisecond,
			}, Env{Clock: clk, DrainQuiet: SilentQuiet})
			if err != nil {
				t.Fatal(err)
			}
			if res.Sent != 3 || res.Unanswered != 3 || res.Errors != 3 || res.Received != 0 {
				t.Errorf("want the 3 messages of the warm-up, never answered, sent and unanswered in the measurement: %+v", res)
			}
		})
	})
	t.Run("stalled", func(t *testing.T) {
		forEngines(t, func(t *testing.T, engine string) {
			clk := newFakeClock()
			// The first line is answered 150ms after it came, past the
			// warm-up's end at 100ms; the others 1ms after.
			addr := server(t, func(c net.Conn) {
				r := bufio.NewReader(c)
				for delay := 150 * time.Millisecond; ; delay = time.Millisecond {
					line, err := r.ReadSlice('\n')
					if err != nil {
						return
					}
					clk.Advance(delay)
					if _, err := c.Write(line); err != nil {
						return
					}
				}
			})
			res, err := RunWith(context.Background(), Config{
				Engine: engine, Addr: addr, Conns: 1, Depth: 1, MsgSize: 64, Mode: "line",
				Warmup: 100 * time.Millisecond, Duration: 100 * time.Millisecond,
			}, nil, clk)
			if err != nil {
				t.Fatal(err)
			}
			// The first at 150ms, then one a millisecond to the end at
			// 200ms: 51, all answered.
			if res.Max < 149_000 || res.Sent != 51 || res.Received != 51 || res.Errors != 0 {
				t.Errorf("want the stalled message's 150ms among the measurement's 51: max %.1fµs, %+v", res.Max, res)
			}
		})
	})
}

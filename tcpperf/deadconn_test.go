package tcpperf

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/netio"
)

// deadFirst returns the dial hooks of a run whose first connection the
// server closes as it accepts it (closer's), the others going to addr;
// each hook returns once the server has closed it, so that the run finds
// it closed (its EOF already come) and its messages due unsent.
func deadFirst(t *testing.T, addr string) Env {
	closed := make(chan struct{}, 1)
	closer := server(t, func(c net.Conn) { c.Close(); closed <- struct{}{} })
	var n atomic.Int64
	var d net.Dialer
	return Env{
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			if n.Add(1) != 1 {
				return d.DialContext(ctx, network, addr)
			}
			c, err := d.DialContext(ctx, network, closer)
			if err == nil {
				<-closed
			}
			return c, err
		},
		LoopDial: func(ctx context.Context, s *netio.Loops, network, _ string) (*netio.LoopConn, error) {
			if n.Add(1) != 1 {
				return s.Dial(ctx, network, addr)
			}
			lc, err := s.Dial(ctx, network, closer)
			if err == nil {
				<-closed
			}
			return lc, err
		},
	}
}

// A message due on a connection the server has closed is unsent, and
// that alone: no send lateness, and not among the messages the tool's
// CPU is divided over (CPUPerMsg is per message sent), on either engine.
// tcpperf's own loops counted it as due, so their CPU per message over
// the same failure read half of EngineNetio's, and it went into their
// send lateness.
func TestDeadConnNotDue(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		env := deadFirst(t, server(t, echo))
		env.Clock = newFakeClock()
		var reads time.Duration
		env.CPU = func() time.Duration { reads += time.Millisecond; return reads }
		// 1000 msg/s over 2 connections, 200 ms after 50 ms of warm-up:
		// 200 messages due in the measurement, every other one on the
		// closed connection.
		res, err := RunEnv(context.Background(), Config{
			Engine: engine, Addr: "unused", Conns: 2, QPS: 1000,
			Warmup: 50 * time.Millisecond, Duration: 200 * time.Millisecond,
		}, env)
		if err != nil {
			t.Fatal(err)
		}
		// (netio's portable loops may see the close after a first send.)
		if res.Sent+res.Unsent != 200 || res.Unsent < 90 || res.Received != 100 || res.Missed != 0 {
			t.Fatalf("want 100 sent and answered, about 100 unsent: %+v", res)
		}
		// The CPU readings a millisecond apart: 1 ms over the 100 sent.
		if want := 1e3 / float64(res.Sent); reads != 3*time.Millisecond || res.CPUPerMsg != want {
			t.Errorf("%v of CPU readings, %g µs per message; want 3 readings, 1ms over the %d sent = %g µs", reads, res.CPUPerMsg, res.Sent, want)
		}
	})
}

// A run whose only connection the server closed has sent nothing: its
// result and its progress lines have no send lateness ("-"), where tcpperf's own loops
// recorded one for each message due on the closed connection, and it
// has no CPU per message.
func TestDeadConnNoLateness(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		env := deadFirst(t, server(t, echo))
		env.Clock = newFakeClock()
		var progress strings.Builder
		res, err := RunEnv(context.Background(), Config{
			Engine: engine, Addr: "unused", Conns: 1, QPS: 100,
			Duration: 1500 * time.Millisecond, Progress: &progress,
		}, env)
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent != 0 && res.Sent+res.Unsent == 150 {
			t.Skipf("the close seen after %d sent (netio's portable loops)", res.Sent)
		}
		if res.Sent != 0 || res.Unsent != 150 || res.CPUPerMsg != 0 || res.LatenessMax != 0 {
			t.Errorf("want 150 unsent, none sent, no CPU per message nor send lateness: %+v", res)
		}
		lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
		for _, line := range lines {
			if !strings.Contains(line, "lateness p99 -") {
				t.Errorf("a send lateness where nothing was sent: %q", line)
			}
		}
	})
}

package tcpperf

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/netio"
)

// handshakingLoopDial dials for EngineNetio and starts a TLS handshake on
// the connection that its server (discardServer) never answers: every
// Write then fails with ErrHandshaking, not ErrQueueFull, on a connection
// not (yet) failed.
func handshakingLoopDial(ctx context.Context, s *netio.Loops, network, addr string) (*netio.LoopConn, error) {
	lc, err := s.Dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	if err := lc.Do(func(lc *netio.LoopConn) {
		done <- lc.StartTLS(&tls.Config{InsecureSkipVerify: true})
	}); err != nil {
		return nil, err
	}
	return lc, <-done
}

// discardServer reads and throws away what it is sent, and never answers.
func discardServer(t *testing.T) string {
	return server(t, func(c net.Conn) { io.Copy(io.Discard, c) })
}

// On EngineNetio, a write that fails for another reason than a full
// queue fails the connection, and the messages it did not write are
// unsent: sent, unsent, missed and refused make up the messages due. The
// rest of the call's messages were counted nowhere (closed loop: Depth
// at once), and in open loop the messages handed to the call were
// counted as unsent twice, and its loop never drained.
func TestNetioWriteErrorAccounting(t *testing.T) {
	addr := discardServer(t)
	// 10,000 msg/s from 10ms to 20ms: 100 messages, batched by 4 or 5
	// a call on the connection.
	// A loop that never drains would hold the run: the guard ends it
	// with counts that fail the test instead.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := RunEnv(ctx, Config{
		Engine: EngineNetio, Addr: addr, Conns: 1, QPS: 10000, Wait: WaitBatch,
		Duration: 10 * time.Millisecond, DrainTimeout: 10 * time.Millisecond,
	}, Env{LoopDial: handshakingLoopDial, Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 0 || res.Unsent != 100 || res.Missed != 0 || res.WriteErrors != 1 || res.Interrupted {
		t.Errorf("want the 100 messages due unsent on the connection that failed writing (1 write error): %+v", res)
	}
}

// A loop so far behind that it passes the cut-off in the warm-up misses
// the measurement's messages, not the warm-up's: missed is the
// measurement's only, as sent and unsent are (it counted the 60 of the
// warm-up not sent too).
func TestMissedMeasuredOnly(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := server(t, echo)
		clk := newFakeClock()
		// 1000 msg/s: 100 in the warm-up, from 10ms to 110ms, and 100 in
		// the measurement, to 210ms. At 50ms, with 40 sent, the clock
		// jumps a second, past the cut-off at 220ms.
		at := clk.Now().Add(50 * time.Millisecond)
		var jumped atomic.Bool
		clk.Moved = func(now time.Time) {
			if !now.Before(at) && jumped.CompareAndSwap(false, true) {
				clk.Advance(time.Second)
			}
		}
		res, err := RunEnv(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 1, QPS: 1000,
			Warmup: 100 * time.Millisecond, Duration: 100 * time.Millisecond, DrainTimeout: 10 * time.Millisecond,
		}, Env{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent != 0 || res.Unsent != 0 || res.Missed != 100 {
			t.Errorf("want the measurement's 100 messages missed, none sent: %+v", res)
		}
	})
}

// The progress lines' errors are the result's: the last line, after the
// drain, says Result.Errors. They left out the messages due on
// connections the server had closed (unsent: a run whose connections
// were all gone read "errors 4" a second while nothing was sent) and
// those still unanswered at the end of the drain (a silent server's run
// read "errors 0" to its end, and 40 in the result).
func TestProgressErrors(t *testing.T) {
	// 2 connections, 200/s: 20 messages each; the closing server closes
	// after 5.
	for name, handle := range unanswering(5) {
		t.Run(name, func(t *testing.T) {
			forEngines(t, func(t *testing.T, engine string) {
				addr := server(t, handle)
				var progress bytes.Buffer
				res, err := RunEnv(context.Background(), Config{
					Engine: engine, Addr: addr, Conns: 2, QPS: 200, MsgSize: 64,
					Duration: 200 * time.Millisecond, Progress: &progress,
				}, Env{Clock: newFakeClock(), DrainQuiet: SilentQuiet})
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
				last := lines[len(lines)-1]
				if res.Errors == 0 || !strings.Contains(last, fmt.Sprintf("errors %d (the rest", res.Errors)) {
					t.Fatalf("%s server: last progress line %q, want the result's errors, %d: %+v", name, last, res.Errors, res)
				}
			})
		})
	}
}

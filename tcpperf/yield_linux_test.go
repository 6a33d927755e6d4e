package tcpperf

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// A loop busy with its schedule lets the scheduler run once more than
// yieldEvery of its clock has passed, not at every turn: the runtime
// takes a goroutine it has not scheduled for 10 ms for one running too
// long (see yieldEvery). On a fake clock the loop turns once a send, a
// millisecond apart here.
func TestLoopYields(t *testing.T) {
	clk := newFakeClock()
	addr := server(t, echo)
	var yields atomic.Int64
	start := clk.Now()
	const d = 200 * time.Millisecond
	res, err := RunEnv(context.Background(), Config{
		Engine: EngineTcpperf, Addr: addr, Conns: 1, QPS: 1000, Duration: d, Warmup: time.Millisecond,
	}, Env{Clock: clk, Yield: func() { yields.Add(1); runtime.Gosched() }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 200 || res.Received != 200 {
		t.Fatalf("want the 200 messages sent and answered: %+v", res)
	}
	// A yield comes at the first turn more than yieldEvery after the
	// last: at most a send interval later.
	lo := int64(d / (yieldEvery + 2*time.Millisecond))
	hi := int64(clk.Now().Sub(start)/yieldEvery) + 1
	if n := yields.Load(); n < lo || n > hi {
		t.Errorf("%d yields over %v of the loop's clock (%v measured); want %d to %d", n, clk.Now().Sub(start), d, lo, hi)
	}
}

package tcpperf

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A loop that falls behind its schedule sends the measurement's messages
// late, in the drain: the rate it achieved is over the span to its last
// send, not the window, which read the target (1000 msg/s here) however
// late the messages went out. The clock stalls as a busy loop would: when
// it first reaches 60ms it jumps to jumpTo, and the loop sends at once all
// the messages due by then. Behind, the last of the window's (10ms to
// 110ms) goes out at 160ms: 100 messages over 150ms. Late but within the
// window, the run kept to its window and reads its target. A merge of the
// run's interval log spans, and rates, as the run.
func TestSendSpan(t *testing.T) {
	for _, c := range []struct {
		name     string
		jumpTo   time.Duration // from the run's start
		wantSpan float64
	}{
		{"behind", 160 * time.Millisecond, 0.15},
		{"within", 90 * time.Millisecond, 0.1},
	} {
		t.Run(c.name, func(t *testing.T) {
			forEngines(t, func(t *testing.T, engine string) {
				clk := newFakeClock()
				base := clk.Now()
				var jumped atomic.Bool
				clk.Moved = func(now time.Time) {
					if now.Sub(base) >= 60*time.Millisecond && jumped.CompareAndSwap(false, true) {
						clk.Advance(base.Add(c.jumpTo).Sub(now))
					}
				}
				addr := server(t, echo)
				var hlog bytes.Buffer
				res, err := RunWith(context.Background(), Config{
					Engine: engine, Addr: addr, Conns: 2, QPS: 1000, MsgSize: 32,
					Duration: 100 * time.Millisecond, HdrLog: &hlog,
				}, nil, clk)
				if err != nil {
					t.Fatal(err)
				}
				if res.Sent != 100 || res.Received != 100 || res.Errors != 0 || res.Missed != 0 || res.DurationS != 0.1 {
					t.Fatalf("want the window's 100 messages sent and received in 100ms, no errors: %+v", res)
				}
				if !jumped.Load() {
					t.Fatal("the clock never reached 60ms")
				}
				if want := float64(res.Received) / c.wantSpan; res.SendSpanS != c.wantSpan || res.AchievedQPS != want {
					t.Errorf("sent over %gs at %g msg/s, want %gs at %g", res.SendSpanS, res.AchievedQPS, c.wantSpan, want)
				}
				m, err := MergeLogs(bytes.NewReader(hlog.Bytes()))
				if err != nil || m.DurationS != c.wantSpan || m.AchievedQPS != res.AchievedQPS || m.Received != res.Received {
					t.Errorf("merged: %v, %d over %gs at %g msg/s; want the run's %d over %gs at %g", err, m.Received, m.DurationS, m.AchievedQPS, res.Received, res.SendSpanS, res.AchievedQPS)
				}
			})
		})
	}
}

package smtpsource

import (
	"context"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Sessions connect one at a time, as Postfix's smtp-source does: ten
// sessions that dial at once put ten handshakes into a listener's accept
// queue, and past its length the kernel resets the connections before
// their greeting (seen as "banner: ... connection reset by peer" under
// load, against Postfix's smtp-sink with a short listen queue). The first
// dial waits for a second to start beside it; with one dial at a time none
// can, and the first goes on when its dial timeout ends (a bound on the
// test's wait, not a measurement).
func TestOneDialAtATime(t *testing.T) {
	f := &fakeServer{}
	addr := f.start(t)
	var inflight, most atomic.Int64
	second := make(chan struct{})
	var once sync.Once
	var calls atomic.Int64
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if n > 1 {
			once.Do(func() { close(second) })
		}
		if calls.Add(1) == 1 {
			select {
			case <-second:
			case <-ctx.Done():
			}
		}
		var d net.Dialer
		return d.DialContext(context.Background(), network, a)
	}
	cfg := base(addr)
	cfg.Sessions, cfg.Messages, cfg.Reuse, cfg.DialTimeout = 10, 20, true, 200*time.Millisecond
	res, err := RunWith(context.Background(), cfg, dial, nil)
	if err != nil || res.Delivered != 20 || res.Errors != 0 || res.Connections != 10 {
		t.Fatalf("%+v, %v", res, err)
	}
	if m := most.Load(); m != 1 {
		t.Errorf("%d dials at once, want 1", m)
	}
}

// The connect phase times the dial, not the wait for the source's own
// one-dial-at-a-time lock: on the test's clock each dial takes 5ms, and
// the second session's dial starts once the first's has returned, after
// waiting 5ms for it; both connects are recorded as 5ms. Without Reuse,
// where every message dials.
func TestConnectExcludesDialLock(t *testing.T) {
	clk := newFakeClock()
	f := &fakeServer{}
	addr := f.start(t)
	var calls atomic.Int64
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		if calls.Add(1) == 1 {
			waitGoroutine(t, func(g string) bool {
				return strings.Contains(g, "[sync.Mutex.Lock") && strings.Contains(g, "wirespeed/smtpsource.(*")
			})
		}
		clk.Advance(5 * time.Millisecond)
		var d net.Dialer
		return d.DialContext(ctx, network, a)
	}
	cfg := base(addr)
	cfg.Sessions, cfg.Messages = 2, 2
	res, err := RunWith(context.Background(), cfg, dial, clk)
	if err != nil || res.Delivered != 2 || res.Errors != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	checkLatency(t, "connect", res.Phases.Connect, 5*time.Millisecond, 5*time.Millisecond)
}

// waitGoroutine waits until some goroutine's stack (as runtime.Stack
// prints it, header line included) satisfies match.
func waitGoroutine(t *testing.T, match func(stack string) bool) {
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if match(g) {
				return
			}
		}
		runtime.Gosched()
	}
	t.Error("no goroutine got there")
}

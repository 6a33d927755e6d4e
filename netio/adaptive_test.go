package netio

import (
	"math"
	"sync"
	"testing"
	"time"
)

// ratePeer is a writer draining at a fixed rate on a clock of its own: each
// Write advances the clock by the time the rate gives the bytes, so writev
// time, and with it the measured drain rate, is exact.
type ratePeer struct {
	rate int64 // bytes per second, a divisor of 1e9
	mu   sync.Mutex
	t    time.Time
	n    int64
}

func (p *ratePeer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.t = p.t.Add(time.Duration(int64(len(b)) * 1e9 / p.rate))
	p.n += int64(len(b))
	return len(b), nil
}

func (p *ratePeer) now() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.t
}

// The adaptive window is the drain rate times TargetDelay, within
// [MinWindow, MaxQueued], for peers slower and faster than the bounds.
func TestAdaptiveWindow(t *testing.T) {
	const maxQ = 1 << 20
	opt := &Options{MaxQueued: maxQ, TargetDelay: 10 * time.Millisecond, MinWindow: 4 << 10}
	for _, c := range []struct {
		name string
		rate int64
		want int
	}{
		{"slow", 2e6, 20_000}, // 2 MB/s × 10ms
		{"crawl", 1e5, 4 << 10},
		{"fast", 1e9, maxQ},
	} {
		t.Run(c.name, func(t *testing.T) {
			peer := &ratePeer{rate: c.rate, t: time.Unix(0, 0)}
			w := NewWriterForTest(peer, opt, 0, peer.now)
			msg := make([]byte, 512)
			// Enough for several adaptPeriods of writev time at this rate.
			total := int(max(4*float64(c.rate)*adaptPeriod.Seconds(), 1<<20))
			for range total / len(msg) {
				if _, err := w.Write(msg); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			s := w.Stats()
			if rate := float64(c.rate); math.Abs(s.DrainRate-rate) > rate*1e-9 {
				t.Fatalf("drain rate %.0f B/s, peer drains %d: %+v", s.DrainRate, c.rate, s)
			}
			checkWindowFollowsRate(t, s, opt)
			if d := s.Window - c.want; d < -1 || d > 1 {
				t.Fatalf("window %d, want %d: %+v", s.Window, c.want, s)
			}
		})
	}
}

// The rate is sampled once per adaptPeriod of writev or wall time, and the
// estimate moves halfway to each new sample.
func TestAdaptiveSampling(t *testing.T) {
	opt := &Options{MaxQueued: 1 << 20, TargetDelay: 10 * time.Millisecond, MinWindow: 4 << 10}
	w := NewWriter(nil, opt)
	t0 := time.Unix(100, 0)
	ms := time.Millisecond
	w.Adapt(2000, ms, t0.Add(ms)) // 1ms into the period: no sample yet
	if s := w.Stats(); s.DrainRate != 0 || s.Window != opt.MaxQueued {
		t.Fatalf("sampled before the period ended: %+v", s)
	}
	w.Adapt(8000, 4*ms, t0.Add(adaptPeriod)) // 10000 bytes in 5ms of writev
	if s := w.Stats(); math.Abs(s.DrainRate-2e6) > 1e-3 || s.Window != 20_000 {
		t.Fatalf("first sample: %+v, want rate 2e6, window 20000", s)
	}
	// The next period starts with the next writev and lasts adaptPeriod of
	// wall time, 2ms of it in writev: the rate is over writev time, 40000
	// bytes in 2ms, and the estimate moves halfway to it.
	t1 := t0.Add(2 * adaptPeriod)
	w.Adapt(20000, ms, t1.Add(ms))
	w.Adapt(20000, ms, t1.Add(adaptPeriod))
	want := 2e6 + (20e6-2e6)/2
	s := w.Stats()
	if math.Abs(s.DrainRate-want) > 1e-3 || s.Window != 110_000 {
		t.Fatalf("second sample: %+v, want rate %.0f, window 110000", s, want)
	}
	checkWindowFollowsRate(t, s, opt)
}

// checkWindowFollowsRate checks that the window is the measured drain rate
// times TargetDelay, within [MinWindow, MaxQueued].
func checkWindowFollowsRate(t *testing.T, s Stats, opt *Options) {
	t.Helper()
	if s.DrainRate <= 0 {
		t.Fatalf("no drain rate measured: %+v", s)
	}
	want := int(min(s.DrainRate*opt.TargetDelay.Seconds(), float64(opt.MaxQueued)))
	if want = max(want, opt.MinWindow); s.Window != want {
		t.Fatalf("window %d for a drain rate of %.0f B/s and a target delay of %v, want %d", s.Window, s.DrainRate, opt.TargetDelay, want)
	}
}

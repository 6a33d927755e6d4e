package latrec

import (
	"sync"
	"testing"
)

// Intervals hold what was recorded since the last one, clamped to the
// range, and no value is lost to the swap while others record.
func TestRecorderIntervals(t *testing.T) {
	r := New()
	r.Record(0)       // below the range: 1
	r.Record(2 * Max) // above: Max
	r.Lock()
	r.RecordLocked(1000)
	r.Unlock()
	h := r.Interval()
	if h.TotalCount() != 3 || h.Min() != 1 || !h.ValuesAreEquivalent(h.Max(), Max) {
		t.Errorf("first interval: %d values, min %d, max %d", h.TotalCount(), h.Min(), h.Max())
	}
	if n := r.Interval().TotalCount(); n != 0 {
		t.Errorf("second interval: %d values, want 0", n)
	}
	const writers, each = 4, 10000
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for i := range each {
				r.Record(int64(i + 1))
			}
		})
	}
	var total int64
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		total += r.Interval().TotalCount()
	}
	total += r.Interval().TotalCount()
	if total != writers*each {
		t.Errorf("%d values over the intervals, want %d", total, writers*each)
	}
}

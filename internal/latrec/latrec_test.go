package latrec

import (
	"errors"
	"io"
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

// A failWriter takes n bytes, then fails every write.
type failWriter struct {
	n      int
	writes int // calls after the failure
}

var errFull = errors.New("full")

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n <= 0 {
		w.writes++
		return 0, errFull
	}
	if len(p) > w.n {
		n := w.n
		w.n = 0
		return n, errFull
	}
	w.n -= len(p)
	return len(p), nil
}

// A LogWriter keeps the first error and writes nothing after it; a short
// write with no error is io.ErrShortWrite.
func TestLogWriter(t *testing.T) {
	w := &failWriter{n: 5}
	l := &LogWriter{W: w}
	if n, err := l.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("first write: %d, %v", n, err)
	}
	if n, err := l.Write([]byte("defg")); n != 2 || !errors.Is(err, errFull) {
		t.Fatalf("second write: %d, %v", n, err)
	}
	if _, err := l.Write([]byte("h")); !errors.Is(err, errFull) || !errors.Is(l.Err, errFull) || w.writes != 0 {
		t.Fatalf("after the failure: %v, kept %v, %d writes to the writer", err, l.Err, w.writes)
	}
	short := &LogWriter{W: shortWriter{}}
	if _, err := short.Write([]byte("ab")); !errors.Is(err, io.ErrShortWrite) || !errors.Is(short.Err, io.ErrShortWrite) {
		t.Fatalf("short write: %v", err)
	}
}

type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return len(p) / 2, nil }

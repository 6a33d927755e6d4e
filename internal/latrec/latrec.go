// Package latrec is the latency histogram of tcpperf and smtp-source's
// interval logs: recorded into by the goroutines or loops that measure,
// and taken by the run once per interval (a progress line, an interval of
// the HdrHistogram log), without stopping the recording for longer than a
// swap.
package latrec

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Max is the largest latency a histogram holds, in nanoseconds; longer
// ones are recorded as Max.
const Max = int64(time.Hour)

// NewHist returns an empty histogram of latencies in nanoseconds, from 1
// to Max, to 3 significant digits.
func NewHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, Max, 3) }

// Record records ns in h, clamped to the range 1 to Max.
func Record(h *hdrhistogram.Histogram, ns int64) { h.RecordValue(min(max(ns, 1), Max)) }

// A Recorder is a histogram recorded into by many and taken once per
// interval.
type Recorder struct {
	mu         sync.Mutex
	cur, spare *hdrhistogram.Histogram
}

// New returns an empty Recorder.
func New() *Recorder { return &Recorder{cur: NewHist(), spare: NewHist()} }

// Record records ns, clamped to the histogram's range.
func (r *Recorder) Record(ns int64) {
	r.mu.Lock()
	Record(r.cur, ns)
	r.mu.Unlock()
}

// Lock and Unlock hold the recorder for RecordLocked: a batch of values
// (the responses of one read) under one lock.
func (r *Recorder) Lock()   { r.mu.Lock() }
func (r *Recorder) Unlock() { r.mu.Unlock() }

// RecordLocked records ns as Record does; the caller holds the lock.
func (r *Recorder) RecordLocked(ns int64) { Record(r.cur, ns) }

// Interval returns the values recorded since its last call (or since New)
// and starts the next interval. The histogram is valid until the next
// call; one goroutine calls it.
func (r *Recorder) Interval() *hdrhistogram.Histogram {
	r.spare.Reset()
	r.mu.Lock()
	h := r.cur
	r.cur = r.spare
	r.mu.Unlock()
	r.spare = h
	return h
}

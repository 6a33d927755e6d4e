package bench

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// wirespeed bench runs the benchmark bodies with its own driver, because
// testing.Benchmark takes its run time from the process-global
// -test.benchtime flag; the bodies take benchcase.B, which *testing.B also
// satisfies, so go test -bench runs the same code.

// A driver is one round of a benchmark body: n ops, timed from the body's
// first Loop call to its last, and while the body turns the timer on
// again after its loop (StartTimer, StopTimer: work the ops left to do),
// with the allocations in between counted through runtime.MemStats as
// testing.B does.
type driver struct {
	now func() time.Time
	n   int // ops this round

	i       int
	started bool
	stopped bool // the loop has ended
	timerOn bool
	start   time.Time
	elapsed time.Duration
	mem     runtime.MemStats
	mallocs uint64 // during the timed ops
	bytes   uint64
	err     error // from Fatal
	metrics map[string]float64

	startMallocs, startBytes uint64 // when the timer was started
}

// Loop reports whether the body should run another op. Its first call
// starts the timer, and the call that returns false stops it.
func (d *driver) Loop() bool {
	if !d.started {
		d.started = true
		d.StartTimer()
	}
	if d.i < d.n {
		d.i++
		return true
	}
	if !d.stopped {
		d.stopped = true
		d.StopTimer()
	}
	return false
}

// StartTimer starts timing again, as testing.B.StartTimer does: after
// the loop, for what its ops left undone (a final flush).
func (d *driver) StartTimer() {
	if d.timerOn {
		return
	}
	d.timerOn = true
	runtime.ReadMemStats(&d.mem)
	d.startMallocs, d.startBytes = d.mem.Mallocs, d.mem.TotalAlloc
	d.start = d.now()
}

// StopTimer stops timing, as testing.B.StopTimer does; measure stops it
// when the body returns.
func (d *driver) StopTimer() {
	if !d.timerOn {
		return
	}
	d.timerOn = false
	d.elapsed += d.now().Sub(d.start)
	runtime.ReadMemStats(&d.mem)
	d.mallocs += d.mem.Mallocs - d.startMallocs
	d.bytes += d.mem.TotalAlloc - d.startBytes
}

// Fatal ends the body, as testing.B.Fatal does, and fails the measurement
// with args (the error itself, when args is one error).
func (d *driver) Fatal(args ...any) {
	if err, ok := args[0].(error); ok && len(args) == 1 {
		d.err = err
	} else {
		d.err = errors.New(fmt.Sprint(args...))
	}
	runtime.Goexit()
}

// ReportMetric records a metric of the round, as testing.B.ReportMetric
// does: a value per op (by convention a unit ending in "/op") that the
// report gives beside the row.
func (d *driver) ReportMetric(n float64, unit string) {
	if d.metrics == nil {
		d.metrics = map[string]float64{}
	}
	d.metrics[unit] = n
}

// A measurement is the last round of a benchmark.
type measurement struct {
	N       int
	T       time.Duration
	Mallocs uint64
	Bytes   uint64
	Metrics map[string]float64 // from ReportMetric
}

func (m measurement) NsPerOp() float64 { return float64(m.T.Nanoseconds()) / float64(m.N) }
func (m measurement) AllocsPerOp() int64 {
	return int64(m.Mallocs / uint64(m.N))
}
func (m measurement) BytesPerOp() int64 { return int64(m.Bytes / uint64(m.N)) }

// maxOps bounds the ops of one round, as testing does.
const maxOps = 1e9

// measure runs body in rounds of growing op counts until a round takes at
// least benchtime on the clock now, and returns that round. Like
// testing.B, it runs one op first, then predicts the count from the rate
// so far with 20% to spare, at most 100 times the previous count.
func measure(body func(b *driver), benchtime time.Duration, now func() time.Time) (measurement, error) {
	for n := 1; ; {
		d := round(body, n, now)
		switch {
		case d.err != nil:
			return measurement{}, d.err
		case !d.stopped:
			return measurement{}, fmt.Errorf("the benchmark body returned before its loop ended (%d of %d ops)", d.i, n)
		}
		if d.elapsed >= benchtime || n >= maxOps {
			return measurement{N: n, T: d.elapsed, Mallocs: d.mallocs, Bytes: d.bytes, Metrics: d.metrics}, nil
		}
		ns := max(d.elapsed.Nanoseconds(), 1)
		next := int64(benchtime.Nanoseconds()) * int64(n) / ns
		next += next / 5
		next = min(next, 100*int64(n), maxOps)
		n = int(max(next, int64(n)+1))
	}
}

// round runs body once, its loop n ops, on the clock now.
func round(body func(b *driver), n int, now func() time.Time) *driver {
	runtime.GC() // do not charge this round for the garbage of the last
	d := &driver{now: now, n: n}
	done := make(chan struct{})
	go func() {
		defer close(done)
		body(d)
	}()
	<-done
	d.StopTimer() // a StartTimer after the loop, not stopped
	return d
}

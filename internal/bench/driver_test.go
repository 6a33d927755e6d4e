package bench

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/benchcase"
)

// fakeClock advances only when a body says so.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// The driver grows the op count until a round lasts the benchtime, times
// only the loop (not the setup before it), and reports the last round.
func TestMeasureRounds(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	var rounds []int
	body := func(b benchcase.B) {
		clock.advance(time.Hour) // setup: not measured
		n := 0
		for b.Loop() {
			clock.advance(time.Millisecond)
			n++
		}
		rounds = append(rounds, n)
	}
	m, err := measure(func(d *driver) { body(d) }, 100*time.Millisecond, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	// 1 op took 1ms: predict 100ms / 1ms + 20% = 120, capped at 100x.
	if want := []int{1, 100}; !slices.Equal(rounds, want) {
		t.Errorf("rounds of %v ops, want %v", rounds, want)
	}
	if m.N != 100 || m.T != 100*time.Millisecond || m.NsPerOp() != 1e6 {
		t.Errorf("measurement %+v (%v ns/op), want 100 ops in 100ms", m, m.NsPerOp())
	}

	// From a round of 10 ops at 1ms each, 20% over the prediction.
	clock.t = time.Unix(0, 0)
	rounds = nil
	fast := func(b benchcase.B) {
		n := 0
		for b.Loop() {
			if len(rounds) == 0 {
				clock.advance(10 * time.Microsecond) // the first round is quick
			} else {
				clock.advance(time.Millisecond)
			}
			n++
		}
		rounds = append(rounds, n)
	}
	if _, err := measure(func(d *driver) { fast(d) }, 100*time.Millisecond, clock.now); err != nil {
		t.Fatal(err)
	}
	// 1 op in 10µs: 100ms/10µs = 10000, +20% = 12000, capped at 100.
	// Then 100 ops at 1ms = 100ms: done.
	if want := []int{1, 100}; !slices.Equal(rounds, want) {
		t.Errorf("rounds of %v ops, want %v", rounds, want)
	}
}

var sink []byte

// Allocations are counted per op, inside the loop only. MemStats count
// the whole process's allocations, so a stray one (the runtime's, the
// test framework's) can land in a round: the best of a few rounds must
// be exact, which a driver that counted the setup never is.
func TestMeasureAllocs(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector allocates on its own")
	}
	clock := &fakeClock{t: time.Unix(0, 0)}
	body := func(b benchcase.B) {
		sink = make([]byte, 1<<20) // setup: not counted
		for b.Loop() {
			sink = make([]byte, 64)
			clock.advance(time.Millisecond)
		}
	}
	var got []string
	for range 5 {
		m, err := measure(func(d *driver) { body(d) }, 10*time.Millisecond, clock.now)
		if err != nil {
			t.Fatal(err)
		}
		if m.AllocsPerOp() == 1 && m.BytesPerOp() == 64 {
			return
		}
		got = append(got, fmt.Sprintf("%d allocs and %d bytes", m.AllocsPerOp(), m.BytesPerOp()))
	}
	t.Errorf("per op in 5 rounds: %s; want 1 and 64", strings.Join(got, ", "))
}

// Fatal ends the body and fails the measurement; a body that returns
// without finishing its loop fails it too.
func TestMeasureErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := measure(func(d *driver) {
		for d.Loop() {
			d.Fatal(boom)
		}
	}, time.Second, time.Now)
	if !errors.Is(err, boom) {
		t.Errorf("Fatal: %v", err)
	}
	_, err = measure(func(d *driver) {}, time.Second, time.Now)
	if err == nil {
		t.Error("a body without a loop measured")
	}
}

// StartTimer and StopTimer after the loop time the work its ops left
// (testing.B's do too), and a timer left on stops when the body returns.
func TestMeasureAfterLoop(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	m, err := measure(func(d *driver) {
		for d.Loop() {
			clock.advance(time.Millisecond)
		}
		clock.advance(time.Hour) // not timed
		d.StartTimer()
		clock.advance(time.Second)
		d.StopTimer()
		d.StartTimer()
		clock.advance(time.Second) // stopped by measure
	}, time.Second, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	if m.N != 1 || m.T != 2*time.Second+time.Millisecond {
		t.Errorf("measurement %+v; want 1 op in 2.001s", m)
	}
}

// The Coalescer row of netio.Writer times its final Flush: it ended the
// timing with the loop, so what the Writer still held then (up to its
// window, of the last writes) was counted in MB/s as sent within the
// time measured, before it was.
func TestCoalescerFlushTimed(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	flushed := 0
	fn := coalescerBench(64, true, func() {
		flushed++
		clock.advance(time.Hour) // the flush, on the test's clock
	})
	d := round(func(d *driver) { fn(d) }, 10, clock.now)
	if d.err != nil || !d.stopped || flushed != 1 {
		t.Fatalf("round: error %v, loop ended %v, %d flushes", d.err, d.stopped, flushed)
	}
	if d.elapsed < time.Hour {
		t.Errorf("the round took %v: the final Flush (an hour on this clock) was not timed", d.elapsed)
	}
}

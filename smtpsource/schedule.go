package smtpsource

import (
	"fmt"
	"math"
	"time"
)

// A Stage is a stretch of an open-loop schedule (Config.Stages): for
// Duration the rate of starts goes from From to To messages a second in a
// straight line (a ramp), or stays at From if To equals it.
type Stage struct {
	From, To float64
	Duration time.Duration
}

func (st Stage) String() string {
	if st.From == st.To {
		return fmt.Sprintf("%g/%s", st.From, st.Duration)
	}
	return fmt.Sprintf("%g:%g/%s", st.From, st.To, st.Duration)
}

// A schedule gives each message its intended start, in stages or at a
// constant rate.
type schedule struct {
	qps    float64 // constant rate, without stages
	stages []stageAt
	end    int64 // ns: the stages' end
	total  float64
}

// stageAt is a stage with where it falls: it starts at start (ns) with
// message first (as a fraction: the messages started before it) and holds
// n messages.
type stageAt struct {
	Stage
	start    int64
	first, n float64
}

func newSchedule(cfg *Config) *schedule {
	sc := &schedule{qps: cfg.QPS}
	var t int64
	var first float64
	for _, st := range cfg.Stages {
		n := (st.From + st.To) / 2 * st.Duration.Seconds()
		sc.stages = append(sc.stages, stageAt{st, t, first, n})
		t += int64(st.Duration)
		first += n
	}
	sc.end, sc.total = t, first
	return sc
}

// never is the start of a message the schedule never starts.
const never = math.MaxInt64

// at returns message k's intended start (ns from the run's start), or
// never, and the index of its stage (after the last stage, at the last
// stage's final rate, the last stage's).
func (sc *schedule) at(k int64) (t0 int64, stage int) {
	if sc.stages == nil {
		return nsAt(float64(k) * 1e9 / sc.qps), 0
	}
	kf := float64(k)
	for i, st := range sc.stages {
		if kf >= st.first+st.n {
			continue
		}
		// Messages started by t into the stage: From*t + a*t², a =
		// (To-From)/(2D); solved for t in the form that holds for From 0
		// and for a near 0.
		x := kf - st.first
		a := (st.To - st.From) / (2 * st.Duration.Seconds())
		d := st.From + math.Sqrt(st.From*st.From+4*a*x)
		var secs float64
		if d > 0 {
			secs = 2 * x / d
		}
		return st.start + int64(secs*1e9), i
	}
	last := len(sc.stages) - 1
	rate := sc.stages[last].To
	if rate <= 0 {
		return never, last
	}
	return nsAt(float64(sc.end) + (kf-sc.total)/rate*1e9), last
}

// nsAt is the time ns as an int64, or never where it would not fit.
func nsAt(ns float64) int64 {
	if ns >= math.MaxInt64 {
		return never
	}
	return int64(ns)
}

// checkStages checks Config.Stages.
func checkStages(stages []Stage) error {
	zero := true
	for _, st := range stages {
		if st.From < 0 || st.To < 0 || st.Duration <= 0 || math.IsNaN(st.From+st.To) || math.IsInf(st.From+st.To, 0) {
			return configErr("Stages", "stage %s", st)
		}
		zero = zero && st.From == 0 && st.To == 0
	}
	if len(stages) > 0 && zero {
		return configErr("Stages", "stages all at rate 0: no message is ever due")
	}
	return nil
}

package smtpsource

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"math"
	"sync/atomic"
	"testing"
	"time"
)

// The schedule's starts: a constant stage at k/rate, a ramp where the
// messages before t are From*t + (To-From)t²/(2D), the rate after the last
// stage held at its To (never with To 0), each message in its stage.
func TestScheduleAt(t *testing.T) {
	sc := newSchedule(&Config{Stages: []Stage{{500, 500, 10 * time.Second}, {100, 1000, 60 * time.Second}, {0, 0, time.Second}}})
	near := func(got int64, want float64) bool { return math.Abs(float64(got)/1e9-want) < 1e-6 }
	for _, c := range []struct {
		k     int64
		secs  float64
		stage int
	}{
		{0, 0, 0}, {1, 0.002, 0}, {4999, 9.998, 0},
		{5000, 10, 1},
		// 100t + 7.5t² = 9750 at t = 30.
		{5000 + 9750, 40, 1},
		// 100*60 + 7.5*3600 = 33000 messages in the ramp.
		{5000 + 32999, 10 + (-100+math.Sqrt(100*100+4*7.5*32999))/(2*7.5), 1},
	} {
		got, stage := sc.at(c.k)
		if !near(got, c.secs) || stage != c.stage {
			t.Errorf("message %d: %v in stage %d, want %.6fs in %d", c.k, time.Duration(got), stage, c.secs, c.stage)
		}
	}
	if got, stage := sc.at(38000); got != never || stage != 2 {
		t.Errorf("after a last stage at 0/s: %d in %d, want never", got, stage)
	}
	up := newSchedule(&Config{Stages: []Stage{{0, 20, 2 * time.Second}}})
	for k, want := range map[int64]float64{0: 0, 1: math.Sqrt(1.0 / 5), 19: math.Sqrt(19.0 / 5), 20: 2, 30: 2.5} {
		if got, _ := up.at(k); !near(got, want) {
			t.Errorf("0:20/2s: message %d at %v, want %.6fs", k, time.Duration(got), want)
		}
	}
	if err := checkStages([]Stage{{-1, 5, time.Second}}); !errors.Is(err, ErrConfig) {
		t.Errorf("negative rate: %v", err)
	}
	if err := checkStages([]Stage{{1, 5, 0}}); !errors.Is(err, ErrConfig) {
		t.Errorf("no duration: %v", err)
	}
}

// Duration ends the run: no message starts at or after it, in closed
// loop (a message every 100ms of the test's clock: 10 in 1s) and open
// loop (10/s: 10), and the result says no message limit was set. In
// closed loop with pipelining, the 11th message's MAIL, RCPT and DATA go
// out with the 10th's data, at 0.9s: it has started, and is finished. In
// open loop, a message due before the end but not started by then, every
// session being busy, is missed, not sent late: a rate far above what
// the server takes must not stretch the run without end.
func TestDuration(t *testing.T) {
	for _, c := range []struct {
		name   string
		cfg    Config
		dot    time.Duration // the server's time for a message's data
		n      int64         // started and delivered
		missed int64
		secs   float64
	}{
		{"closed-loop", Config{Reuse: true}, 100 * time.Millisecond, 10, 0, 1},
		{"closed-loop-pipelined", Config{Reuse: true, Pipelining: true}, 100 * time.Millisecond, 11, 0, 1.1},
		{"closed-loop-new-connections", Config{}, 100 * time.Millisecond, 10, 0, 1},
		{"open-loop", Config{Reuse: true, QPS: 10}, 100 * time.Millisecond, 10, 0, 1},
		{"open-loop-pipelined", Config{Reuse: true, QPS: 10, Pipelining: true}, 100 * time.Millisecond, 10, 0, 1},
		// Messages of 300ms at 10/s on one session: they start at 0,
		// 0.3, 0.6 and 0.9s; at 1.2s the 6 others, due before 1s, are
		// missed. Pipelined, the 5th starts at 0.9s too, its commands
		// going out with the 4th's data, and ends at 1.5s.
		{"open-loop-late", Config{Reuse: true, QPS: 10}, 300 * time.Millisecond, 4, 6, 1.2},
		{"open-loop-late-pipelined", Config{Reuse: true, QPS: 10, Pipelining: true}, 300 * time.Millisecond, 5, 5, 1.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := newFakeClock()
			f := &fakeServer{clk: clk, ext: []string{"PIPELINING"}, delay: map[string]time.Duration{".": c.dot}}
			cfg := base(f.start(t))
			cfg.Reuse, cfg.Pipelining, cfg.QPS, cfg.Duration = c.cfg.Reuse, c.cfg.Pipelining, c.cfg.QPS, time.Second
			res, err := RunWith(context.Background(), cfg, nil, clk)
			if err != nil || res.Errors != 0 {
				t.Fatalf("%+v, %v", res, err)
			}
			if res.Delivered != c.n || res.Started != c.n || res.Missed != c.missed || res.Messages != 0 || res.DurationLimitS != 1 || res.DurationS != c.secs {
				t.Errorf("delivered %d of %d started, %d missed, messages %d, limit %vs, ran %vs; want %d, %[7]d, %d, 0, 1, %v",
					res.Delivered, res.Started, res.Missed, res.Messages, res.DurationLimitS, res.DurationS, c.n, c.missed, c.secs)
			}
		})
	}
	// With a message limit, whichever comes first.
	clk := newFakeClock()
	f := &fakeServer{clk: clk, delay: map[string]time.Duration{".": 100 * time.Millisecond}}
	cfg := base(f.start(t))
	cfg.Reuse, cfg.Duration, cfg.Messages = true, time.Second, 4
	if res, err := RunWith(context.Background(), cfg, nil, clk); err != nil || res.Delivered != 4 || res.Messages != 4 {
		t.Errorf("-m 4 -duration 1s: %+v, %v", res, err)
	}
}

// A wait between messages (-w, -R: the same path) that would end past
// Duration ends with it: the run stops at Duration, not a whole wait later (-w 1
// -duration 300ms ran 1s). The test's clock moves only as the run waits.
func TestDurationEndsWait(t *testing.T) {
	for _, c := range []Config{{Wait: time.Second}, {Wait: time.Hour}} {
		clk := newFakeClock()
		f := &fakeServer{clk: clk, delay: map[string]time.Duration{".": 100 * time.Millisecond}}
		cfg := base(f.start(t))
		cfg.Reuse, cfg.Duration, cfg.Messages, cfg.Wait = true, 300*time.Millisecond, 3, c.Wait
		res, err := RunWith(context.Background(), cfg, nil, clk)
		if err != nil || res.Delivered != 1 || res.Started != 1 || res.Errors != 0 || res.DurationS != 0.3 {
			t.Errorf("-w %v -duration 300ms: %+v, %v; want 1 delivered, in 0.3s", c.Wait, res, err)
		}
	}
}

// So does the back-off after a refused greeting: against a server that
// refuses them all, the connections go at 0, 10, 30, 70 and 150ms, and
// the back-off after the fifth, to 310ms, ends at 300ms with the run.
func TestDurationEndsBackoff(t *testing.T) {
	clk := newFakeClock()
	f := &fakeServer{reply: func(verb, arg string) string {
		if verb == "CONNECT" {
			return "421 4.3.2 busy, try later"
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Duration = 300 * time.Millisecond
	res, err := RunWith(context.Background(), cfg, nil, clk)
	if err != nil || res.Connections != 5 || res.ConnectRefusals != 5 || res.Delivered != 0 || res.DurationS != 0.3 {
		t.Errorf("%+v, %v; want 5 refused connections in 0.3s", res, err)
	}
}

// Stages: 10/s for 1s, then 20/s for 1s; with no message limit the run
// lasts the stages' 2s. The first stage's messages take 5ms, the second's
// 20ms: each stage's latencies are its own, in the result and under its
// tag in the interval log.
func TestStages(t *testing.T) {
	clk := newFakeClock()
	var n atomic.Int64
	f := &fakeServer{clk: clk, delayFor: func(verb, arg string) time.Duration {
		if verb != "." {
			return 0
		}
		if n.Add(1) <= 10 {
			return 5 * time.Millisecond
		}
		return 20 * time.Millisecond
	}}
	cfg := base(f.start(t))
	var hlog, progress bytes.Buffer
	cfg.Reuse, cfg.HdrLog, cfg.Progress = true, &hlog, &progress
	cfg.Stages = []Stage{{10, 10, time.Second}, {20, 20, time.Second}}
	res, err := RunWith(context.Background(), cfg, nil, clk)
	if err != nil || res.Delivered != 30 || res.Errors != 0 || res.DurationLimitS != 2 || len(res.Stages) != 2 {
		t.Fatalf("%+v, %v", res, err)
	}
	for i, want := range []struct {
		n   int64
		lat time.Duration
	}{{10, 5 * time.Millisecond}, {20, 20 * time.Millisecond}} {
		h := newHist()
		for range want.n {
			record(h, int64(want.lat))
		}
		st := res.Stages[i]
		if m := st.Message; m == nil || *m != *latency(h) || st.Failed != nil {
			t.Errorf("stage %d: %+v %+v, want %d messages of %v", i+1, st.Message, st.Failed, want.n, want.lat)
		}
	}
	if s := res.Stages[1]; s.From != 20 || s.To != 20 || s.StartS != 1 || s.DurationS != 1 {
		t.Errorf("stage 2: %+v", s)
	}
	byTag := logCounts(t, &hlog)
	want := map[string]int64{"": 30, "stage1": 10, "stage2": 20, "connect": 1, "banner": 1, "ehlo": 1, "mail": 30, "rcpt": 30, "data": 30, "dot": 30}
	if !maps.Equal(byTag, want) {
		t.Errorf("the log holds %v latencies by tag, want %v", byTag, want)
	}
	if !bytes.Contains(progress.Bytes(), []byte("stage 2")) {
		t.Errorf("progress:\n%s", progress.String())
	}

	// A ramp from 0 to 20/s over 2s: 20 messages.
	clk = newFakeClock()
	f = &fakeServer{clk: clk}
	cfg = base(f.start(t))
	cfg.Reuse, cfg.Stages = true, []Stage{{0, 20, 2 * time.Second}}
	res, err = RunWith(context.Background(), cfg, nil, clk)
	if err != nil || res.Delivered != 20 || res.Stages[0].Message.Count != 20 || res.Lateness == nil {
		t.Fatalf("ramp: %+v, %v", res, err)
	}
	// A ramp from 10/s down to 0 over 1s schedules 5 of 100 messages: the
	// other 95 are never due, which the result says.
	clk = newFakeClock()
	f = &fakeServer{clk: clk}
	cfg = base(f.start(t))
	cfg.Reuse, cfg.Messages, cfg.Stages = true, 100, []Stage{{10, 0, time.Second}}
	res, err = RunWith(context.Background(), cfg, nil, clk)
	if err != nil || res.Started != 5 || res.Delivered != 5 || res.Unscheduled != 95 || res.Missed != 0 {
		t.Errorf("ramp down to 0: %d started, %d delivered, %d unscheduled, %d missed, %v; want 5, 5, 95, 0", res.Started, res.Delivered, res.Unscheduled, res.Missed, err)
	}
	for _, bad := range []Config{{QPS: 5, Stages: cfg.Stages}, {Stages: []Stage{{5, 5, -time.Second}}}, {Duration: -1}, {Stages: cfg.Stages, Wait: time.Second},
		{Stages: []Stage{{0, 0, time.Second}, {0, 0, time.Hour}}, Messages: 5}} { // all at rate 0: no message due (ran, sending none)
		bad.Addr = "x"
		if _, err := Run(context.Background(), bad); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", bad, err)
		}
	}
}

// A QPS that is not a finite number is ErrConfig, as a stage's rate
// is: NaN ran in closed loop and +Inf sent everything at once, and
// either made a Result that encoding/json cannot marshal (TargetQPS).
func TestQPSNotFinite(t *testing.T) {
	for _, q := range []float64{math.NaN(), math.Inf(1)} {
		if err := (Config{Addr: "127.0.0.1:25", QPS: q}).Check(); !errors.Is(err, ErrConfig) {
			t.Errorf("QPS %v: %v, want ErrConfig", q, err)
		}
	}
}

package tcpperf

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A run that received nothing has no latency percentiles, and one that
// sent nothing no send lateness: its JSON leaves them out, as the text
// prints "-", where it wrote 0, which read as 0 µs measured. A latency of
// 0 measured (a fake clock's) is written.
func TestResultJSONNothingMeasured(t *testing.T) {
	latency := []string{`"p50_us"`, `"p90_us"`, `"p99_us"`, `"p999_us"`, `"p9999_us"`, `"max_us"`, `"mean_us"`}
	lateness := []string{`"send_lateness_p50_us"`, `"send_lateness_p99_us"`, `"send_lateness_max_us"`}
	for _, c := range []struct {
		res                   Result
		wantLatency, wantLate bool
	}{
		{Result{Mode: "echo", Conns: 1, TargetQPS: 100}, false, false},
		{Result{Mode: "echo", Conns: 1, TargetQPS: 100, Sent: 10, LatenessP99: 3}, false, true},
		{Result{Mode: "echo", Conns: 1, Sent: 10, Received: 10}, true, true}, // 0 µs measured
		{Result{Mode: "ping-pong", P50: 12, P99: 30}, true, false},           // percentiles from elsewhere (bench's sockperf)
	} {
		b, err := json.Marshal(c.res)
		if err != nil {
			t.Fatal(err)
		}
		js := string(b)
		for _, keys := range []struct {
			keys []string
			want bool
		}{{latency, c.wantLatency}, {lateness, c.wantLate}} {
			for _, k := range keys.keys {
				if strings.Contains(js, k) != keys.want {
					t.Errorf("%+v: %s in its JSON: %v, want %v: %s", c.res, k, !keys.want, keys.want, js)
				}
			}
		}
		if !strings.Contains(js, `"received":`) || !strings.Contains(js, `"sent":`) {
			t.Errorf("counts left out: %s", js)
		}
		var back Result
		if err := json.Unmarshal(b, &back); err != nil || back != c.res {
			t.Errorf("decoded %+v (%v), want %+v", back, err, c.res)
		}
	}
}

// A run stopped in its warm-up measured nothing: its tool CPU figures
// are 0 and left out of its JSON. tool_cpu_util was the warm-up's CPU
// (0.42 of a core), and over the microseconds after a stop at the start
// 2.09, beside duration_s 0.
func TestStoppedInWarmup(t *testing.T) {
	addr := server(t, echo)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := newFakeClock()
	stopAt := clk.Now().Add(500 * time.Millisecond) // in the warm-up
	clk.Moved = func(now time.Time) {
		if !now.Before(stopAt) {
			cancel()
		}
	}
	var cpu atomic.Int64 // a second of CPU a call: the old figure was far from 0
	var hlog bytes.Buffer
	res, err := RunEnv(ctx, Config{Addr: addr, QPS: 100, MsgSize: 16, Warmup: time.Hour, Duration: time.Second, HdrLog: &hlog},
		Env{Clock: clk, CPU: func() time.Duration { return time.Duration(cpu.Add(int64(time.Second))) }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.DurationS != 0 || res.CPUUtil != 0 || res.CPUPerMsg != 0 || res.LoopBusy != 0 {
		t.Errorf("stopped in the warm-up: interrupted %v, duration %gs, tool CPU %g µs/msg, %g of a core, busy %g; want no figures",
			res.Interrupted, res.DurationS, res.CPUPerMsg, res.CPUUtil, res.LoopBusy)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"tool_cpu_util"`, `"tool_cpu_per_msg_us"`, `"tool_loop_busy"`} {
		if strings.Contains(string(b), k) {
			t.Errorf("%s in the JSON of a run that measured nothing: %s", k, b)
		}
	}
	// Nor does the interval log's last comment give figures (it said
	// "tool CPU 0.00 µs/msg, 0% of one core").
	if !strings.Contains(hlog.String(), "#[tcpperf tool CPU - (nothing measured)]") {
		t.Errorf("the interval log of a run that measured nothing:\n%s", hlog.String())
	}
	// A run that measured keeps them, zeros too.
	b, _ = json.Marshal(Result{Mode: "echo", DurationS: 1})
	if !strings.Contains(string(b), `"tool_cpu_util":0`) {
		t.Errorf("measured: %s", b)
	}
}

// EngineNetio's loops do not measure LoopBusy: its JSON said
// "tool_loop_busy":0, a figure nothing measured.
func TestJSONNetioBusy(t *testing.T) {
	b, _ := json.Marshal(Result{Mode: "echo", Engine: EngineNetio, DurationS: 1})
	if strings.Contains(string(b), `"tool_loop_busy"`) || !strings.Contains(string(b), `"tool_cpu_util":0`) {
		t.Errorf("netio: %s", b)
	}
	b, _ = json.Marshal(Result{Mode: "echo", Engine: EngineTcpperf, DurationS: 1})
	if !strings.Contains(string(b), `"tool_loop_busy":0`) {
		t.Errorf("tcpperf's loops, measured 0: %s", b)
	}
}

// A run in which no message was due (its connections closed in the
// warm-up) has no CPU time per message: tool_cpu_per_msg_us read 0, as
// if each had cost nothing.
func TestJSONNoMessageCPU(t *testing.T) {
	b, _ := json.Marshal(Result{Mode: "echo", Engine: EngineTcpperf, DurationS: 0.2, CPUUtil: 0.003, ReadErrors: 2, Errors: 2})
	if strings.Contains(string(b), `"tool_cpu_per_msg_us"`) || !strings.Contains(string(b), `"tool_cpu_util":0.003`) {
		t.Errorf("nothing sent: %s", b)
	}
	b, _ = json.Marshal(Result{Mode: "echo", Engine: EngineTcpperf, DurationS: 0.2, Sent: 5})
	if !strings.Contains(string(b), `"tool_cpu_per_msg_us":0`) {
		t.Errorf("5 sent, measured 0: %s", b)
	}
}

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/serve"
	"github.com/wirespeed/wirespeed/internal/tooltest"
	"github.com/wirespeed/wirespeed/tcpperf"
)

// buildWirespeed builds the wirespeed command (with the test's race
// setting, so the build cache is shared) for tests that run it as child
// processes.
func buildWirespeed(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the wirespeed binary")
	}
	bin := filepath.Join(t.TempDir(), "wirespeed")
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, "github.com/wirespeed/wirespeed/cmd/wirespeed")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if raceBuild {
		// A race-enabled process sleeps 1s at exit (ThreadSanitizer's
		// atexit_sleep_ms); with two children per row that was most of
		// the test's time.
		t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	return bin
}

// buildCompare builds the comparison module's binary (gnet, evio and
// netpoll) with the test's race setting.
func buildCompare(t *testing.T) string {
	t.Helper()
	var flags []string
	if raceBuild {
		flags = append(flags, "-race")
	}
	exe, err := serve.BuildCompare(context.Background(), t.TempDir(), flags...)
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestBenchNet(t *testing.T) {
	bin := buildWirespeed(t)
	compare := buildCompare(t)
	points, err := parseNetPoints("open=echo/2/200/0,closed=line/2/0/4")
	if err != nil {
		t.Fatal(err)
	}
	cfg := netConfig{
		exe: bin, compareExe: compare, engines: serve.Engines(), points: points,
		duration: 300 * time.Millisecond, warmup: 100 * time.Millisecond, msgSize: 64,
		serverCPU: 0, clientCPU: 1,
	}
	pinned := runtime.NumCPU() >= 2 && canPin
	if !pinned {
		cfg.serverCPU, cfg.clientCPU = -1, -1
	}
	rows := benchNet(context.Background(), cfg, &bytes.Buffer{})
	if want := 2 * len(serve.Engines()); len(rows) != want {
		t.Fatalf("%d rows, want %d", len(rows), want)
	}
	for _, r := range rows {
		if r.Err != "" || r.Result == nil {
			t.Errorf("%s/%s: %s", r.Point, r.Engine, r.Err)
			continue
		}
		if r.Result.Errors != 0 || r.Result.Received == 0 {
			t.Errorf("%s/%s: %+v", r.Point, r.Engine, *r.Result)
		}
		if r.serverCPU() <= 0 || r.serverRSS() <= 0 {
			t.Errorf("%s/%s: no server usage: %+v", r.Point, r.Engine, r)
		}
		if pinned && (r.ServerCPUs != "0" || r.ClientCPUs != "1") {
			t.Errorf("%s/%s: server on CPUs %q, client on %q; want 0 and 1", r.Point, r.Engine, r.ServerCPUs, r.ClientCPUs)
		}
	}
	var out bytes.Buffer
	if err := printNetTable(&out, cfg, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"open: echo mode, 2 conns, open loop 200 msg/s", "closed: line mode, 2 conns, closed loop, depth 4", "netio", "evio", "netpoll", "p99.99 µs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// bench net -wait batch -batch D runs tcpperf so, and the table says how
// it waited and how late it sent.
func TestBenchNetBatch(t *testing.T) {
	bin := buildWirespeed(t)
	points, err := parseNetPoints("open=echo/4/400/0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := netConfig{
		exe: bin, engines: []string{"std"}, points: points,
		duration: 200 * time.Millisecond, warmup: 50 * time.Millisecond, msgSize: 64,
		serverCPU: -1, clientCPU: -1, wait: "batch", batch: time.Millisecond,
	}
	rows := benchNet(context.Background(), cfg, &bytes.Buffer{})
	if len(rows) != 1 || rows[0].Result == nil {
		t.Fatalf("rows %+v", rows)
	}
	if r := rows[0].Result; r.Wait != tcpperf.WaitBatch || r.BatchUs != 1000 || r.Arrival != tcpperf.ArrivalKernel || r.Errors != 0 {
		t.Errorf("tcpperf ran %s %gµs arrival %s, errors %d; want batch 1000µs kernel, none", r.Wait, r.BatchUs, r.Arrival, r.Errors)
	}
	var out bytes.Buffer
	if err := printNetTable(&out, cfg, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"late p99", "tool µs/msg", "batch 1000µs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// sockperf's server on port 0 is found once it says it is ready, and its
// ping-pong percentiles are read.
func TestBenchNetSockperf(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sockperf for a second")
	}
	path := tooltest.Path(t, "sockperf")
	if !canPin {
		t.Skip("finding sockperf's port needs Linux")
	}
	cfg := netConfig{duration: 500 * time.Millisecond, msgSize: 64, serverCPU: -1, clientCPU: -1}
	row := runSockperf(context.Background(), cfg, netPoint{Name: "low", Mode: "echo", Conns: 1, QPS: 1000}, path)
	if row.Err != "" || row.Result == nil {
		t.Fatalf("sockperf row: %+v", row)
	}
	if r := row.Result; r.P50 <= 0 || r.P99 < r.P50 || r.Max < r.P99 {
		t.Errorf("percentiles %+v", *r)
	}
	// bench net does not measure sockperf's server: its CPU and RSS are
	// absent from the JSON, as the table shows "-" (they read 0, as if
	// measured).
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"server_cpu_s", "server_peak_rss_mb"} {
		if v, ok := fields[f]; ok {
			t.Errorf("sockperf row has %s %v: %s", f, v, b)
		}
	}
}

// listeningPorts finds this process's listener.
func TestListeningPorts(t *testing.T) {
	if !canPin {
		t.Skip("needs Linux's /proc")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ports, err := listeningPorts(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if port := ln.Addr().(*net.TCPAddr).Port; !slices.Contains(ports, port) {
		t.Errorf("ports %v lack %d", ports, port)
	}
}

func TestParseNetPoints(t *testing.T) {
	ps, err := parseNetPoints(defaultNetPoints)
	if err != nil || len(ps) != 4 || ps[2] != (netPoint{Name: "10k", Mode: "echo", Conns: 10000, QPS: 20000}) ||
		ps[3] != (netPoint{Name: "pipelined", Mode: "line", Conns: 100, Depth: 16}) {
		t.Fatalf("%+v, %v", ps, err)
	}
	for _, bad := range []string{"", "x", "a=echo/1/1", "a=http/1/1/0", "a=echo/0/1/0", "a=line/1/0/0", "a=echo/x/1/0", "a=echo/1/1/0,a=line/1/0/1"} {
		if _, err := parseNetPoints(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// The error names the field and what is wrong with it: each of these
	// was "bad numbers".
	for _, c := range []struct{ points, want string }{
		{"a=echo/10/0/0", `DEPTH 0: closed loop (QPS 0) wants 1 or more in flight per connection`},
		{"a=line/10/0/-2", `DEPTH -2: closed loop (QPS 0) wants 1 or more`},
		{"a=echo/10/0/x", `DEPTH "x": want a whole number`},
		{"a=echo/0/100/0", `CONNS "0": want a whole number, 1 or more`},
		{"a=echo/1.5/100/0", `CONNS "1.5": want a whole number`},
		{"a=echo/10/-1/0", `QPS "-1": want a rate, or 0 for closed loop`},
		{"a=echo/10/fast/0", `QPS "fast": want a rate`},
	} {
		_, err := parseNetPoints(c.points)
		if want := fmt.Sprintf("point %q: %s", c.points, c.want); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", c.points, err, want)
		}
	}
}

// The percentiles of a real sockperf 3.7 ping-pong run.
func TestParseSockperf(t *testing.T) {
	out, err := os.ReadFile("testdata/sockperf-ping-pong.txt")
	if err != nil {
		t.Fatal(err)
	}
	var sp sockperfResult
	if !parseSockperf(string(out), &sp) {
		t.Fatal("no percentiles found")
	}
	want := tcpperf.Result{P50: 13.430, P90: 64.546, P99: 2886.599, P999: 2955.803, P9999: 4883.845, Max: 4883.845}
	if res := *sp.result(); res != want {
		t.Errorf("got %+v\nwant %+v", res, want)
	}
	if parseSockperf("sockperf: ERROR: connect failed\n", &sockperfResult{}) {
		t.Error("percentiles found in an error message")
	}
}

// The sockperf row's result in -json is what it measured: the
// percentiles sockperf printed, and its load. It was a tcpperf.Result
// whose other fields sockperf does not measure read 0 (sent, received,
// errors, achieved_qps, duration_s, mean_us, ...), as if measured; and a
// percentile sockperf did not print read 0 µs (the table 0.0).
func TestSockperfRowJSON(t *testing.T) {
	out, err := os.ReadFile("testdata/sockperf-ping-pong.txt")
	if err != nil {
		t.Fatal(err)
	}
	p := netPoint{Name: "low", Mode: "echo", Conns: 10, QPS: 1000}
	cfg := netConfig{points: []netPoint{p}, msgSize: 64, serverCPU: -1, clientCPU: -1}
	for _, c := range []struct {
		name, out string
		want      []string
	}{
		{"all", string(out), []string{"mode", "conns", "target_qps", "msg_size", "p50_us", "p90_us", "p99_us", "p999_us", "p9999_us", "max_us"}},
		// An output without the 99.99th percentile.
		{"no p99.99", regexp.MustCompile(`(?m)^.*percentile 99\.990 .*\n`).ReplaceAllString(string(out), ""),
			[]string{"mode", "conns", "target_qps", "msg_size", "p50_us", "p90_us", "p99_us", "p999_us", "max_us"}},
	} {
		row, ok := sockperfRow(p, cfg.msgSize, c.out)
		if !ok {
			t.Fatalf("%s: no percentiles found", c.name)
		}
		var js, table bytes.Buffer
		if err := reportNet(&js, cfg, true, []netRow{row}, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Points []struct {
				Engine string         `json:"engine"`
				Result map[string]any `json:"result"`
			} `json:"points"`
		}
		if err := json.Unmarshal(js.Bytes(), &rep); err != nil || len(rep.Points) != 1 {
			t.Fatalf("%s: %v: %s", c.name, err, js.String())
		}
		res := rep.Points[0].Result
		keys := slices.Sorted(maps.Keys(res))
		if want := slices.Sorted(slices.Values(c.want)); rep.Points[0].Engine != "sockperf" || !slices.Equal(keys, want) {
			t.Errorf("%s: the sockperf row's result has %q; want %q:\n%s", c.name, keys, want, js.String())
		}
		if res["p50_us"] != 13.43 || res["max_us"] != 4883.845 || res["target_qps"] != 1000.0 || res["msg_size"] != 64.0 {
			t.Errorf("%s: result %v", c.name, res)
		}
		if err := printNetTable(&table, cfg, []netRow{row}); err != nil {
			t.Fatal(err)
		}
		want := `(?m)^sockperf +13\.4 +2886\.6 +4883\.8 +- `
		if c.name == "no p99.99" {
			want = `(?m)^sockperf +13\.4 +2886\.6 +- +- `
		}
		if !regexp.MustCompile(want).MatchString(table.String()) {
			t.Errorf("%s: table row does not match %q:\n%s", c.name, want, table.String())
		}
	}
}

// The rate search at a -step point runs the point's rate up by stepFactor
// per engine, and -plot draws each point's curves, one per engine. (Which
// rate keeps p99 under 1 ms is the benchmark's result, not asserted.)
func TestBenchNetStepAndPlot(t *testing.T) {
	bin := buildWirespeed(t)
	points, err := parseNetPoints("open=echo/2/300/0")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := netConfig{
		exe: bin, engines: []string{"std", "netio"}, points: points,
		duration: 200 * time.Millisecond, warmup: 50 * time.Millisecond, msgSize: 64,
		serverCPU: -1, clientCPU: -1, step: "open", plot: filepath.Join(dir, "net.svg"), logDir: dir,
	}
	rows := benchNet(context.Background(), cfg, &bytes.Buffer{})
	steps := stepNet(context.Background(), cfg, rows, &bytes.Buffer{})
	if len(steps) != 2 {
		t.Fatalf("%d step searches, want 2", len(steps))
	}
	for _, st := range steps {
		if len(st.Rows) < 1 || len(st.Rows) > maxSteps+1 {
			t.Fatalf("%s: %d runs", st.Engine, len(st.Rows))
		}
		found := st.Best == 0
		for i, r := range st.Rows {
			if r.Result == nil {
				t.Fatalf("%s run %d: %s", st.Engine, i, r.Err)
			}
			want := 300 * math.Pow(stepFactor, float64(i))
			if math.Abs(r.Result.TargetQPS-want) > 1 {
				t.Errorf("%s run %d at %.0f msg/s, want %.0f", st.Engine, i, r.Result.TargetQPS, want)
			}
			found = found || r.Result.TargetQPS == st.Best
		}
		if !found {
			t.Errorf("%s: best %.0f is none of its runs' rates", st.Engine, st.Best)
		}
	}
	var out bytes.Buffer
	if err := printSteps(&out, steps); err != nil || !strings.Contains(out.String(), "the highest open-loop rate") {
		t.Errorf("steps table: %v\n%s", err, out.String())
	}
	if err := plotNet(cfg, rows); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "net-open.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range cfg.engines {
		if !strings.Contains(string(b), `class="curve" data-name="`+e+`"`) {
			t.Errorf("plot lacks a curve for %s", e)
		}
	}
}

// ratePasses wants more than half of a rate's runs good; medianRun picks
// the run with the median p99 among those at the rate.
func TestStepMajorityAndMedian(t *testing.T) {
	run := func(qps, p99 float64, errs int64) netRow {
		return netRow{Result: &tcpperf.Result{TargetQPS: qps, AchievedQPS: qps, P99: p99, Errors: errs, Sent: 10, Received: 10}}
	}
	for _, tc := range []struct {
		rs   []netRow
		want bool
	}{
		{[]netRow{run(100, 500, 0)}, true},
		{[]netRow{run(100, 1500, 0)}, false},
		{[]netRow{run(100, 500, 0), run(100, 1500, 0)}, false}, // half is not more than half
		{[]netRow{run(100, 500, 0), run(100, 1500, 0), run(100, 900, 0)}, true},
		{[]netRow{run(100, 500, 0), run(100, 600, 1), run(100, 1900, 0)}, false}, // errors fail a run
		{[]netRow{{Err: "start: no"}, run(100, 500, 0), run(100, 400, 0)}, true},
		{[]netRow{{Result: &tcpperf.Result{TargetQPS: 100, AchievedQPS: 90, P99: 100}}}, false}, // rate not reached
	} {
		if got := ratePasses(tc.rs, 100); got != tc.want {
			t.Errorf("ratePasses(%v) = %v, want %v", tc.rs, got, tc.want)
		}
	}
	rs := []netRow{run(100, 900, 0), run(150, 50, 0), run(100, 300, 0), run(100, 2000, 0), {Err: "x"}}
	if m := medianRun(rs, 100); m == nil || m.Result.P99 != 900 {
		t.Errorf("median run at 100: %+v, want p99 900", m)
	}
	if m := medianRun(rs, 150); m == nil || m.Result.P99 != 50 {
		t.Errorf("median run at 150: %+v, want p99 50", m)
	}
	if m := medianRun(rs, 225); m != nil {
		t.Errorf("median run at a rate not run: %+v", m)
	}
	// A run that received nothing has no p99: it was the median, its p99
	// 0 ("p99 µs one step up" 0.0).
	none := netRow{Result: &tcpperf.Result{TargetQPS: 225, Sent: 10, Errors: 10, Unanswered: 10}}
	if m := medianRun(append(rs, none), 225); m != nil {
		t.Errorf("median run of none received: %+v", m)
	}
}

// A run that received nothing shows no latencies, not 0.0 µs (tcpperf
// itself prints "-", and leaves them out of its JSON), one that sent
// nothing no send lateness, and one that measured nothing (duration 0) no
// rate or tool CPU.
func TestNetRowNothingReceived(t *testing.T) {
	rss, cpu := 10.0, 1.0
	cfg := netConfig{points: []netPoint{{Name: "p", Mode: "echo", Conns: 2, QPS: 100}}}
	row := netRow{Point: "p", Engine: "std", ServerRSSMB: &rss, ServerCPUSec: &cpu,
		Result: &tcpperf.Result{Conns: 2, Connected: 2, TargetQPS: 100, DurationS: 1, Sent: 100, SentAll: 100, Errors: 100, Unanswered: 100, CPUPerMsg: 3}}
	var out bytes.Buffer
	if err := printNetTable(&out, cfg, []netRow{row}); err != nil {
		t.Fatal(err)
	}
	// engine p50 p99 p99.99 msg/s srv-CPU CPU/msg RSS KiB/conn errors late50 late99 tool
	want := []string{"std", "-", "-", "-", "0", "1.00", "10000.00", "10.0", "5120.0", "100", "0.0", "0.0", "3.00"}
	if fields := strings.Fields(lineOf(out.String(), "std")); !slices.Equal(fields, want) {
		t.Errorf("nothing received: row %q, want %q:\n%s", fields, want, out.String())
	}

	row.Result = &tcpperf.Result{Conns: 2, Connected: 2, TargetQPS: 100}
	out.Reset()
	if err := printNetTable(&out, cfg, []netRow{row}); err != nil {
		t.Fatal(err)
	}
	want = []string{"std", "-", "-", "-", "-", "1.00", "-", "10.0", "5120.0", "0", "-", "-", "-"}
	if fields := strings.Fields(lineOf(out.String(), "std")); !slices.Equal(fields, want) {
		t.Errorf("nothing measured: row %q, want %q:\n%s", fields, want, out.String())
	}
}

// With -step-runs 2, every rate of the search is run twice (the point's
// own run and one more at its rate).
func TestBenchNetStepRuns(t *testing.T) {
	bin := buildWirespeed(t)
	points, err := parseNetPoints("open=echo/2/300/0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := netConfig{
		exe: bin, engines: []string{"std"}, points: points,
		duration: 200 * time.Millisecond, warmup: 50 * time.Millisecond, msgSize: 64,
		serverCPU: -1, clientCPU: -1, step: "open", stepRuns: 2,
	}
	rows := benchNet(context.Background(), cfg, &bytes.Buffer{})
	steps := stepNet(context.Background(), cfg, rows, &bytes.Buffer{})
	if len(steps) != 1 || steps[0].Runs != 2 {
		t.Fatalf("steps %+v", steps)
	}
	st := steps[0]
	if len(st.Rows)%2 != 0 || len(st.Rows) < 2 {
		t.Fatalf("%d runs, want two a rate", len(st.Rows))
	}
	for i, r := range st.Rows {
		if r.Result == nil {
			t.Fatalf("run %d: %s", i, r.Err)
		}
		want := 300 * math.Pow(stepFactor, float64(i/2))
		if math.Abs(r.Result.TargetQPS-want) > 1 {
			t.Errorf("run %d at %.0f msg/s, want %.0f", i, r.Result.TargetQPS, want)
		}
	}
	var out bytes.Buffer
	if err := printSteps(&out, steps); err != nil || !strings.Contains(out.String(), "more than half of 2 runs a rate") {
		t.Errorf("steps table: %v\n%s", err, out.String())
	}
}

// What every tcpperf child would refuse, or a -step that names no
// open-loop point, is a usage error before anything runs: bench net
// printed "-5-byte messages, -1s measured" and then failed each engine in
// its tcpperf child, and ignored -step nope.
func TestNetFlagsChecked(t *testing.T) {
	for _, args := range [][]string{
		{"-duration", "0"}, {"-duration", "-1s"}, {"-warmup", "-1s"}, {"-msg-size", "0"}, {"-msg-size", "-5"},
		{"-wait", "nope"}, {"-server-cpu", "-2"}, {"-step-runs", "0"},
		{"-points", "low=echo/10/NaN/0"}, {"-points", "low=echo/10/+Inf/0"},
		// A depth with a rate was ignored.
		{"-points", "low=echo/10/1000/5"}, {"-points", "low=echo/10/1000/-1"},
		{"-step", "nope"}, {"-points", "c=echo/10/0/1", "-step", "c"},
		// Ran twice, or skipped the experiment, or ran nothing.
		{"-points", "x=echo/1/100/0,x=echo/1/100/0"}, {"-engines", "std,std"},
		{"-overload", "-1s"}, {"-points", "", "-overload", "0"},
		// No points: each was skipped silently and the overload
		// experiment ran alone, which takes an -overload given.
		{"-points", ""}, {"-points", "", "-sockperf=false"},
	} {
		_, err := parseNet(args, io.Discard, io.Discard)
		if status, _ := cli.Status(err); !errors.Is(err, cli.ErrUsage) || status != 2 {
			t.Errorf("bench net %q: %v, want a usage error", args, err)
		}
	}
	// A CPU the process may not run on failed each engine's run after
	// the header ("std: start server: invalid argument", exit 1), where
	// the run pins.
	if runtime.NumCPU() >= 2 && canPin {
		for _, args := range [][]string{{"-server-cpu", "100000"}, {"-client-cpu", "100000"}} {
			_, err := parseNet(args, io.Discard, io.Discard)
			if status, _ := cli.Status(err); !errors.Is(err, cli.ErrUsage) || status != 2 || !strings.Contains(fmt.Sprint(err), args[0]+" 100000: not a CPU") {
				t.Errorf("bench net %q: %v, want a usage error naming it", args, err)
			}
		}
	}
	// The default -step needs no point of its name: other points simply
	// have no step search.
	if _, err := parseNet([]string{"-points", "a=echo/10/100/0"}, io.Discard, io.Discard); err != nil {
		t.Errorf("-points without the default -step's point: %v", err)
	}
	if _, err := parseNet([]string{"-points", "", "-overload", "1s"}, io.Discard, io.Discard); err != nil {
		t.Errorf("-points \"\" with -overload: %v, want the overload experiment alone", err)
	}
}

// -plot FILE.svg, or FILE, becomes FILE-POINT.svg: a FILE with no .svg
// made FILE-POINT, with no extension.
func TestPlotPath(t *testing.T) {
	for _, c := range []struct{ plot, want string }{
		{"net.svg", "net-10k.svg"},
		{"/tmp/x", "/tmp/x-10k.svg"},
		{"out/run.2", "out/run.2-10k.svg"},
	} {
		if got := plotPath(c.plot, "10k"); got != c.want {
			t.Errorf("plotPath(%q) = %q, want %q", c.plot, got, c.want)
		}
	}
}

// A -plot whose directory does not exist is refused before anything
// runs; a plot that cannot be written after the run is reported after
// the results, which are printed: bench net plotted before printing and
// returned on the plot's error, so a whole run's results were lost.
func TestBenchNetPlotErrors(t *testing.T) {
	dir := t.TempDir()
	points, err := parseNetPoints("a=echo/1/100/0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := netConfig{
		exe: filepath.Join(dir, "no-wirespeed"), engines: []string{"std"}, points: points,
		duration: time.Second, msgSize: 64, serverCPU: -1, clientCPU: -1,
		plot: filepath.Join(dir, "nosuchdir", "net.svg"),
	}
	var out, errOut bytes.Buffer
	err = runNet(context.Background(), cfg, false, 0, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "-plot "+cfg.plot) || out.Len() != 0 || errOut.Len() != 0 {
		t.Errorf("-plot into no directory: %v, stdout %q, stderr %q; want a -plot error before the run", err, out.String(), errOut.String())
	}

	h := hdrhistogram.New(1, 3600e9, 3)
	h.RecordValue(50000)
	rows := []netRow{{Point: "a", Engine: "std", Result: &tcpperf.Result{P50: 50, P99: 50}, hist: h}}
	for _, c := range []struct {
		plot, file string // file: the one written, "" for none
	}{
		{filepath.Join(dir, "nosuchdir", "net"), ""},
		{filepath.Join(dir, "net"), filepath.Join(dir, "net-a.svg")},
	} {
		cfg.plot = c.plot
		out.Reset()
		err := reportNet(&out, cfg, false, rows, nil, nil, nil)
		if !strings.Contains(out.String(), "a: echo mode, 1 conns") {
			t.Errorf("-plot %s: the table is not printed:\n%s", c.plot, out.String())
		}
		if c.file == "" {
			if err == nil || !strings.HasPrefix(err.Error(), "bench net: -plot: ") {
				t.Errorf("-plot %s: %v, want the plot's error", c.plot, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("-plot %s: %v", c.plot, err)
		}
		if b, err := os.ReadFile(c.file); err != nil || !strings.Contains(string(b), `data-name="std"`) {
			t.Errorf("-plot %s: %s: %v", c.plot, c.file, err)
		}
	}
}

// A point's rate is printed as given: 0.001 msg/s is not "0 msg/s",
// which reads as no load, and a million has no exponent.
func TestNetTableRate(t *testing.T) {
	for _, c := range []struct {
		qps  float64
		want string
	}{{0.001, "open loop 0.001 msg/s"}, {200, "open loop 200 msg/s"}, {1e6, "open loop 1000000 msg/s"}} {
		var out bytes.Buffer
		cfg := netConfig{points: []netPoint{{Name: "p", Mode: "echo", Conns: 1, QPS: c.qps}}}
		if err := printNetTable(&out, cfg, nil); err != nil || !strings.Contains(out.String(), c.want) {
			t.Errorf("%v: %q (%v), want %q in it", c.qps, out.String(), err, c.want)
		}
	}
}

// A point's rate below one message a second is titled to 3 digits, as
// tcpperf's own output writes it: "%.0f" titled 0.001 msg/s "0 msg/s",
// which reads as no load.
func TestPlotNetLowRate(t *testing.T) {
	dir := t.TempDir()
	h := hdrhistogram.New(1, 3600e9, 3)
	h.RecordValue(50_000)
	cfg := netConfig{
		points:  []netPoint{{Name: "slow", Mode: "echo", Conns: 1, QPS: 0.001}, {Name: "fast", Mode: "echo", Conns: 1, QPS: 1000}},
		msgSize: 64, plot: filepath.Join(dir, "net.svg"),
	}
	rows := []netRow{{Point: "slow", Engine: "std", hist: h}, {Point: "fast", Engine: "std", hist: h}}
	if err := plotNet(cfg, rows); err != nil {
		t.Fatal(err)
	}
	for point, want := range map[string]string{"slow": "slow: echo, 1 conns, 0.001 msg/s, 64-byte messages", "fast": "fast: echo, 1 conns, 1000 msg/s, 64-byte messages"} {
		b, err := os.ReadFile(plotPath(cfg.plot, point))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s's plot is not titled %q:\n%.600s", point, want, b)
		}
	}
}

// The rates a run reached and the best of a step search are printed as
// the point's: 0.004 msg/s is not "0".
func TestNetRowsLowRate(t *testing.T) {
	row := netRow{Point: "p", Engine: "std", Result: &tcpperf.Result{TargetQPS: 0.004, AchievedQPS: 0.004, DurationS: 250, Sent: 1, SentAll: 1, Received: 1}}
	var out bytes.Buffer
	cfg := netConfig{points: []netPoint{{Name: "p", Mode: "echo", Conns: 1, QPS: 0.004}}}
	if err := printNetTable(&out, cfg, []netRow{row}); err != nil {
		t.Fatal(err)
	}
	if fields := strings.Fields(lineOf(out.String(), "std")); len(fields) < 5 || fields[4] != "0.004" {
		t.Errorf("the run's msg/s: %q, want 0.004:\n%s", fields, out.String())
	}
	out.Reset()
	if err := printSteps(&out, []netStep{{Point: "p", Engine: "std", Best: 0.004, Runs: 1, Rows: []netRow{row}}}); err != nil {
		t.Fatal(err)
	}
	if fields := strings.Fields(lineOf(out.String(), "std")); len(fields) < 2 || fields[1] != "0.004" {
		t.Errorf("the best rate: %q, want 0.004:\n%s", fields, out.String())
	}
}

// lineOf is the first line of s that starts with prefix.
func lineOf(s, prefix string) string {
	for line := range strings.Lines(s) {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}

// A -exe (or -compare-exe) that names no program that can be run is a
// usage error, naming the flag and why, before anything runs: each point
// printed "start server: fork/exec /nonexistent: ..." and the run went
// on. A name without a slash is looked up on PATH, as exec.Command does.
func TestProgramFlagsChecked(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nosuch")
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("not a program\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []struct{ flag, value, why string }{
		{"-exe", missing, ""},
		{"-exe", dir, ""},
		{"-exe", "wirespeed-no-such-program", "executable file not found"},
	}
	if runtime.GOOS != "windows" { // where no mode bit makes a program
		bad = append(bad, struct{ flag, value, why string }{"-exe", plain, "not executable"})
	}
	for _, c := range bad {
		want := "-exe " + c.value + ": " + c.why
		args := []string{"-engines", "std", c.flag, c.value}
		_, err := parseNet(args, io.Discard, io.Discard)
		if status, _ := cli.Status(err); !errors.Is(err, cli.ErrUsage) || status != 2 || !strings.Contains(fmt.Sprint(err), "bench net: "+want) {
			t.Errorf("bench net %q: %v, want a usage error saying %q", args, err, want)
		}
		args = []string{c.flag, c.value, "-postfix=false", "-sinks", "wirespeed", "-sources", "wirespeed", "-m4k", "1", "-m1m", "0", "-lat-m", "0", "-tls-ceiling=false"}
		var out, errOut bytes.Buffer
		err = RunSMTP(context.Background(), args, &out, &errOut)
		if status, _ := cli.Status(err); !errors.Is(err, cli.ErrUsage) || status != 2 || !strings.Contains(fmt.Sprint(err), "bench smtp: "+want) || out.Len() != 0 {
			t.Errorf("bench smtp %q: %v, stdout %q, stderr %q; want a usage error saying %q before the run", args, err, out.String(), errOut.String(), want)
		}
	}
	args := []string{"-engines", "gnet", "-compare-exe", missing}
	if _, err := parseNet(args, io.Discard, io.Discard); !errors.Is(err, cli.ErrUsage) || !strings.Contains(fmt.Sprint(err), "bench net: -compare-exe "+missing+": ") {
		t.Errorf("bench net %q: %v, want a usage error naming -compare-exe", args, err)
	}

	// What is not run is not checked: a -compare-exe with no comparison
	// engine, a -exe with only the overload experiment.
	for _, args := range [][]string{
		{"-engines", "std", "-compare-exe", missing},
		{"-exe", missing, "-points", "", "-overload", "1s"},
	} {
		if _, err := parseNet(args, io.Discard, io.Discard); err != nil {
			t.Errorf("bench net %q: %v", args, err)
		}
	}
	// A name on PATH is a program.
	if runtime.GOOS != "windows" {
		if err := os.WriteFile(filepath.Join(dir, "ws"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", dir)
		if _, err := parseNet([]string{"-exe", "ws"}, io.Discard, io.Discard); err != nil {
			t.Errorf("bench net -exe ws, on PATH: %v", err)
		}
	}
}

// The header says where each side was pinned when only one was: it read
// "not pinned" with tcpperf (or the source) on a CPU, and "tcpperf on CPU
// -1" with it unpinned.
func TestPinningHeader(t *testing.T) {
	for _, c := range []struct {
		server, client  int
		wantNet, wantSM string
	}{
		{0, 1, "server on CPU 0, tcpperf on CPU 1", "sink on CPU 0, source on CPU 1"},
		{-1, -1, "per run, not pinned\n", "(-d), not pinned,"},
		{-1, 1, "server not pinned, tcpperf on CPU 1", "sink not pinned, source on CPU 1"},
		{0, -1, "server on CPU 0, tcpperf not pinned", "sink on CPU 0, source not pinned"},
	} {
		var out bytes.Buffer
		cfg := netConfig{msgSize: 64, serverCPU: c.server, clientCPU: c.client}
		if err := printNetTable(&out, cfg, nil); err != nil || !strings.Contains(out.String(), c.wantNet) {
			t.Errorf("bench net, -server-cpu %d -client-cpu %d: %q (%v), want %q in it", c.server, c.client, out.String(), err, c.wantNet)
		}
		out.Reset()
		scfg := smtpConfig{sessions: 10, count: 1, serverCPU: c.server, clientCPU: c.client}
		if err := printSMTPTable(&out, scfg, nil, nil, nil, nil); err != nil || !strings.Contains(out.String(), c.wantSM) {
			t.Errorf("bench smtp, -server-cpu %d -client-cpu %d: %q (%v), want %q in it", c.server, c.client, out.String(), err, c.wantSM)
		}
	}
}

// Where bench net has no sockperf row to show, it says why: sockperf not
// installed, or a closed-loop first point. The row was left out in
// silence.
func TestBenchNetNoSockperfSaid(t *testing.T) {
	cfg := netConfig{sockperf: true, serverCPU: -1, clientCPU: -1}
	t.Setenv("PATH", t.TempDir()) // no sockperf
	cfg.points = []netPoint{{Name: "low", Mode: "echo", Conns: 1, QPS: 100}}
	var progress bytes.Buffer
	if rows := benchNet(context.Background(), cfg, &progress); len(rows) != 0 || !strings.Contains(progress.String(), "low: no sockperf row: sockperf is not installed") {
		t.Errorf("sockperf missing: rows %+v, progress %q", rows, progress.String())
	}
	progress.Reset()
	cfg.points = []netPoint{{Name: "pipelined", Mode: "line", Conns: 1, Depth: 4}, {Name: "low", Mode: "echo", Conns: 1, QPS: 100}}
	if rows := benchNet(context.Background(), cfg, &progress); len(rows) != 0 || !strings.Contains(progress.String(), "pipelined: no sockperf row: the first point is closed loop") {
		t.Errorf("closed-loop first point: rows %+v, progress %q", rows, progress.String())
	}
	progress.Reset()
	cfg.sockperf = false
	if benchNet(context.Background(), cfg, &progress); progress.Len() != 0 {
		t.Errorf("-sockperf=false: progress %q, want nothing", progress.String())
	}
}

// KiB/conn is the server's memory over the connections tcpperf opened:
// it was over the point's, so a run whose connections failed in part (a
// descriptor limit) read half the memory a connection when half opened;
// and none opened has no figure.
func TestNetRowPerConn(t *testing.T) {
	rss, cpu := 10.0, 1.0
	cfg := netConfig{points: []netPoint{{Name: "p", Mode: "echo", Conns: 10, QPS: 100}}}
	for _, c := range []struct {
		connected int
		want      string
	}{{10, "1024.0"}, {5, "2048.0"}, {0, "-"}} {
		row := netRow{Point: "p", Engine: "std", ServerRSSMB: &rss, ServerCPUSec: &cpu,
			Result: &tcpperf.Result{Conns: 10, Connected: c.connected, ConnectFailures: int64(10 - c.connected), Errors: int64(10 - c.connected), TargetQPS: 100, AchievedQPS: 100, SentAll: 100}}
		var out bytes.Buffer
		if err := printNetTable(&out, cfg, []netRow{row}); err != nil {
			t.Fatal(err)
		}
		// engine p50 p99 p99.99 msg/s srv-CPU CPU/msg RSS KiB/conn
		if fields := strings.Fields(lineOf(out.String(), "std")); len(fields) < 9 || fields[8] != c.want {
			t.Errorf("%d of 10 connected: KiB/conn %q, want %s:\n%s", c.connected, fields, c.want, out.String())
		}
	}
}

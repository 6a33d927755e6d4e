package tcpperf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The interval log's StartTime and BaseTime keep the milliseconds of the
// measurement's start (hdrhistogram-go's own writer drops them), and
// hdrhistogram-go's reader places the intervals by them.
func TestLogStartMillis(t *testing.T) {
	clk := newFakeClock()
	base := clk.Now().UnixMilli()
	if base%1000 != 0 {
		t.Fatalf("the fake clock starts at %d ms, not at a whole second", base)
	}
	addr := server(t, echo)
	var hlog bytes.Buffer
	res, err := RunWith(context.Background(), Config{
		Addr: addr, QPS: 1000, Duration: 1500 * time.Millisecond, Warmup: 237 * time.Millisecond, HdrLog: &hlog,
	}, nil, clk)
	if err != nil {
		t.Fatal(err)
	}
	// The measurement starts 10ms (the loops' settling) + 237ms after the
	// run's start.
	start := base / 1000
	want := fmt.Sprintf("#[StartTime: %d.247 (seconds since epoch), ", start)
	if !strings.Contains(hlog.String(), want) || !strings.Contains(hlog.String(), fmt.Sprintf("#[BaseTime: %d.247 (seconds since epoch)]\n", start)) {
		t.Fatalf("want %q and the same BaseTime in\n%s", want, hlog.String())
	}
	lr := hdrhistogram.NewHistogramLogReader(&hlog)
	var n int64
	first := int64(-1)
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		if first < 0 {
			first = h.StartTimeMs()
		}
		n += h.TotalCount()
	}
	// The reader's float arithmetic may lose the last millisecond.
	if d := first - (start*1000 + 247); d < -1 || d > 0 || n != res.Received {
		t.Fatalf("first interval at %d ms, want %d; %d values, want %d", first, start*1000+247, n, res.Received)
	}
}

// writeLog writes values (ns) as an interval log starting at start, one
// interval per 100 values, each interval 250ms long.
func writeLog(w io.Writer, start time.Time, values []int64) {
	lw := newLogWriter(w, start)
	h := newHist()
	at := start
	for i, v := range values {
		h.RecordValue(v)
		if (i+1)%100 == 0 || i == len(values)-1 {
			h.SetStartTimeMs(at.UnixMilli())
			at = at.Add(250 * time.Millisecond)
			h.SetEndTimeMs(at.UnixMilli())
			lw.OutputIntervalHistogram(h)
			h.Reset()
		}
	}
}

// Logs of three hosts, started at different moments within a second,
// merge into the percentiles of one histogram holding all their values;
// the merged span runs from the earliest start to the latest end.
func TestMergeLogs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	all := newHist()
	t0 := time.UnixMilli(1_700_000_000_123)
	starts := []time.Duration{0, 370 * time.Millisecond, 1640 * time.Millisecond}
	var logs []io.Reader
	lastEnd := t0
	for i, off := range starts {
		values := make([]int64, 1000+i*333)
		for j := range values {
			values[j] = 1000 + int64(rng.ExpFloat64()*50_000) // 1µs up, a long tail
			all.RecordValue(values[j])
		}
		var b bytes.Buffer
		writeLog(&b, t0.Add(off), values)
		logs = append(logs, &b)
		intervals := (len(values) + 99) / 100
		lastEnd = t0.Add(off + time.Duration(intervals)*250*time.Millisecond)
	}
	res, err := MergeLogs(logs...)
	if err != nil {
		t.Fatal(err)
	}
	want := &Result{Mode: "merge", Logs: 3}
	percentiles(want, all)
	want.StartMs = t0.UnixMilli()
	want.DurationS = lastEnd.Sub(t0).Seconds()
	want.AchievedQPS = float64(want.Received) / want.DurationS
	// The reader rounds interval times through floating point: allow the
	// span a millisecond.
	if d := res.DurationS - want.DurationS; d < -0.0015 || d > 0.0015 || res.StartMs < want.StartMs-1 || res.StartMs > want.StartMs {
		t.Errorf("span %.3fs from %d, want %.3fs from %d", res.DurationS, res.StartMs, want.DurationS, want.StartMs)
	}
	res.DurationS, res.StartMs, res.AchievedQPS = want.DurationS, want.StartMs, want.AchievedQPS
	if *res != *want {
		t.Errorf("merged\n%+v\nwant\n%+v", res, want)
	}
	if res.Received != 1000+1333+1666 {
		t.Errorf("%d values, want 3999", res.Received)
	}
}

// Tagged intervals are another measure than a log's untagged ones: they
// are left out of the merge, whichever log and place they are in.
func TestMergeLogsUntagged(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_500)
	want := newHist()
	var logs []io.Reader
	for i := range 2 {
		var b bytes.Buffer
		lw := newLogWriter(&b, t0)
		for j := range 3 {
			h := newHist()
			h.SetStartTimeMs(t0.Add(time.Duration(j) * time.Second).UnixMilli())
			h.SetEndTimeMs(t0.Add(time.Duration(j+1) * time.Second).UnixMilli())
			for k := range 10 + i + j {
				h.RecordValue(int64(1000 * (k + 1)))
			}
			lw.OutputIntervalHistogram(h)
			want.Merge(h)
			h.Reset() // and its times: the tagged interval's are the same
			h.SetStartTimeMs(t0.Add(time.Duration(j) * time.Second).UnixMilli())
			h.SetEndTimeMs(t0.Add(time.Duration(j+1) * time.Second).UnixMilli())
			h.SetTag("connect")
			h.RecordValues(1_000_000_000, int64(5+j)) // far above every untagged value
			lw.OutputIntervalHistogram(h)
		}
		logs = append(logs, &b)
	}
	res, err := MergeLogs(logs...)
	if err != nil {
		t.Fatal(err)
	}
	w := &Result{}
	percentiles(w, want)
	if res.Received != want.TotalCount() || res.Max != w.Max || res.P99 != w.P99 {
		t.Fatalf("merged %d values, max %.1f µs, p99 %.1f µs; want the untagged %d, %.1f, %.1f", res.Received, res.Max, res.P99, want.TotalCount(), w.Max, w.P99)
	}
}

// A log that is not one is ErrLog, naming which.
func TestMergeBadLog(t *testing.T) {
	var good bytes.Buffer
	writeLog(&good, time.UnixMilli(1_700_000_000_000), []int64{5, 6, 7})
	_, err := MergeLogs(&good, strings.NewReader("0.1,0.2,0.3,HISTFAAAA!!!!\n"))
	if !errors.Is(err, ErrLog) || !regexp.MustCompile(`log 2\b`).MatchString(err.Error()) {
		t.Fatalf("bad payload: %v, want ErrLog for log 2", err)
	}
	good.Reset()
	writeLog(&good, time.UnixMilli(1_700_000_000_000), []int64{5, 6, 7})
	// An empty log, or one of headers only (a run that measured
	// nothing), has no intervals; a file with no line of a log is not
	// one (it read "no intervals" too, as if a run had measured nothing).
	for notLog, want := range map[string]string{
		"":                                      "log 2: no intervals",
		"#[tcpperf latencies in nanoseconds]\n": "log 2: no intervals",
		"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n": "log 2: no intervals",
		"{\"mode\":\"echo\"}\n":  "log 2: not an interval log",
		"garbage\n\x00\xff more": "log 2: not an interval log",
	} {
		_, err := MergeLogs(bytes.NewReader(good.Bytes()), strings.NewReader(notLog))
		if !errors.Is(err, ErrLog) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want ErrLog: %s", notLog, err, want)
		}
	}
	// A log of other measures only (tagged intervals) adds nothing to
	// the merge either.
	var tagged bytes.Buffer
	lw := newLogWriter(&tagged, time.UnixMilli(1_700_000_000_000))
	h := newHist()
	h.SetTag("connect")
	h.SetStartTimeMs(1_700_000_000_000) // not before the log's base time: a negative start is malformed
	h.SetEndTimeMs(1_700_000_001_000)
	h.RecordValue(1000)
	lw.OutputIntervalHistogram(h)
	_, err = MergeLogs(bytes.NewReader(good.Bytes()), &tagged)
	if !errors.Is(err, ErrLog) || !strings.Contains(err.Error(), "log 2: no untagged intervals (1 tagged") {
		t.Errorf("tagged only: %v, want ErrLog: log 2: no untagged intervals", err)
	}
}

// The interval log spans the measurement, not the drain after it: merged,
// it gives the run's duration. (Against a server that answers nothing,
// the drain runs its whole 300ms; the last interval ended with it.)
func TestLogSpansMeasurement(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		var hlog bytes.Buffer
		res, err := RunEnv(context.Background(), Config{
			Engine: engine, Addr: silentServer(t), Conns: 2, QPS: 400, Duration: 500 * time.Millisecond,
			DrainTimeout: 300 * time.Millisecond, HdrLog: &hlog,
		}, Env{Clock: newFakeClock(), DrainQuiet: SilentQuiet})
		if err != nil {
			t.Fatal(err)
		}
		m, err := MergeLogs(&hlog)
		if err != nil || res.DurationS != 0.5 || m.DurationS != res.DurationS {
			t.Errorf("merged: %v, %.3fs; the run %.3fs, want 0.5s", err, m.DurationS, res.DurationS)
		}
	})
	// Against an echo server the drain ends with the last response, soon
	// after the last send, which at 4 msg/s was due 250ms before the end:
	// the log still spans the measurement, at the run's rate.
	forEngines(t, func(t *testing.T, engine string) {
		var hlog bytes.Buffer
		res, err := RunWith(context.Background(), Config{
			Engine: engine, Addr: server(t, echo), Conns: 1, QPS: 4, Duration: 2 * time.Second, HdrLog: &hlog,
		}, nil, newFakeClock())
		if err != nil || res.Received != 8 {
			t.Fatalf("%v: %d received, want 8", err, res.Received)
		}
		logText := hlog.String()
		m, err := MergeLogs(&hlog)
		if err != nil || m.DurationS != res.DurationS || m.AchievedQPS != res.AchievedQPS {
			t.Errorf("merged: %v, %.3fs at %.1f msg/s; the run %.3fs at %.1f", err, m.DurationS, m.AchievedQPS, res.DurationS, res.AchievedQPS)
			t.Log(logText)
		}
	})
}

// hdrhistogram-go's reader takes the digits and dots of a time wherever
// they start, so a malformed interval start of 1e300 read as 300 s and
// 5e9 as 9 s, giving a wrong span and no error. MergeLogs refuses every
// time that is not a plain decimal of seconds, past 2262, or an interval
// start before the previous one's, naming the log and the line; a log
// concatenated to another (its headers again) starts its order again.
func TestMergeMalformedTimes(t *testing.T) {
	var good bytes.Buffer
	writeLog(&good, time.UnixMilli(1_700_000_000_123), make([]int64, 250))
	lines := strings.SplitAfter(good.String(), "\n")
	// Lines 3 and 4 (1-based) are StartTime and BaseTime; 6, 7 and 8 the
	// intervals, starting 0, 0.25 and 0.5 s after the base time.
	if !strings.HasPrefix(lines[2], "#[StartTime: ") || !strings.HasPrefix(lines[5], "0.000000,0.250000,") || !strings.HasPrefix(lines[7], "0.500000,") {
		t.Fatalf("not the log this test edits:\n%s", good.String())
	}
	edit := func(line int, old, new string) string {
		l := append([]string(nil), lines...)
		if !strings.Contains(l[line-1], old) {
			t.Fatalf("line %d %q holds no %q", line, l[line-1], old)
		}
		l[line-1] = strings.Replace(l[line-1], old, new, 1)
		return strings.Join(l, "")
	}
	swap := append([]string(nil), lines...)
	swap[5], swap[6] = swap[6], swap[5]
	big := "1" + strings.Repeat("0", 300)
	for _, tc := range []struct {
		log, want string
	}{
		{edit(7, "0.250000,", "1e300,"), `line 7: interval start "1e300" is not a decimal`},
		{edit(7, "0.250000,", "5e9,"), `line 7: interval start "5e9" is not a decimal`},
		{edit(7, "0.250000,", "-5,"), `line 7: interval start "-5" is not a decimal`},
		{edit(7, "0.250000,", "NaN,"), `line 7: interval start "NaN" is not a decimal`},
		{edit(7, "0.250000,", "+Inf,"), `line 7: interval start "+Inf" is not a decimal`},
		{edit(7, "0.250000,", big+","), "line 7: interval start " + big + " s is past 2262"},
		{edit(8, "0.250000,", "1e300,"), `line 8: interval length "1e300" is not a decimal`},
		{edit(8, "0.250000,", "9300000000,"), "line 8: interval length 9300000000 s is past 2262"},
		{edit(6, ",0.000000,", ",1e3,"), `line 6: interval max "1e3" is not a decimal`},
		{edit(6, ",HIST", ",1,HIST"), "line 6: not an interval"},
		{"Tag=connect," + edit(6, "0.000000,", "5e9,")[len(strings.Join(lines[:5], "")):], `line 1: interval start "5e9"`},
		{edit(3, "1700000000.123", "1e300"), `line 3: StartTime "1e300" is not a decimal`},
		{edit(4, "1700000000.123", "1.7e9"), `line 4: BaseTime "1.7e9" is not a decimal`},
		{strings.Join(swap, ""), "line 7: interval start 0.000000 s before the previous one's, 0.250 s"},
		// Each time within 2262, their sum not.
		{strings.Replace(edit(4, "1700000000.123", "9223000000"), ",0.250000,", ",1000000,", 1), "untagged interval 1 spans"},
		// Lines the reader drops, losing an interval.
		{edit(6, "0.000000,0.250000,0.000000,", "Tag=x"), "line 6: a tag and no interval"},
		{edit(6, ",", ";"), "line 6: not an interval"},
	} {
		_, err := MergeLogs(strings.NewReader(good.String()), strings.NewReader(tc.log))
		if !errors.Is(err, ErrLog) || !strings.Contains(err.Error(), "log 2: "+tc.want) {
			t.Errorf("%v, want ErrLog: log 2: %s...; the log:\n%s", err, tc.want, tc.log)
		}
	}
	// Two logs in one, the second starting earlier: each in order.
	var later, earlier bytes.Buffer
	writeLog(&later, time.UnixMilli(1_700_000_000_500), make([]int64, 250))
	writeLog(&earlier, time.UnixMilli(1_700_000_000_100), make([]int64, 250))
	res, err := MergeLogs(io.MultiReader(&later, &earlier))
	if err != nil || res.Received != 500 || res.StartMs != 1_700_000_000_100 {
		t.Errorf("two logs in one: %v, %+v", err, res)
	}
}

package tcpperf

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"runtime"
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
	if res.DurationS != want.DurationS || res.StartMs != want.StartMs {
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

// A log's times are whole milliseconds, and a merge's span and start are
// them: hdrhistogram-go's reader truncates its float sums of seconds, so
// that a log written at 1796586082.735 s whose interval ended 0.3 s later
// merged to 0.299 s (the run's 60 messages at 200.67 msg/s, where the run
// read 200).
func TestMergeMillis(t *testing.T) {
	h := newHist()
	for v := range int64(60) {
		h.RecordValue(1000 + v)
	}
	for ms := int64(1_796_586_082_000); ms < 1_796_586_083_000; ms++ {
		var b bytes.Buffer
		lw := newLogWriter(&b, time.UnixMilli(ms))
		h.SetStartTimeMs(ms)
		h.SetEndTimeMs(ms + 300)
		lw.OutputIntervalHistogram(h)
		res, err := MergeLogs(&b)
		if err != nil {
			t.Fatal(err)
		}
		if res.StartMs != ms || res.DurationS != 0.3 || res.AchievedQPS != 200 {
			t.Fatalf("written from %d ms for 0.3 s: merged from %d ms, %v s, %v msg/s; want 200 msg/s", ms, res.StartMs, res.DurationS, res.AchievedQPS)
		}
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

// No log at all, or a nil one, is an error matching ErrLog too: MergeLogs()
// returned a Result of Logs 0, which reads (and is written in JSON) as a
// run's that measured nothing, and a nil io.Reader, or a nil *os.File,
// panicked (a nil pointer dereference).
func TestMergeNoLog(t *testing.T) {
	var good bytes.Buffer
	writeLog(&good, time.UnixMilli(1_700_000_000_000), []int64{5, 6, 7})
	var nilFile *os.File
	for name, second := range map[string]io.Reader{
		"none":      nil,
		"nil":       nil,
		"nil *File": nilFile,
	} {
		for fn, merge := range map[string]func(...io.Reader) error{
			"MergeLogs":    func(l ...io.Reader) error { _, err := MergeLogs(l...); return err },
			"LogHistogram": func(l ...io.Reader) error { _, err := LogHistogram(l...); return err },
		} {
			var logs []io.Reader
			if name != "none" {
				logs = []io.Reader{bytes.NewReader(good.Bytes()), second}
			}
			var err error
			func() {
				defer func() {
					if v := recover(); v != nil {
						err = fmt.Errorf("panic: %v", v)
					}
				}()
				err = merge(logs...)
			}()
			if !errors.Is(err, ErrLog) || (len(logs) > 0 && !strings.Contains(err.Error(), "log 2")) {
				t.Errorf("%s of %s: %v, want ErrLog (naming log 2 where there is one)", fn, name, err)
			}
		}
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

// reencode encodes h with hdrhistogram-go's encoder and, if edit is not
// nil, applies edit to the encoding's decompressed bytes (its 40-byte
// header, then the counts) and compresses them again: a payload as
// another writer, or a forger, could write it.
func reencode(t *testing.T, h *hdrhistogram.Histogram, edit func(raw []byte) []byte) string {
	t.Helper()
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	if edit == nil {
		return string(enc)
	}
	outer, err := base64.StdEncoding.DecodeString(string(enc))
	if err != nil {
		t.Fatal(err)
	}
	z, err := zlib.NewReader(bytes.NewReader(outer[8:]))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	zw := zlib.NewWriter(&c)
	zw.Write(edit(raw))
	zw.Close()
	outer = binary.BigEndian.AppendUint32(outer[:4], uint32(c.Len()))
	return base64.StdEncoding.EncodeToString(append(outer, c.Bytes()...))
}

// withHist is a log of ours whose sixth line, its first interval, carries
// hist instead of its own histogram.
func withHist(t *testing.T, hist string) string {
	t.Helper()
	var b bytes.Buffer
	writeLog(&b, time.UnixMilli(1_700_000_000_123), []int64{1000, 2000, 3000})
	lines := strings.SplitAfter(b.String(), "\n")
	i := strings.LastIndex(lines[5], ",")
	if !strings.HasPrefix(lines[5], "0.000000,0.250000,") || i < 0 {
		t.Fatalf("not the log this test edits:\n%s", b.String())
	}
	lines[5] = lines[5][:i+1] + hist + "\n"
	return strings.Join(lines, "")
}

// A forged interval line whose histogram's header declares 5 significant
// figures up to 2^62 made hdrhistogram-go's Decode allocate 49 MB of
// counts for it, and as much again for each such line, before the merge
// could refuse anything. The checker reads the header first and refuses
// a histogram of more than maxHistCounts counts, naming the line, having
// allocated little.
func TestMergeHugeHistogram(t *testing.T) {
	huge := hdrhistogram.New(1, 1<<62, 5) // 49 MB: made before the measure
	forged := reencode(t, huge, nil)
	// ByteSize: 6*8 + 5*4 bytes of fields, 8 a count.
	if n := (huge.ByteSize() - 6*8 - 5*4) / 8; n != 6160384 {
		t.Fatalf("hdrhistogram-go makes %d counts for 1 to 2^62 at 5 significant figures, not the 6160384 this test expects", n)
	}
	huge = nil
	log := withHist(t, forged)
	lines := strings.SplitAfter(log, "\n")
	log += strings.Join(lines[5:], "") + strings.Join(lines[5:], "") // more such lines
	var good bytes.Buffer
	writeLog(&good, time.UnixMilli(1_700_000_000_000), []int64{5, 6, 7})
	logs := []io.Reader{&good, strings.NewReader(log)}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := MergeLogs(logs...)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("MergeLogs allocated %d bytes", alloc)
	want := "log 2: line 6: histogram of 6160384 counts (1 to 4611686018427387904 at 5 significant figures), past the 1048576"
	if !errors.Is(err, ErrLog) || !strings.Contains(err.Error(), want) {
		t.Errorf("%v (result %+v), want ErrLog: %s", err, res, want)
	}
	if alloc > 8<<20 {
		t.Errorf("MergeLogs allocated %d bytes for a refused log, want at most 8 MiB", alloc)
	}
}

// A line longer than maxLogLine (16 MiB; an interval of the largest
// histogram admitted takes 12 MiB at most) is refused, naming it, with
// no more of it held: a 64 MiB line costs far less than 64 MiB.
func TestMergeLongLine(t *testing.T) {
	var good bytes.Buffer
	writeLog(&good, time.UnixMilli(1_700_000_000_000), []int64{5, 6, 7})
	head, _, _ := strings.Cut(good.String(), "\n0") // the header lines, before the first interval
	long := io.MultiReader(strings.NewReader(head+"\n0.000,1.000,7.000,"), io.LimitReader(repeatByte('A'), 64<<20), strings.NewReader("\n"))
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := MergeLogs(long)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	lines := strings.Count(head, "\n") + 2
	if want := fmt.Sprintf("line %d: longer than %d bytes", lines, maxLogLine); !errors.Is(err, ErrLog) || !strings.Contains(err.Error(), want) {
		t.Errorf("%v, want ErrLog: %s", err, want)
	}
	if alloc > 40<<20 {
		t.Errorf("MergeLogs allocated %d bytes for a refused 64 MiB line, want at most 40 MiB", alloc)
	}
}

// repeatByte reads as an endless run of its byte.
type repeatByte byte

func (r repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// The bound admits every histogram our tools write (tcpperf's and
// smtp-source's, latrec.NewHist: 1 ns to 1 h at 3 significant figures)
// and HdrHistogram's usual ranges, up to the whole int64 range at 4
// significant figures; past it a histogram is refused, however few its
// values.
func TestMergeHistogramRanges(t *testing.T) {
	for _, h := range []*hdrhistogram.Histogram{
		newHist(),
		hdrhistogram.New(1, int64(time.Hour), 3),
		hdrhistogram.New(1, math.MaxInt64, 3),
		hdrhistogram.New(1000, int64(24*time.Hour), 2),
		hdrhistogram.New(1, int64(time.Hour), 4),
		hdrhistogram.New(1, math.MaxInt64, 4), // 819200 counts
		hdrhistogram.New(1, 1<<24-1, 5),       // 1048576 counts: the bound
	} {
		h.RecordValues(1000, 3)
		h.RecordValue(int64(time.Millisecond))
		h.SetStartTimeMs(1_700_000_000_123)
		h.SetEndTimeMs(1_700_000_000_373)
		res, err := MergeLogs(strings.NewReader(withHist(t, reencode(t, h, nil))))
		if err != nil || res.Received != 4 {
			t.Errorf("%d to %d at %d significant figures: %v, %+v", h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(), err, res)
		}
	}
	for _, h := range []*hdrhistogram.Histogram{
		hdrhistogram.New(1, 1<<24, 5), // a bucket more: 1179648 counts
		hdrhistogram.New(1, int64(time.Hour), 5),
	} {
		_, err := MergeLogs(strings.NewReader(withHist(t, reencode(t, h, nil))))
		if !errors.Is(err, ErrLog) || !strings.Contains(err.Error(), "log 1: line 6: histogram of ") {
			t.Errorf("%d to %d at %d significant figures: %v, want ErrLog: line 6: histogram of ... counts", h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(), err)
		}
	}
}

// A histogram that is not one, or not what hdrhistogram-go decodes, is
// ErrLog naming the log and the line.
func TestMergeMalformedHistogram(t *testing.T) {
	h := newHist()
	h.RecordValues(1000, 5)
	enc := reencode(t, h, nil)
	outer, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	set32 := func(b []byte, at int, v uint32) []byte {
		b = append([]byte(nil), b...)
		binary.BigEndian.PutUint32(b[at:], v)
		return b
	}
	field := func(at int, v uint32) string {
		return reencode(t, h, func(raw []byte) []byte { return set32(raw, at, v) })
	}
	// The outer length says how much of the rest is compressed.
	truncated := set32(outer, 4, 6)[:8+6]
	checksum := []byte(enc)
	checksum[len(checksum)-3] ^= 1 // in the zlib stream's Adler-32
	for _, tc := range []struct{ hist, want string }{
		{"HISTFAAAA!!!!", "line 6: histogram is not base64"},
		{enc[:len(enc)-1], "line 6: histogram is not base64"},
		{b64(outer[:5]), "line 6: histogram of 5 bytes"},
		{b64(set32(outer, 0, 0x1c849301)), "line 6: histogram cookie 0x1c849301 is not"},
		{b64(set32(outer, 4, 1<<31)), "line 6: histogram's compressed length -2147483648 "},
		{b64(set32(outer, 4, uint32(len(outer)-8+1))), "line 6: histogram's compressed length"},
		{b64(set32(append(outer[:8:8], "not zlib"...), 4, 8)), "line 6: histogram is not zlib-compressed"},
		{b64(truncated), "line 6: histogram's compressed header truncated"},
		{field(0, 0x1c849301), "line 6: histogram's inner cookie 0x1c849301 is not"},
		{field(12, 6), "line 6: histogram of 6 significant figures"},
		{field(12, 1<<31), "line 6: histogram of -2147483648 significant figures"},
		{field(4, 1<<31), "line 6: histogram's payload length -2147483648"},
		{field(4, 1<<30), "line 6: histogram's payload length 1073741824"},
		// Past the header, hdrhistogram-go's Decode finds what is wrong:
		// the line is named all the same.
		{string(checksum), "line 6: zlib: invalid checksum"},
	} {
		// A good interval after the bad one: the error names the bad.
		log := withHist(t, tc.hist) + strings.SplitAfter(withHist(t, enc), "\n")[5]
		_, err := MergeLogs(strings.NewReader(log))
		if !errors.Is(err, ErrLog) || !strings.Contains(err.Error(), "log 1: "+tc.want) {
			t.Errorf("%q: %v, want ErrLog: log 1: %s...", tc.hist, err, tc.want)
		}
	}
	// A lowest value too large for the significant figures: 2^45 at 5
	// (2^18 counts a bucket from 2^45: past int64).
	lowest := reencode(t, h, func(raw []byte) []byte {
		raw = set32(raw, 12, 5)
		binary.BigEndian.PutUint64(raw[16:], 1<<45)
		return raw
	})
	if _, err := MergeLogs(strings.NewReader(withHist(t, lowest))); !errors.Is(err, ErrLog) || !strings.Contains(err.Error(), "log 1: line 6: histogram's lowest value 35184372088832 is too large for 5 significant figures") {
		t.Errorf("a lowest value of 2^45 at 5 significant figures: %v", err)
	}
}

// histCounts computes the counts hdrhistogram-go's Decode allocates for a
// header: the same as Decode's histogram holds, for every significant
// figure it takes and lowest and highest values across the int64 range
// (up to 2^21 counts, 16 MiB, for the test's sake).
func TestHistCounts(t *testing.T) {
	empty := hdrhistogram.New(1, 2, 1)
	values := []int64{-1, 0, 1, 2, 3, 1000, 2047, 2048, 1 << 20, int64(time.Hour), 1<<40 + 1, 1 << 45, 1 << 62, math.MaxInt64}
	tried := 0
	for sig := range int32(6) {
		for _, lowest := range values {
			for _, highest := range values {
				want, err := histCounts(lowest, highest, sig)
				if err != nil || want > 1<<21 {
					continue
				}
				tried++
				enc := reencode(t, empty, func(raw []byte) []byte {
					binary.BigEndian.PutUint32(raw[12:], uint32(sig))
					binary.BigEndian.PutUint64(raw[16:], uint64(lowest))
					binary.BigEndian.PutUint64(raw[24:], uint64(highest))
					return raw
				})
				h, err := hdrhistogram.Decode([]byte(enc))
				if err != nil {
					t.Errorf("%d to %d at %d: %v", lowest, highest, sig, err)
					continue
				}
				// ByteSize: 6*8 + 5*4 bytes of fields, 8 a count.
				if got := int64(h.ByteSize()-6*8-5*4) / 8; got != want {
					t.Errorf("%d to %d at %d significant figures: %d counts, histCounts %d", lowest, highest, sig, got, want)
				}
			}
		}
	}
	t.Logf("%d geometries", tried)
	if tried < 300 {
		t.Errorf("%d geometries tried", tried)
	}
}

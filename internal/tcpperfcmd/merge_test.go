package tcpperfcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/latplot"
	"github.com/wirespeed/wirespeed/internal/sleep/sleeptest"
	"github.com/wirespeed/wirespeed/tcpperf"
)

// Two runs' -hdr-log files merge into the percentiles of one histogram
// holding every value of both, as hdrhistogram-go's reader reads them; the
// count is the two runs' together. The runs are on one fake clock, the
// second after the first: each sends its schedule's 100 messages however
// slow the machine is.
func TestMerge(t *testing.T) {
	addr := echoServer(t)
	dir := t.TempDir()
	clk := sleeptest.NewClock()
	var received int64
	var logs []string
	for i := range 2 {
		hdr := filepath.Join(dir, []string{"a.hlog", "b.hlog"}[i])
		var out, errb bytes.Buffer
		err := runOn(clk, []string{"-addr", addr, "-conns", "3", "-qps", "500", "-duration", "200ms", "-warmup", "0s",
			"-json", "-q", "-hdr-log", hdr}, &out, &errb)
		if err != nil {
			t.Fatalf("%v: %s", err, errb.String())
		}
		var res tcpperf.Result
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if res.Received != 100 {
			t.Fatalf("run %d: %+v, want 100 received", i, res)
		}
		received += res.Received
		logs = append(logs, hdr)
	}
	all := hdrhistogram.New(1, int64(3600e9), 3)
	for _, name := range logs {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		lr := hdrhistogram.NewHistogramLogReader(f)
		for {
			h, err := lr.NextIntervalHistogram()
			if err != nil {
				t.Fatal(err)
			}
			if h == nil {
				break
			}
			all.Merge(h)
		}
		f.Close()
	}

	var out, errb bytes.Buffer
	if err := Run(context.Background(), append([]string{"merge", "-json"}, logs...), &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var m tcpperf.Result
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	// Only what a merge measures: no run's zeros (sent, errors), which
	// would read as measured.
	var fields map[string]any
	json.Unmarshal(out.Bytes(), &fields)
	for _, run := range []string{"sent", "sent_all", "errors", "conns", "connected", "wait", "missed", "target_qps"} {
		if _, ok := fields[run]; ok {
			t.Errorf("merge -json has the run field %q: %s", run, out.String())
		}
	}
	q := func(p float64) float64 { return float64(all.ValueAtQuantile(p)) / 1e3 }
	if m.Logs != 2 || m.Received != received || m.Received != all.TotalCount() || m.P50 != q(50) || m.P99 != q(99) || m.P9999 != q(99.99) ||
		m.Max != float64(all.Max())/1e3 || m.DurationS < 0.4 || m.StartMs == 0 {
		t.Errorf("merged %+v; want %d values, p50 %.3f, p99 %.3f, p99.99 %.3f, max %.3f", m, received, q(50), q(99), q(99.99), float64(all.Max())/1e3)
	}

	out.Reset()
	if err := Run(context.Background(), append([]string{"merge"}, logs...), &out, &errb); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.HasPrefix(s, "2 logs merged, ") || !strings.Contains(s, "latency") || strings.Contains(s, "lateness") {
		t.Errorf("text output:\n%s", s)
	}
}

func TestMergeErrors(t *testing.T) {
	var out, errb bytes.Buffer
	if status, _ := cli.Status(Run(context.Background(), []string{"merge"}, &out, &errb)); status != 2 {
		t.Errorf("merge without files: status %d", status)
	}
	// A file with no interval (empty, the log of a host that measured
	// nothing, or no log at all) fails the merge, which would otherwise
	// look whole without it; one with no line of a log says it is not
	// one (garbage read "no intervals", as a log of nothing measured).
	dir := t.TempDir()
	empty, notLog, garbage := filepath.Join(dir, "empty.hlog"), filepath.Join(dir, "result.json"), filepath.Join(dir, "garbage")
	os.WriteFile(empty, nil, 0o644)
	os.WriteFile(notLog, []byte(`{"mode":"echo"}`+"\n"), 0o644)
	os.WriteFile(garbage, []byte("\x7fELF\x02\x01\x01 not a log at all\n\xff\xfe"), 0o644)
	for f, want := range map[string]string{empty: "no intervals", notLog: "not an interval log", garbage: "not an interval log"} {
		out.Reset()
		err := Run(context.Background(), []string{"merge", f}, &out, &errb)
		if !errors.Is(err, tcpperf.ErrLog) || !strings.Contains(err.Error(), f+": "+want) || out.Len() > 0 {
			t.Errorf("%s: %v, %q; want ErrLog, %s", f, err, out.String(), want)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.hlog")
	os.WriteFile(bad, []byte("0.1,0.2,0.3,HISTFAAAA!!!!\n"), 0o644)
	err := Run(context.Background(), []string{"merge", bad}, &out, &errb)
	if !errors.Is(err, tcpperf.ErrLog) || !strings.Contains(err.Error(), bad+": ") {
		t.Errorf("bad log: %v, want tcpperf.ErrLog naming %s", err, bad)
	}
	// A malformed time (hdrhistogram-go's reader took 1e300 for 300 s) is
	// refused, naming the file and the line.
	loose := filepath.Join(t.TempDir(), "loose.hlog")
	os.WriteFile(loose, []byte("#[BaseTime: 1700000000.000 (seconds since epoch)]\n0.000,1.000,0.000,HISTFAAAACl42pJpmSzMwMDAxAABzFCakYGB2c1gxwIG+w8QgROMgAAAAP//WKYFFg==\n1e300,1.000,0.000,HISTFAAAACl42pJpmSzMwMDAxAABzFCakYGB2c1gxwIG+w8QgROMgAAAAP//WKYFFg==\n"), 0o644)
	out.Reset()
	err = Run(context.Background(), []string{"merge", loose}, &out, &errb)
	if !errors.Is(err, tcpperf.ErrLog) || !strings.Contains(err.Error(), loose+": line 3: interval start \"1e300\"") || out.Len() > 0 {
		t.Errorf("start 1e300: %v, %q; want ErrLog naming %s, line 3", err, out.String(), loose)
	}
	if err := Run(context.Background(), []string{"merge", filepath.Join(t.TempDir(), "none")}, &out, &errb); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// A log whose intervals hold no values merges, but draws nothing:
	// -plot fails and leaves no file (it left an empty one).
	var b bytes.Buffer
	hw := hdrhistogram.NewHistogramLogWriter(&b)
	hw.OutputLogFormatVersion()
	h := hdrhistogram.New(1, 3600e9, 3)
	h.SetStartTimeMs(1_700_000_000_000)
	h.SetEndTimeMs(1_700_000_001_000)
	hw.OutputIntervalHistogram(h)
	none, svg := filepath.Join(dir, "none.hlog"), filepath.Join(dir, "none.svg")
	os.WriteFile(none, b.Bytes(), 0o644)
	if err := Run(context.Background(), []string{"merge", "-plot", svg, none}, &out, &errb); !errors.Is(err, latplot.ErrEmpty) {
		t.Errorf("-plot of no values: %v, want latplot.ErrEmpty", err)
	}
	if _, err := os.Stat(svg); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("-plot of no values left %s: %v", svg, err)
	}
	// A -plot that is one of the logs merged is a usage error: the plot
	// overwrote the log.
	b.Reset()
	hw = hdrhistogram.NewHistogramLogWriter(&b)
	hw.OutputLogFormatVersion()
	h.RecordValue(1000)
	hw.OutputIntervalHistogram(h)
	one := filepath.Join(dir, "one.hlog")
	os.WriteFile(one, b.Bytes(), 0o644)
	err = Run(context.Background(), []string{"merge", "-plot", one, one}, &out, &errb)
	if status, _ := cli.Status(err); status != 2 || !strings.Contains(fmt.Sprint(err), "one of the logs merged") {
		t.Errorf("-plot %s of itself: %v (status %d), want a usage error", one, err, status)
	}
	if got, _ := os.ReadFile(one); !bytes.Equal(got, b.Bytes()) {
		t.Errorf("-plot %s of itself: the log now holds %.60q", one, got)
	}
}

func TestParseCPUList(t *testing.T) {
	for s, want := range map[string]string{"1": "[1]", "0,2": "[0 2]", "4-6,9": "[4 5 6 9]"} {
		got, err := parseCPUList(s)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("parseCPUList(%q) = %v, %v; want %s", s, got, err, want)
		}
	}
	for _, s := range []string{"", "a", "3-1", "-1", "1,", "0-99999", "0-4095,0", strings.Repeat("0-999,", 5) + "0"} {
		if _, err := parseCPUList(s); err == nil {
			t.Errorf("parseCPUList(%.40q) did not fail", s)
		}
	}
}

// -plot draws an SVG: one curve for a run, and for merge one per log and
// one merged (their names in the legend). The runs are on a fake clock:
// each sends its schedule's 80 messages however slow the machine is.
func TestPlot(t *testing.T) {
	addr := echoServer(t)
	dir := t.TempDir()
	clk := sleeptest.NewClock()
	var logs []string
	for i := range 2 {
		hdr := filepath.Join(dir, fmt.Sprintf("host%d.hlog", i))
		svg := filepath.Join(dir, fmt.Sprintf("run%d.svg", i))
		var out, errb bytes.Buffer
		if err := runOn(clk, []string{"-addr", addr, "-conns", "2", "-qps", "400", "-duration", "200ms", "-warmup", "0s",
			"-q", "-hdr-log", hdr, "-plot", svg}, &out, &errb); err != nil {
			t.Fatalf("%v: %s", err, errb.String())
		}
		if n := curves(t, svg); len(n) != 1 || n[0] != addr {
			t.Errorf("run plot curves %q, want [%s]", n, addr)
		}
		logs = append(logs, hdr)
	}
	svg := filepath.Join(dir, "merged.svg")
	var out, errb bytes.Buffer
	if err := Run(context.Background(), append([]string{"merge", "-plot", svg}, logs...), &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	if n := curves(t, svg); fmt.Sprint(n) != "[host0.hlog host1.hlog merged]" {
		t.Errorf("merge plot curves %q", n)
	}
}

// curves returns the names of the curves in the SVG file.
func curves(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "polyline" {
			for _, a := range e.Attr {
				if a.Name.Local == "data-name" {
					names = append(names, a.Value)
				}
			}
		}
	}
}

// A host whose tool fell behind its schedule: its rate is over the span
// its messages went out in (-json's send_span_s), the text says so, and
// its -hdr-log merges to the same span and rate. With another host's log
// of the same window, which kept up, the merge spans the two, to the
// later end, and rates their messages together over it. Each run's clock
// starts at the same instant; the late one, on reaching 60ms, jumps to
// 160ms, and its loop sends there all the messages due by then, the last
// of the window (10ms to 110ms) among them: 100 over 150ms, not 100ms.
func TestMergeFellBehind(t *testing.T) {
	addr := echoServer(t)
	dir := t.TempDir()
	var logs []string
	var runs []tcpperf.Result
	for i, late := range []bool{true, false} {
		clk := sleeptest.NewClock()
		base := clk.Now()
		var jumped atomic.Bool
		clk.Moved = func(now time.Time) {
			if late && now.Sub(base) >= 60*time.Millisecond && jumped.CompareAndSwap(false, true) {
				clk.Advance(base.Add(160 * time.Millisecond).Sub(now))
			}
		}
		hdr := filepath.Join(dir, fmt.Sprintf("%d.hlog", i))
		var out, errb bytes.Buffer
		err := runOn(clk, []string{"-addr", addr, "-conns", "2", "-qps", "1000", "-duration", "100ms", "-warmup", "0s",
			"-json", "-q", "-hdr-log", hdr}, &out, &errb)
		if err != nil {
			t.Fatalf("%v: %s", err, errb.String())
		}
		var res tcpperf.Result
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		span := map[bool]float64{true: 0.15, false: 0.1}[late]
		if res.Received != 100 || res.DurationS != 0.1 || res.SendSpanS != span || res.AchievedQPS != 100/span {
			t.Fatalf("late %v: %+v, want 100 received in a 100ms window, sent over %gs", late, res, span)
		}
		runs = append(runs, res)
		logs = append(logs, hdr)
		if late {
			var text bytes.Buffer
			if err := Print(&text, &res); err != nil || !strings.Contains(text.String(), "achieved 667 msg/s over 150ms, sending 50ms past the window (sent 100, received 100)") {
				t.Errorf("text (%v):\n%s", err, text.String())
			}
		}
	}
	merge := func(logs ...string) tcpperf.Result {
		t.Helper()
		var out, errb bytes.Buffer
		if err := Run(context.Background(), append([]string{"merge", "-json"}, logs...), &out, &errb); err != nil {
			t.Fatalf("%v: %s", err, errb.String())
		}
		var m tcpperf.Result
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("%v: %q", err, out.String())
		}
		return m
	}
	for i, log := range logs {
		if m := merge(log); m.DurationS != runs[i].SendSpanS || m.AchievedQPS != runs[i].AchievedQPS || m.Received != runs[i].Received {
			t.Errorf("%s merged alone: %d over %gs at %g msg/s, want the run's %d over %gs at %g", log, m.Received, m.DurationS, m.AchievedQPS, runs[i].Received, runs[i].SendSpanS, runs[i].AchievedQPS)
		}
	}
	span := 0.15 // a variable: 200/0.15 in constants is not float64's
	if m := merge(logs...); m.DurationS != span || m.Received != 200 || m.AchievedQPS != 200/span {
		t.Errorf("merged: %d over %gs at %g msg/s, want 200 over 0.15s", m.Received, m.DurationS, m.AchievedQPS)
	}
}

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// smtpReport is `bench smtp -json`'s output.
type smtpReport struct {
	Rows    []smtpRow       `json:"rows"`
	Honesty *smtpHonesty    `json:"latency_honesty"`
	Bars    []smtpBar       `json:"bars"`
	Ceiling *smtpCeiling    `json:"postfix_source_ceiling"`
	TLS     *smtpTLSCeiling `json:"tls_ceiling"`
}

// runBenchSMTP runs `bench smtp` with args and decodes its JSON.
func runBenchSMTP(t *testing.T, args ...string) smtpReport {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := RunSMTP(context.Background(), append(args, "-json"), &out, &errOut); err != nil {
		t.Fatalf("bench smtp %q: %v\n%s\n%s", args, err, out.String(), errOut.String())
	}
	var rep smtpReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	return rep
}

// checkSMTPRows checks that every row ran, with the source's errors, the
// sink's usage and, for wirespeed's source, latencies; no timing is
// asserted.
func checkSMTPRows(t *testing.T, rows []smtpRow) {
	t.Helper()
	pinned := runtime.NumCPU() >= 2 && canPin
	for _, r := range rows {
		name := r.Size + "/" + r.Sink + "/" + r.Source
		if r.Err != "" || r.Runs != 1 || r.Errors != 0 || r.MsgPerS <= 0 || r.MBPerS <= 0 {
			t.Errorf("%s: %+v", name, r)
		}
		if r.ServerCPUPerMsgUS <= 0 || r.ServerRSSMB <= 0 {
			t.Errorf("%s: no sink usage: %+v", name, r)
		}
		// Every source waits at least for its connections' greetings.
		if r.SourceCPUPerMsgUS <= 0 || r.SourceWaitsPerMsg < 0 || runtime.GOOS == "linux" && r.SourceWaitsPerMsg == 0 {
			t.Errorf("%s: no source usage: %+v", name, r)
		}
		if wantLat := r.Source != engPostfix; (r.Latency != nil) != wantLat || (r.Dot != nil) != wantLat {
			t.Errorf("%s: latency %+v, dot %+v", name, r.Latency, r.Dot)
		} else if wantLat && (r.Latency.Count != int64(r.Messages) || r.Latency.P50 <= 0 || r.Latency.P99 < r.Latency.P50) {
			t.Errorf("%s: latency %+v", name, r.Latency)
		}
		// The engine wirespeed's sinks ran, as their summaries say.
		if wirespeedSink := r.Sink != engPostfix; (r.SinkEngine != "") != wirespeedSink || r.Sink == engGoroutine && r.SinkEngine != "goroutine" {
			t.Errorf("%s: sink engine %q", name, r.SinkEngine)
		}
		if pinned && (r.ServerCPUs != "0" || r.ClientCPUs != "1") {
			t.Errorf("%s: sink on CPUs %q, source on %q; want 0 and 1", name, r.ServerCPUs, r.ClientCPUs)
		}
	}
}

// `bench smtp -quick` with wirespeed's tools only: both sizes, both of
// wirespeed's plain sources into the plain sink and the TLS source into
// the TLS sink, the latency-honesty runs, the table and the JSON.
func TestBenchSMTPQuick(t *testing.T) {
	bin := buildWirespeed(t)
	rep := runBenchSMTP(t, "-quick", "-exe", bin, "-postfix=false")
	want := []string{"4KiB/wirespeed/wirespeed", "4KiB/wirespeed/wirespeed-pipelining",
		"4KiB/wirespeed-goroutine/wirespeed", "4KiB/wirespeed-goroutine/wirespeed-pipelining", "4KiB/wirespeed-tls/wirespeed-tls",
		"1MiB/wirespeed/wirespeed", "1MiB/wirespeed/wirespeed-pipelining",
		"1MiB/wirespeed-goroutine/wirespeed", "1MiB/wirespeed-goroutine/wirespeed-pipelining", "1MiB/wirespeed-tls/wirespeed-tls"}
	if len(rep.Rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rep.Rows), len(want), rep.Rows)
	}
	for i, r := range rep.Rows {
		if got := r.Size + "/" + r.Sink + "/" + r.Source; got != want[i] {
			t.Errorf("row %d is %s, want %s", i, got, want[i])
		}
		if r.Messages != map[string]int{"4KiB": 200, "1MiB": 4}[r.Size] || r.Sessions != 10 {
			t.Errorf("%s: %d messages over %d sessions", want[i], r.Messages, r.Sessions)
		}
	}
	checkSMTPRows(t, rep.Rows)
	h := rep.Honesty
	if h == nil || h.Err != "" || h.Messages != 50 || h.DelayUS != 1000 || h.P50Plain <= 0 || h.P50Delay <= 0 || h.DiffUS != h.P50Delay-h.P50Plain {
		t.Errorf("latency honesty %+v", h)
	}
	// The Postfix bars have no rows; the TLS and honesty bars have their
	// ratios.
	if len(rep.Bars) != 11 || rep.Bars[2].Ratio != 0 || rep.Bars[8].Ratio <= 0 || rep.Bars[9].Ratio <= 0 || rep.Bars[10].Ratio != h.DiffRatio {
		t.Errorf("bars %+v", rep.Bars)
	}
	if rep.Ceiling != nil {
		t.Errorf("a ceiling without Postfix's rows: %+v", rep.Ceiling)
	}
	// The TLS bar's ceiling: the three byte pipes, each moving the 1 MiB
	// rows' bytes, over TLS 1.3 for two; the AES-GCM rates and the bounds.
	if c := rep.TLS; c == nil || c.Err != "" || c.MiB != 4 || c.Sessions != 10 || c.Runs != 1 || len(c.Modes) != 3 || c.Ratio <= 0 || c.BatchedRatio <= 0 ||
		c.SealMBPerS <= 0 || c.OpenMBPerS <= 0 || c.SourceBound <= 0 || c.SinkBound <= 0 {
		t.Errorf("TLS ceiling %+v", rep.TLS)
	} else {
		for i, m := range c.Modes {
			if m.Mode != tlsPipeModes[i] || m.MBPerS <= 0 || m.ReaderCPUUS <= 0 || m.WriterCPUUS <= 0 || (m.Cipher == "") != (i == 0) {
				t.Errorf("TLS ceiling mode %d: %+v", i, m)
			}
		}
	}

	var out, errOut bytes.Buffer
	if err := RunSMTP(context.Background(), []string{"-quick", "-exe", bin, "-postfix=false", "-m1m", "0", "-lat-m", "0", "-sources", "wirespeed"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	lines := strings.Split(out.String(), "\n")
	var table []string
	for i, l := range lines {
		if strings.HasPrefix(l, "size ") {
			table = lines[i : i+2]
		}
	}
	if table == nil || len(strings.Fields(table[0])) != 20 || !strings.HasPrefix(strings.Join(strings.Fields(table[1]), " "), "4KiB wirespeed wirespeed ") || len(strings.Fields(table[1])) != 13 {
		t.Errorf("table:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "bars (same run)") || strings.Contains(out.String(), "latency honesty (") || strings.Contains(out.String(), "ceiling") {
		t.Errorf("output:\n%s", out.String())
	}
}

// With Postfix's smtp-sink and smtp-source (a missing one fails under
// CI=true): every pairing of sinks and sources runs, and every bar has a
// ratio.
func TestBenchSMTPPostfix(t *testing.T) {
	for _, tool := range []string{"smtp-sink", "smtp-source"} {
		if postfixTool(tool) == "" {
			tooltest.Unavailable(t, "Postfix's %s is not installed (apt-get install postfix)", tool)
		}
	}
	bin := buildWirespeed(t)
	rep := runBenchSMTP(t, "-quick", "-exe", bin, "-lat-m", "0")
	if len(rep.Rows) != 20 { // 3 plain sources into 3 plain sinks (2 wirespeed engines), TLS into TLS, 2 sizes
		t.Fatalf("%d rows, want 20", len(rep.Rows))
	}
	checkSMTPRows(t, rep.Rows)
	if len(rep.Bars) != 10 {
		t.Fatalf("bars %+v", rep.Bars)
	}
	for _, b := range rep.Bars {
		if b.Ratio <= 0 {
			t.Errorf("bar %q has no ratio", b.Name)
		}
	}
	if want := smtpSourceCeiling(rep.Rows); rep.Ceiling == nil || want == nil || *rep.Ceiling != *want {
		t.Errorf("ceiling %+v, want %+v", rep.Ceiling, want)
	}
}

// The ceiling comes from the 4 KiB rows of Postfix's source, and only
// from rows that ran.
func TestSMTPSourceCeiling(t *testing.T) {
	rows := []smtpRow{
		{Size: "1MiB", Sink: engWirespeed, Source: engPostfix, MsgPerS: 4000, SourceCPUPerMsgUS: 100},
		{Size: "4KiB", Sink: engWirespeed, Source: engWirespeed, MsgPerS: 30000, SourceCPUPerMsgUS: 10},
		{Size: "4KiB", Sink: engWirespeed, Source: engPostfix, MsgPerS: 30000, SourceCPUPerMsgUS: 25},
		{Size: "4KiB", Sink: engPostfix, Source: engPostfix, MsgPerS: 20000, SourceCPUPerMsgUS: 30},
	}
	c := smtpSourceCeiling(rows)
	if c == nil || c.SourceCPUPerMsgUS != 25 || c.MaxMsgPerS != 40000 || c.Ratio != 2 || c.SourceBusy != 0.75 {
		t.Errorf("ceiling %+v, want 25 µs/msg, 75%% busy, 40000 msg/s, 2x", c)
	}
	rows[3].Err = "Postfix smtp-source: exit status 1"
	if c := smtpSourceCeiling(rows); c != nil {
		t.Errorf("ceiling %+v from a failed row", c)
	}
	if c := smtpSourceCeiling(rows[:3]); c != nil {
		t.Errorf("ceiling %+v without Postfix's sink", c)
	}
}

// Bad flags are usage errors, found before anything runs: among them
// lists that name an engine twice (its rows ran twice) and flags that
// leave nothing to run (an empty table, exit status 0).
func TestBenchSMTPFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-sinks", "exim"}, {"-sources", "swaks"}, {"-s", "0"}, {"-count", "0"}, {"-delay", "0"}, {"extra"}, {"-sinks", "postfix", "-postfix=false"},
		{"-sources", "wirespeed,wirespeed"}, {"-sinks", "wirespeed, wirespeed-goroutine,wirespeed"}, {"-sources", "postfix,wirespeed,postfix"},
		{"-m4k", "0", "-m1m", "0", "-lat-m", "0"}, {"-quick", "-m4k", "0", "-m1m", "0", "-lat-m", "0"},
		{"-sinks", "wirespeed-tls", "-sources", "wirespeed,wirespeed-pipelining"},
	} {
		var out, errOut bytes.Buffer
		// A binary that is not there, so that what is not refused fails
		// at once instead of running: refused for that, after what the
		// case is about (which the check of the error's text shows).
		args = append([]string{"-exe", "/nonexistent/wirespeed", "-postfix=false"}, args...)
		err := RunSMTP(context.Background(), args, &out, &errOut)
		if status, _ := cli.Status(err); status != 2 || !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), "bench smtp") || strings.Contains(err.Error(), "-exe") {
			t.Errorf("%q: %v (status %d), want a usage error", args, err, status)
		}
	}
	// The latency-honesty run alone is something to run.
	if _, err := parseSMTP([]string{"-m4k", "0", "-m1m", "0", "-sinks", "wirespeed-tls", "-sources", "wirespeed"}, io.Discard, io.Discard); err != nil {
		t.Errorf("-lat-m alone: %v", err)
	}
}

// -server-cpu and -client-cpu are checked before anything runs, as bench
// net checks them: a CPU the process may not run on failed every run
// after the header, and -2 ran unpinned under a header that read "source
// on CPU -2".
func TestBenchSMTPCPUFlags(t *testing.T) {
	bad := [][]string{{"-server-cpu", "-2"}, {"-client-cpu", "-5"}}
	if runtime.NumCPU() >= 2 && canPin {
		bad = append(bad, []string{"-server-cpu", "100000"}, []string{"-client-cpu", "100000"})
	}
	for _, args := range bad {
		_, err := parseSMTP(args, io.Discard, io.Discard)
		if status, _ := cli.Status(err); status != 2 || !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), "bench smtp: ") || !strings.Contains(err.Error(), args[0]+" "+args[1]) {
			t.Errorf("%q: %v (status %d), want a usage error naming %s", args, err, status, args[0])
		}
	}
	for _, args := range [][]string{{"-server-cpu", "-1", "-client-cpu", "-1"}, {"-server-cpu", "0", "-client-cpu", "0"}} {
		if _, err := parseSMTP(args, io.Discard, io.Discard); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
}

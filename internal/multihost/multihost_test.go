package multihost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/tcpperf"
)

// The recipe with tcpperf: a netio server on one host, tcpperf on two
// others, each with -hdr-log; `tcpperf merge` of the two logs gives the
// count and percentiles of one histogram holding every sample of both,
// and each log holds every sample its run counted.
func TestTCPPerfRecipe(t *testing.T) {
	n := newNet(t, 2)
	bin := buildWirespeed(t)
	dir := t.TempDir()
	addr, stop := n.startServer(t, bin, "serve", "-engine", "netio", "-mode", "echo", "-addr", serverIP+":0")

	var logs []string
	var runs []*exec.Cmd
	var outs []*bytes.Buffer
	for i, ns := range n.loads {
		log := filepath.Join(dir, fmt.Sprintf("load%d.hlog", i+1))
		cmd := n.command(ns, bin, "tcpperf", "-addr", addr, "-conns", "8", "-qps", "2000",
			"-duration", "2500ms", "-warmup", "500ms", "-json", "-q", "-hdr-log", log)
		runs, outs, logs = append(runs, cmd), append(outs, startRun(t, cmd)), append(logs, log)
	}
	var results []tcpperf.Result
	var sum int64
	for i, cmd := range runs {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%s: %v\n%s", n.loads[i], err, outs[i])
		}
		var res tcpperf.Result
		if err := json.Unmarshal(outs[i].Bytes(), &res); err != nil {
			t.Fatalf("%s: %v: %s", n.loads[i], err, outs[i])
		}
		if res.Errors != 0 || res.Received == 0 {
			t.Fatalf("%s: %+v", n.loads[i], res)
		}
		results = append(results, res)
		sum += res.Received
	}
	if err := stop(); err != nil {
		t.Errorf("server: %v", err)
	}

	// Each log alone: every sample of its run.
	for i, log := range logs {
		got := percentilesOf(t, oneHistogram(t, log))
		want := percentiles{results[i].Received, results[i].P50, results[i].P90, results[i].P99, results[i].P999, results[i].P9999, results[i].Max}
		if got != want {
			t.Errorf("%s: the log's samples give %+v; the run reported %+v", log, got, want)
		}
	}
	merged := mergeJSON(t, bin, logs)
	all := percentilesOf(t, oneHistogram(t, logs...))
	got := percentiles{merged.Received, merged.P50, merged.P90, merged.P99, merged.P999, merged.P9999, merged.Max}
	if got != all || all.Count != sum {
		t.Errorf("tcpperf merge: %+v\none histogram of both logs' samples: %+v (the runs counted %d)", got, all, sum)
	}
	t.Logf("merged %d samples of two hosts: p50 %.1f µs, p99 %.1f µs, max %.1f µs", got.Count, got.P50, got.P99, got.Max)
}

// The same recipe with smtp-source against smtp-sink: smtp-source's
// -hdr-log holds its delivered messages' latencies, which tcpperf merge
// joins in the same way.
func TestSMTPSourceRecipe(t *testing.T) {
	n := newNet(t, 2)
	bin := buildWirespeed(t)
	dir := t.TempDir()
	addr, stop := n.startServer(t, bin, "smtp-sink", "-addr", serverIP+":0")

	var logs []string
	var runs []*exec.Cmd
	var outs []*bytes.Buffer
	for i, ns := range n.loads {
		log := filepath.Join(dir, fmt.Sprintf("load%d.hlog", i+1))
		cmd := n.command(ns, bin, "smtp-source", "-s", "4", "-m", "500", "-qps", "250", "-json", "-q", "-hdr-log", log, addr)
		runs, outs, logs = append(runs, cmd), append(outs, startRun(t, cmd)), append(logs, log)
	}
	type latency struct {
		Count int64   `json:"count"`
		P50   float64 `json:"p50_us"`
		P90   float64 `json:"p90_us"`
		P99   float64 `json:"p99_us"`
		P999  float64 `json:"p999_us"`
		Max   float64 `json:"max_us"`
	}
	var results []latency
	var sum int64
	for i, cmd := range runs {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%s: %v\n%s", n.loads[i], err, outs[i])
		}
		var res struct {
			Delivered int64 `json:"delivered"`
			Errors    int64 `json:"errors"`
			Latency   struct {
				Message *latency `json:"message"`
			} `json:"latency"`
		}
		if err := json.Unmarshal(outs[i].Bytes(), &res); err != nil {
			t.Fatalf("%s: %v: %s", n.loads[i], err, outs[i])
		}
		if res.Errors != 0 || res.Delivered != 500 || res.Latency.Message == nil || res.Latency.Message.Count != res.Delivered {
			t.Fatalf("%s: %s", n.loads[i], outs[i])
		}
		results = append(results, *res.Latency.Message)
		sum += res.Delivered
	}
	if err := stop(); err != nil {
		t.Errorf("smtp-sink: %v", err)
	}

	for i, log := range logs {
		got := percentilesOf(t, oneHistogram(t, log))
		r := results[i]
		if got.Count != r.Count || got.P50 != r.P50 || got.P90 != r.P90 || got.P99 != r.P99 || got.P999 != r.P999 || got.Max != r.Max {
			t.Errorf("%s: the log's samples give %+v; the run reported %+v", log, got, r)
		}
	}
	merged := mergeJSON(t, bin, logs)
	all := percentilesOf(t, oneHistogram(t, logs...))
	got := percentiles{merged.Received, merged.P50, merged.P90, merged.P99, merged.P999, merged.P9999, merged.Max}
	if got != all || all.Count != sum {
		t.Errorf("tcpperf merge: %+v\none histogram of both logs' samples: %+v (the runs delivered %d)", got, all, sum)
	}
	t.Logf("merged %d messages of two hosts: p50 %.1f µs, p99 %.1f µs, max %.1f µs", got.Count, got.P50, got.P99, got.Max)
}

// startRun starts cmd with its stdout in the returned buffer; a run still
// going when the test ends is killed.
func startRun(t *testing.T, cmd *exec.Cmd) *bytes.Buffer {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return &out
}

// mergeJSON runs `wirespeed tcpperf merge -json` on logs (and the same
// without -json, which must succeed too).
func mergeJSON(t *testing.T, bin string, logs []string) tcpperf.Result {
	t.Helper()
	out, err := exec.Command(bin, append([]string{"tcpperf", "merge", "-json"}, logs...)...).Output()
	if err != nil {
		t.Fatalf("tcpperf merge -json: %v", err)
	}
	var res tcpperf.Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("tcpperf merge -json: %v: %s", err, out)
	}
	if res.Logs != len(logs) {
		t.Errorf("tcpperf merge: %d logs, want %d", res.Logs, len(logs))
	}
	text, err := exec.Command(bin, append([]string{"tcpperf", "merge"}, logs...)...).Output()
	if err != nil || !strings.Contains(string(text), fmt.Sprintf("%d logs merged", len(logs))) {
		t.Errorf("tcpperf merge: %v\n%s", err, text)
	}
	return res
}

// percentiles are what the runs and the merge report, in µs.
type percentiles struct {
	Count                           int64
	P50, P90, P99, P999, P9999, Max float64
}

// oneHistogram records every sample of the logs' untagged intervals into
// one histogram: each interval line's histogram is decoded on its own
// (not with the log reader that merge uses) and each of its values is
// recorded with its count.
func oneHistogram(t *testing.T, logs ...string) *hdrhistogram.Histogram {
	t.Helper()
	var all *hdrhistogram.Histogram
	intervals := 0
	for _, log := range logs {
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, `"StartTimestamp"`) || strings.HasPrefix(line, "Tag=") {
				continue
			}
			f := strings.Split(line, ",")
			h, err := hdrhistogram.Decode([]byte(f[len(f)-1]))
			if err != nil {
				t.Fatalf("%s: %q: %v", log, line, err)
			}
			if all == nil {
				s := h.Export()
				all = hdrhistogram.New(s.LowestTrackableValue, s.HighestTrackableValue, int(s.SignificantFigures))
			}
			for _, bar := range h.Distribution() {
				if bar.Count > 0 {
					if err := all.RecordValues(bar.From, bar.Count); err != nil {
						t.Fatalf("%s: %v", log, err)
					}
				}
			}
			intervals++
		}
	}
	if intervals < 2*len(logs) {
		t.Fatalf("%d intervals in %d logs: want more than one a log", intervals, len(logs))
	}
	return all
}

func percentilesOf(t *testing.T, h *hdrhistogram.Histogram) percentiles {
	t.Helper()
	q := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1e3 }
	return percentiles{h.TotalCount(), q(50), q(90), q(99), q(99.9), q(99.99), float64(h.Max()) / 1e3}
}

//go:build linux

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

	"github.com/wirespeed/wirespeed/smtpsource"
	"github.com/wirespeed/wirespeed/tcpperf"
)

// The recipe with tcpperf: a netio server on one host, tcpperf on two
// others, each with -hdr-log; `tcpperf merge` of the two logs gives the
// count and percentiles of one histogram holding every sample of both,
// and each log holds every sample its run counted. The commands are the
// recipe's as documented, each host's under ip netns exec; the fixed
// ports are free, as nothing else runs in the test's namespaces.
func TestTCPPerfRecipe(t *testing.T) {
	n := newNet(t, 2)
	bin := buildWirespeed(t)
	addr, stop := n.startServer(t, bin, "serve", "-engine", "netio", "-mode", "echo", "-addr", serverIP+":9000")
	logs, outs := runLoads(t, n, func(log string) []string {
		return []string{bin, "tcpperf", "-addr", addr, "-conns", "8", "-qps", "2000",
			"-duration", "2500ms", "-warmup", "500ms", "-json", "-q", "-hdr-log", log}
	})
	if err := stop(); err != nil {
		t.Errorf("server: %v", err)
	}
	var runs []percentiles
	for i, out := range outs {
		var r tcpperf.Result
		if err := json.Unmarshal(out, &r); err != nil || r.Errors != 0 || r.Received == 0 {
			t.Fatalf("%s: %v: %s", n.loads[i], err, out)
		}
		runs = append(runs, percentiles{r.Received, r.P50, r.P90, r.P99, r.P999, r.P9999, r.Max})
	}
	checkMerge(t, bin, logs, runs)
}

// The same recipe with smtp-source against smtp-sink: smtp-source's
// -hdr-log holds its delivered messages' latencies, which tcpperf merge
// joins in the same way.
func TestSMTPSourceRecipe(t *testing.T) {
	n := newNet(t, 2)
	bin := buildWirespeed(t)
	addr, stop := n.startServer(t, bin, "smtp-sink", "-addr", serverIP+":2525")
	const messages = 500
	logs, outs := runLoads(t, n, func(log string) []string {
		return []string{bin, "smtp-source", "-s", "4", "-m", fmt.Sprint(messages), "-qps", "250", "-json", "-q", "-hdr-log", log, addr}
	})
	if err := stop(); err != nil {
		t.Errorf("smtp-sink: %v", err)
	}
	var runs []percentiles
	for i, out := range outs {
		var r smtpsource.Result
		err := json.Unmarshal(out, &r)
		m := r.Phases.Message
		if err != nil || r.Errors != 0 || r.Delivered != messages || m == nil || m.Count != r.Delivered {
			t.Fatalf("%s: %v: %s", n.loads[i], err, out)
		}
		// smtp-source reports no p99.99: none to compare.
		runs = append(runs, percentiles{m.Count, m.P50, m.P90, m.P99, m.P999, -1, m.Max})
	}
	checkMerge(t, bin, logs, runs)
}

// runLoads runs args(LOG) in each load namespace at once, LOG being the
// path of that host's interval log, and returns the logs' paths and the
// runs' outputs once all have ended; a run that fails ends the test.
func runLoads(t *testing.T, n *testNet, args func(log string) []string) (logs []string, outs [][]byte) {
	t.Helper()
	dir := t.TempDir()
	var cmds []*exec.Cmd
	var bufs []*bytes.Buffer
	for i, ns := range n.loads {
		log := filepath.Join(dir, fmt.Sprintf("load%d.hlog", i+1))
		cmd := n.command(ns, args(log)...)
		cmds, bufs, logs = append(cmds, cmd), append(bufs, startRun(t, cmd)), append(logs, log)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%s: %v\n%s", n.loads[i], err, bufs[i])
		}
		outs = append(outs, bufs[i].Bytes())
	}
	return logs, outs
}

// checkMerge checks each log against what its run reported (a negative
// P9999 in runs: not reported), and `tcpperf merge` of the logs against
// one histogram of all their samples, exactly; the samples' count must be
// that of the runs together.
func checkMerge(t *testing.T, bin string, logs []string, runs []percentiles) {
	t.Helper()
	var sum int64
	for i, log := range logs {
		got := percentilesOf(t, oneHistogram(t, log))
		want := runs[i]
		if want.P9999 < 0 {
			want.P9999 = got.P9999
		}
		if got != want {
			t.Errorf("%s: the log's samples give %+v; the run reported %+v", log, got, runs[i])
		}
		sum += runs[i].Count
	}
	merged := mergeJSON(t, bin, logs)
	all := percentilesOf(t, oneHistogram(t, logs...))
	got := percentiles{merged.Received, merged.P50, merged.P90, merged.P99, merged.P999, merged.P9999, merged.Max}
	if got != all || all.Count != sum {
		t.Errorf("tcpperf merge: %+v\none histogram of all the logs' samples: %+v (the runs counted %d)", got, all, sum)
	}
	t.Logf("merged %d samples of %d hosts: p50 %.1f µs, p99 %.1f µs, max %.1f µs", got.Count, len(logs), got.P50, got.P99, got.Max)
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

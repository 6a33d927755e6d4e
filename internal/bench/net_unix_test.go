//go:build unix

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// A point whose tcpperf gives no result says why, even where tcpperf
// said nothing: the run was interrupted (bench's context cancelled, the
// child killed), or how it ended. The row read "tcpperf: " alone.
func TestNetPointNoResult(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	if err := syscall.Mkfifo(started, 0o600); err != nil {
		t.Fatal(err)
	}
	// A stand-in for wirespeed: serve says where it listens and waits;
	// tcpperf says it started (through the FIFO), and then either waits
	// or exits 3, printing nothing.
	exe := filepath.Join(dir, "wirespeed")
	script := `#!/bin/sh
case "$1" in
serve) echo "listening on 127.0.0.1:9"; exec sleep 600;;
tcpperf) echo started > ` + started + `; [ -e ` + filepath.Join(dir, "exit3") + ` ] && exit 3; exec sleep 600;;
esac
`
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	points, err := parseNetPoints("a=echo/1/100/0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := netConfig{exe: exe, engines: []string{"std"}, points: points, duration: time.Second, msgSize: 64, serverCPU: -1, clientCPU: -1}
	run := func(ctx context.Context, cancel func()) netRow {
		go func() {
			if b, err := os.ReadFile(started); err == nil && len(b) > 0 && cancel != nil {
				cancel()
			}
		}()
		return runNetPoint(ctx, cfg, points[0], "std", io.Discard)
	}

	ctx, cancel := context.WithCancel(context.Background())
	if row := run(ctx, cancel); row.Err != "tcpperf: interrupted" {
		t.Errorf("interrupted: row error %q, want %q", row.Err, "tcpperf: interrupted")
	}
	cancel()
	os.WriteFile(filepath.Join(dir, "exit3"), nil, 0o644)
	if row := run(context.Background(), nil); row.Err != "tcpperf: exit status 3, without a result" {
		t.Errorf("tcpperf exiting 3 in silence: row error %q", row.Err)
	}
}

// A point whose tcpperf or sockperf was stopped by a signal (^C at a
// terminal reaches the whole process group) says so, and shows no result:
// tcpperf prints what it measured so far with "interrupted" and sockperf
// prints its statistics and exits 0, and the row showed them as the
// point's measurement.
func TestNetPointSignalled(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "wirespeed")
	script := `#!/bin/sh
case "$1" in
serve) echo "listening on 127.0.0.1:9"; exec sleep 600;;
tcpperf) echo '{"mode":"echo","conns":1,"connected":1,"target_qps":100,"achieved_qps":40,"sent":4,"received":4,"p50_us":30,"p99_us":40,"interrupted":true}'; exit 1;;
esac
`
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	points, err := parseNetPoints("a=echo/1/100/0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := netConfig{exe: exe, engines: []string{"std"}, points: points, duration: time.Second, msgSize: 64, serverCPU: -1, clientCPU: -1}
	if row := runNetPoint(context.Background(), cfg, points[0], "std", io.Discard); row.Err != "tcpperf: interrupted" || row.Result != nil {
		t.Errorf("tcpperf interrupted: row error %q, result %+v; want %q and none", row.Err, row.Result, "tcpperf: interrupted")
	}

	if !canPin {
		return // sockperf's port is found in Linux's /proc
	}
	// The real sockperf serves; its client's part is played by a script
	// printing what sockperf 3.7 printed when given SIGINT mid-run.
	sp := tooltest.Path(t, "sockperf")
	out, err := os.ReadFile("testdata/sockperf-ping-pong.txt")
	if err != nil {
		t.Fatal(err)
	}
	stats := filepath.Join(dir, "stats.txt")
	if err := os.WriteFile(stats, bytes.Replace(out, []byte("(interrupted by timer)"), []byte("(interrupted by user)"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	sockperf := filepath.Join(dir, "sockperf")
	script = `#!/bin/sh
case "$1" in
server) exec ` + sp + ` "$@";;
ping-pong) cat ` + stats + `; exit 0;;
esac
`
	if err := os.WriteFile(sockperf, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if row := runSockperf(context.Background(), cfg, points[0], sockperf); row.Err != "sockperf: interrupted" || row.Result != nil {
		t.Errorf("sockperf interrupted: row error %q, result %+v; want %q and none", row.Err, row.Result, "sockperf: interrupted")
	}
}

// A server that exits with an error when told to stop makes no
// measurement: the row showed tcpperf's figures and the server's CPU and
// memory beside "server exit: ...", and in -json a result and
// server_cpu_s with its error. (A server that ignores SIGTERM, killed
// 10 s later with its CPU time counting the wait, takes the same path.)
func TestNetPointServerExitError(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "wirespeed")
	script := `#!/bin/sh
case "$1" in
serve) trap 'exit 3' TERM; echo "listening on 127.0.0.1:9"; while :; do sleep 0.05; done;;
tcpperf) echo '{"mode":"echo","conns":1,"connected":1,"target_qps":100,"achieved_qps":100,"duration_s":1,"sent":100,"sent_all":100,"received":100,"p50_us":30,"p99_us":40,"p9999_us":50}'; exit 0;;
esac
`
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	points, err := parseNetPoints("a=echo/1/100/0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := netConfig{exe: exe, engines: []string{"std"}, points: points, duration: time.Second, msgSize: 64, serverCPU: -1, clientCPU: -1}
	row := runNetPoint(context.Background(), cfg, points[0], "std", io.Discard)
	if row.Err != "server exit: exit status 3" || row.Result != nil || row.ServerCPUSec != nil || row.ServerRSSMB != nil {
		t.Errorf("row error %q, result %+v, server CPU %v, RSS %v; want %q and no figures", row.Err, row.Result, row.ServerCPUSec, row.ServerRSSMB, "server exit: exit status 3")
	}
	var out bytes.Buffer
	if err := reportNet(&out, cfg, true, []netRow{row}, nil, nil, nil); err == nil {
		t.Error("a failed row, exit status 0")
	}
	var rep struct {
		Points []map[string]any `json:"points"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Points) != 1 {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	for _, k := range []string{"result", "server_cpu_s", "server_peak_rss_mb"} {
		if _, ok := rep.Points[0][k]; ok {
			t.Errorf("failed row has %q in -json: %s", k, out.String())
		}
	}
	out.Reset()
	if err := printNetTable(&out, cfg, []netRow{row}); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(lineOf(out.String(), "std")); got != "std: server exit: exit status 3" {
		t.Errorf("table's std line %q, want the error alone:\n%s", got, out.String())
	}
}

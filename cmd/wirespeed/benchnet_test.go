package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// buildWirespeed builds this command (with the test's race setting, so the
// build cache is shared) for tests that run it as child processes.
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
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestBenchNet(t *testing.T) {
	bin := buildWirespeed(t)
	if raceBuild {
		// A race-enabled process sleeps 1s at exit (ThreadSanitizer's
		// atexit_sleep_ms); with two children per row that was most of
		// this test's time.
		t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	points, err := parseNetPoints("open=echo/2/200/0,closed=line/2/0/4")
	if err != nil {
		t.Fatal(err)
	}
	cfg := benchNetConfig{
		exe: bin, engines: []string{"std", "netio", "gnet", "evio"}, points: points,
		duration: 300 * time.Millisecond, warmup: 100 * time.Millisecond, msgSize: 64,
		serverCPU: 0, clientCPU: 1,
	}
	pinned := runtime.NumCPU() >= 2 && canPin
	if !pinned {
		cfg.serverCPU, cfg.clientCPU = -1, -1
	}
	rows := benchNet(cfg, &bytes.Buffer{})
	if len(rows) != 8 {
		t.Fatalf("%d rows, want 8", len(rows))
	}
	for _, r := range rows {
		if r.Err != "" || r.Result == nil {
			t.Errorf("%s/%s: %s", r.Point, r.Engine, r.Err)
			continue
		}
		if r.Result.Errors != 0 || r.Result.Received == 0 {
			t.Errorf("%s/%s: %+v", r.Point, r.Engine, *r.Result)
		}
		if r.ServerCPUSec <= 0 || r.ServerRSSMB <= 0 {
			t.Errorf("%s/%s: no server usage: %+v", r.Point, r.Engine, r)
		}
		if pinned && (r.ServerCPUs != "0" || r.ClientCPUs != "1") {
			t.Errorf("%s/%s: server on CPUs %q, client on %q; want 0 and 1", r.Point, r.Engine, r.ServerCPUs, r.ClientCPUs)
		}
	}
	var out bytes.Buffer
	printNetTable(&out, cfg, rows)
	for _, want := range []string{"open: echo mode, 2 conns, open loop 200 msg/s", "closed: line mode, 2 conns, closed loop, depth 4", "netio", "evio"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestParseNetPoints(t *testing.T) {
	ps, err := parseNetPoints(defaultNetPoints)
	if err != nil || len(ps) != 3 || ps[2] != (netPoint{Name: "pipelined", Mode: "line", Conns: 100, Depth: 16}) {
		t.Fatalf("%+v, %v", ps, err)
	}
	for _, bad := range []string{"", "x", "a=echo/1/1", "a=http/1/1/0", "a=echo/0/1/0", "a=line/1/0/0", "a=echo/x/1/0"} {
		if _, err := parseNetPoints(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

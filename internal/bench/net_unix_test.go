//go:build unix

package bench

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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

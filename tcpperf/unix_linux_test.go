package tcpperf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/serve"
)

// Over a Unix socket (Addr unix:PATH) against `serve -addr unix:PATH` on
// its std and netio engines, closed and open loop: engine netio is
// chosen, every response is checked, and the counts add up.
func TestUnixSocket(t *testing.T) {
	for _, engine := range []string{"std", "netio"} {
		for _, open := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/open=%v", engine, open), func(t *testing.T) {
				addr := "unix:" + filepath.Join(t.TempDir(), "echo.sock")
				s, err := serve.Start(serve.Config{Engine: engine, Mode: "echo", Addr: addr}, serve.Builtin())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Stop() })
				// The drain's minute is a guard against a hang (TestTLS).
				cfg := Config{Addr: addr, Conns: 8, Loops: 2, MsgSize: 100, Duration: 100 * time.Millisecond, Depth: 3, DrainTimeout: time.Minute}
				if open {
					cfg.QPS, cfg.Warmup = 2000, 20*time.Millisecond
				}
				res, err := Run(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				if res.Engine != EngineNetio || res.Connected != 8 || res.Errors != 0 || res.Unanswered != 0 {
					t.Fatalf("want engine netio, 8 connections, no errors: %+v", res)
				}
				switch {
				case open && (res.Sent != 200 || res.Received != 200):
					t.Fatalf("want 200 sent and received in the measurement: %+v", res)
				case !open && (res.SentAll < 8*3 || res.Received != res.Sent):
					t.Fatalf("closed loop: want 24 sent at least, every measured one received: %+v", res)
				}
			})
		}
	}
	_, err := Run(context.Background(), Config{Addr: "unix:/nonexistent.sock", Engine: EngineTcpperf})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("a Unix socket on engine tcpperf: %v, want ErrConfig", err)
	}
}

// A Unix socket's connections take no ephemeral port: more of them than
// the port range has are no ErrPorts ("widen
// net.ipv4.ip_local_port_range"), which refused such a run before it
// dialed. (The run is stopped before it connects; the file descriptor
// limit must hold the connections: the test raises it if it may, and is
// skipped if not.)
func TestUnixSocketNoPorts(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Skip(err)
	}
	lo, hi, err := ParsePortRange(string(b))
	if err != nil {
		t.Fatal(err)
	}
	conns := hi - lo + 2
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	need := uint64(conns) + 1024
	if old.Cur < need {
		raised := syscall.Rlimit{Cur: need, Max: max(old.Max, need)}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			t.Skipf("cannot raise the file descriptor limit to %d: %v", need, err)
		}
		t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Run(ctx, Config{Addr: "unix:" + filepath.Join(t.TempDir(), "none.sock"), Conns: conns})
	if errors.Is(err, ErrPorts) || !errors.Is(err, context.Canceled) {
		t.Errorf("%d connections over a Unix socket: %v, want the run stopped while connecting, no ErrPorts", conns, err)
	}
}

package tcpperfcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/sleep/sleeptest"
	"github.com/wirespeed/wirespeed/internal/tooltest"
	"github.com/wirespeed/wirespeed/tcpperf"
)

// echoServer answers on 127.0.0.1:0 with the bytes it reads.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// The flags reach tcpperf.Config and -json prints the Result; -hdr-log
// writes a log. Counts are asserted, not rates: on a fake clock that the
// server's answers move (clocked), the closed loop ends after 100 of
// them, however long they take.
func TestRunJSON(t *testing.T) {
	clk := sleeptest.NewClock()
	addr := clocked(t, clk, echoServer(t))
	hdr := filepath.Join(t.TempDir(), "hdr.log")
	var out, errb bytes.Buffer
	err := runOn(clk, []string{"-addr", addr, "-conns", "2", "-qps", "0", "-depth", "3", "-msg-size", "32",
		"-duration", "100ms", "-warmup", "0s", "-mode", "line", "-json", "-q", "-hdr-log", hdr, "-cpus", "2", "-pin", "0"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var res tcpperf.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	if res.Mode != "line" || res.Conns != 2 || res.Connected != 2 || res.Depth != 3 || res.MsgSize != 32 || res.TargetQPS != 0 || res.Loops != 2 {
		t.Errorf("flags not passed on: %+v", res)
	}
	if res.Received == 0 || res.Errors != 0 || res.DurationS != 0.1 {
		t.Errorf("run: %+v, want responses, no errors, 0.1s measured", res)
	}
	if errb.Len() != 0 {
		t.Errorf("-q printed progress: %q", errb.String())
	}
	if fi, err := os.Stat(hdr); err != nil || fi.Size() == 0 {
		t.Errorf("hdr log: %v, %v", fi, err)
	}
	if res.Engine != tcpperf.EngineTcpperf {
		t.Errorf("engine %q, want the default, tcpperf", res.Engine)
	}
}

// -engine netio runs the connections on netio's loops, open and closed
// loop, and says so. On a fake clock: the open loop's schedule is its 200
// messages in 100ms whenever they go out, and the closed loop, whose
// clock the server's answers move, ends after 100 of them.
func TestRunEngineNetio(t *testing.T) {
	addr := echoServer(t)
	for _, c := range []struct {
		load  []string
		proxy bool  // the server's answers move the clock
		sent  int64 // all received too; 0: some
	}{
		{[]string{"-qps", "0", "-depth", "2"}, true, 0},
		{[]string{"-qps", "2000", "-wait", "batch"}, false, 200},
	} {
		clk := sleeptest.NewClock()
		to := addr
		if c.proxy {
			to = clocked(t, clk, addr)
		}
		var out, errb bytes.Buffer
		args := append([]string{"-engine", "netio", "-addr", to, "-conns", "4", "-cpus", "2", "-duration", "100ms", "-warmup", "0s", "-json", "-q"}, c.load...)
		if err := runOn(clk, args, &out, &errb); err != nil {
			t.Fatalf("%v: %v: %s", args, err, errb.String())
		}
		var res tcpperf.Result
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("%v: %q", err, out.String())
		}
		if res.Engine != tcpperf.EngineNetio || res.Loops != 2 || res.Received == 0 || res.Errors != 0 || res.Arrival != tcpperf.ArrivalRead {
			t.Errorf("%v: %+v", c.load, res)
		}
		if c.sent > 0 && (res.Sent != c.sent || res.Received != c.sent) {
			t.Errorf("%v: sent %d, received %d, want %d each", c.load, res.Sent, res.Received, c.sent)
		}
	}
	var out, errb bytes.Buffer
	err := Run(context.Background(), []string{"-engine", "netio", "-addr", addr, "-wait", "spin", "-q"}, &out, &errb)
	if !errors.Is(err, tcpperf.ErrConfig) {
		t.Errorf("-engine netio -wait spin: %v, want tcpperf.ErrConfig", err)
	}
}

func TestRunErrors(t *testing.T) {
	var out, errb bytes.Buffer
	err := Run(context.Background(), []string{"-nosuchflag"}, &out, &errb)
	if status, print := cli.Status(err); status != 2 || print {
		t.Errorf("bad flag: %v (status %d)", err, status)
	}
	err = Run(context.Background(), []string{"-mode", "http", "-q"}, &out, &errb)
	if status, print := cli.Status(err); !errors.Is(err, tcpperf.ErrConfig) || status != 2 || !print {
		t.Errorf("bad mode: %v (status %d), want tcpperf.ErrConfig, a usage error", err, status)
	}
	// TLS on a Unix socket has no host name to check the certificate
	// against: say which flag gives one (it failed with crypto/tls's
	// "either ServerName or InsecureSkipVerify must be specified"). TLS
	// flags without -tls are a usage error (status 2; it was 1).
	err = Run(context.Background(), []string{"-addr", "unix:/nonexistent/s", "-tls", "-q"}, &out, &errb)
	if status, _ := cli.Status(err); status != 2 || !strings.Contains(fmt.Sprint(err), "-tls-server-name") {
		t.Errorf("-tls on unix: %v (status %d)", err, status)
	}
	err = Run(context.Background(), []string{"-addr", "127.0.0.1:1", "-tls-insecure", "-q"}, &out, &errb)
	if status, _ := cli.Status(err); status != 2 {
		t.Errorf("-tls-insecure without -tls: %v (status %d)", err, status)
	}
	// -tls-insecure and -tls-ca contradict each other (one was ignored).
	err = Run(context.Background(), []string{"-addr", "127.0.0.1:1", "-tls", "-tls-insecure", "-tls-ca", "ca.pem", "-q"}, &out, &errb)
	if status, _ := cli.Status(err); status != 2 || !strings.Contains(fmt.Sprint(err), "one or the other") {
		t.Errorf("-tls-insecure -tls-ca: %v (status %d)", err, status)
	}
	// An address without a port, or port 0 however written (net dials
	// "+0" and "-0" as 0), or one net cannot split, and more
	// connections than any run can open are refused before dialing (they
	// failed to dial, status 1, or asked for a limit of 10^11 descriptors).
	for _, bad := range [][]string{{"-addr", "127.0.0.1"}, {"-addr", "bogus"}, {"-addr", "::1:9"}, {"-addr", "[::1]:"},
		{"-addr", "127.0.0.1:99999"}, {"-addr", "127.0.0.1:-1"}, {"-addr", "127.0.0.1:0"}, {"-addr", "127.0.0.1:no-such-service"},
		{"-addr", "127.0.0.1:+0"}, {"-addr", "127.0.0.1:-0"}, {"-addr", "[::1]:000"}} {
		err = Run(context.Background(), append(bad, "-q"), &out, &errb)
		if status, _ := cli.Status(err); status != 2 || !strings.Contains(fmt.Sprint(err), bad[0]) {
			t.Errorf("%q: %v (status %d), want a usage error naming the flag", bad, err, status)
		}
	}
	err = Run(context.Background(), []string{"-conns", "99999999999", "-q"}, &out, &errb)
	if status, _ := cli.Status(err); status != 2 || !errors.Is(err, tcpperf.ErrConfig) {
		t.Errorf("-conns 99999999999: %v (status %d), want tcpperf.ErrConfig, a usage error", err, status)
	}
	// A configuration only the run can refuse (a CPU to pin to that the
	// process may not use) is a usage error as well (status 2; it was 1).
	if runtime.GOOS == "linux" {
		err = Run(context.Background(), []string{"-addr", echoServer(t), "-pin", "100000", "-q", "-duration", "100ms"}, &out, &errb)
		if status, _ := cli.Status(err); status != 2 || !errors.Is(err, tcpperf.ErrConfig) {
			t.Errorf("-pin 100000: %v (status %d)", err, status)
		}
	}
	// Nothing listens on a socket bound and not listening: no connection
	// opens.
	addr := tooltest.RefusingAddr(t)
	out.Reset()
	err = Run(context.Background(), []string{"-addr", addr, "-conns", "1", "-duration", "10ms", "-warmup", "0s", "-q"}, &out, &errb)
	if status, print := cli.Status(err); !errors.Is(err, tcpperf.ErrConnect) || status != 1 || !print {
		t.Errorf("refused: %v (status %d)\n%s", err, status, out.String())
	}
	// -depth is closed loop's: with a rate it was ignored (exit 0).
	for _, bad := range [][]string{{"-depth", "5"}, {"-depth", "1", "-qps", "100"}} {
		err := Run(context.Background(), append(bad, "-q", "-addr", addr, "-duration", "10ms", "-warmup", "0s"), &out, &errb)
		if status, _ := cli.Status(err); status != 2 || !strings.Contains(fmt.Sprint(err), "-depth is for closed loop") {
			t.Errorf("%q in open loop: %v (status %d), want a usage error", bad, err, status)
		}
	}
	for _, bad := range [][]string{{"-conns", "0"}, {"-depth", "0"}, {"-cpus", "0"}, {"-duration", "0s"}, {"-drain", "-1s"}, {"-warmup", "-1s"}, {"-msg-size", "0"}, {"-duration", "2562047h", "-warmup", "1h"}, {"-duration", "1ns"},
		// The package's defaults too (-spin 30µs, -batch 400µs): they ran.
		{"-spin", "0"}, {"-wait", "batch", "-batch", "0"}} {
		// A refusing address: a mistake let through fails to connect,
		// and loads no server on the default's port.
		if err := Run(context.Background(), append([]string{"-addr", addr, "-q"}, bad...), &out, &errb); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("%q: %v, want a usage error, not the default", bad, err)
		}
	}
	// -spin is at most 10ms, on either engine (2562047h47m16.854775807s
	// overflowed: -wait adaptive then sent nothing and never ended).
	for _, spin := range []string{"11ms", "2562047h47m16.854775807s"} {
		for _, engine := range []string{"tcpperf", "netio"} {
			err := Run(context.Background(), []string{"-q", "-addr", addr, "-engine", engine, "-spin", spin, "-qps", "100", "-duration", "10ms", "-warmup", "0s"}, &out, &errb)
			if status, _ := cli.Status(err); status != 2 || !errors.Is(err, tcpperf.ErrConfig) || !strings.Contains(fmt.Sprint(err), "spin") {
				t.Errorf("-engine %s -spin %s: %v (status %d), want a usage error about the spin", engine, spin, err, status)
			}
		}
	}
	// A word that is not a flag is not taken for the address (which would
	// have measured the default's server instead).
	err = Run(context.Background(), []string{"-q", addr}, &out, &errb)
	if !errors.Is(err, cli.ErrUsage) {
		t.Errorf("a bare address: %v, want a usage error", err)
	}
	// A configuration refused leaves the files of an earlier run alone.
	keep := filepath.Join(t.TempDir(), "keep")
	os.WriteFile(keep, []byte("an earlier run"), 0o644)
	err = Run(context.Background(), []string{"-addr", addr, "-q", "-mode", "foo", "-hdr-log", keep, "-plot", keep}, &out, &errb)
	if b, _ := os.ReadFile(keep); !errors.Is(err, tcpperf.ErrConfig) || string(b) != "an earlier run" {
		t.Errorf("bad mode: %v; the earlier file holds %q", err, b)
	}
	// A -hdr-log that cannot be written (a full disk) fails the command,
	// after the result; it exited 0 with the log lost.
	// On a fake clock: the runs' 10 messages are all answered however
	// slow the machine, so that a status 1 is the log's alone.
	if _, err := os.Stat("/dev/full"); err == nil {
		srv := echoServer(t)
		clk := sleeptest.NewClock()
		out.Reset()
		err := runOn(clk, []string{"-addr", srv, "-q", "-duration", "50ms", "-warmup", "0s", "-qps", "200", "-hdr-log", "/dev/full"}, &out, &errb)
		if status, print := cli.Status(err); status != 1 || !print || !strings.Contains(out.String(), "achieved") {
			t.Errorf("-hdr-log /dev/full: %v (status %d)\n%s", err, status, out.String())
		}
		// A -plot that cannot be written says which flag failed, as
		// -hdr-log's error does (it said "write /dev/full: ...", alone),
		// in a run and in a merge.
		out.Reset()
		err = runOn(clk, []string{"-addr", srv, "-q", "-duration", "50ms", "-warmup", "0s", "-qps", "200", "-plot", "/dev/full"}, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), "-plot: write /dev/full") || !strings.Contains(out.String(), "achieved") {
			t.Errorf("-plot /dev/full: %v\n%s", err, out.String())
		}
		hlog := filepath.Join(t.TempDir(), "run.hlog")
		if err := runOn(clk, []string{"-addr", srv, "-q", "-duration", "50ms", "-warmup", "0s", "-qps", "200", "-hdr-log", hlog}, &out, &errb); err != nil {
			t.Fatal(err)
		}
		err = Run(context.Background(), []string{"merge", "-plot", "/dev/full", hlog}, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), "-plot: write /dev/full") {
			t.Errorf("merge -plot /dev/full: %v", err)
		}
		// And one that cannot be made names it too.
		missing := filepath.Join(t.TempDir(), "none", "x.svg")
		err = Run(context.Background(), []string{"merge", "-plot", missing, hlog}, &out, &errb)
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "-plot: open "+missing) {
			t.Errorf("merge -plot into a missing directory: %v", err)
		}
	}
	// A run that cannot connect leaves the files of an earlier run as
	// they were, and makes none (they were emptied, or left empty).
	refused := tooltest.RefusingAddr(t)
	dir := t.TempDir()
	for _, c := range []struct{ hdr, svg string }{
		{keep, filepath.Join(dir, "new.svg")},
		{filepath.Join(dir, "new.hlog"), keep},
	} {
		err = Run(context.Background(), []string{"-addr", refused, "-q", "-hdr-log", c.hdr, "-plot", c.svg}, &out, &errb)
		if b, _ := os.ReadFile(keep); !errors.Is(err, tcpperf.ErrConnect) || string(b) != "an earlier run" {
			t.Errorf("no server: %v; the earlier file holds %q", err, b)
		}
		for _, made := range []string{c.hdr, c.svg} {
			if _, err := os.Stat(made); made != keep && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("no server: %s made (%v)", made, err)
			}
		}
	}
	// A -plot or -hdr-log file that cannot be made fails before the run,
	// not after it (whose result went unprinted): not ErrConnect. Its
	// error names the flag (it read "open DIR/none/x: ..." alone).
	missing := filepath.Join(t.TempDir(), "none", "x")
	for _, flag := range []string{"-plot", "-hdr-log"} {
		err = Run(context.Background(), []string{"-addr", addr, "-q", flag, missing}, &out, &errb)
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), flag+": open "+missing) {
			t.Errorf("%s into a missing directory: %v, want ErrNotExist naming the flag before connecting", flag, err)
		}
	}
}

// A run stopped before its measurement has no tool CPU figures: it
// printed the warm-up's, or those of the microseconds after a stop
// while connecting ("209% of one core"), as the measurement's.
func TestPrintNothingMeasured(t *testing.T) {
	r := &tcpperf.Result{Mode: "echo", Conns: 1, Connected: 1, TargetQPS: 100, Loops: 1, Wait: tcpperf.WaitAdaptive, Arrival: tcpperf.ArrivalRead, Interrupted: true}
	var b bytes.Buffer
	if err := Print(&b, r); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "tool CPU - (nothing measured; 1 loops waiting adaptive; responses timed at read)") {
		t.Errorf("stopped in the warm-up:\n%s", s)
	}
}

// A rate below one message a second is written as it is: "%.0f" wrote
// -qps 0.001 as "0 msg/s open loop", which reads as no load.
func TestPrintLowRate(t *testing.T) {
	for qps, want := range map[float64]string{0.001: "0.001 msg/s open loop", 0.25: "0.25 msg/s open loop", 1e-6: "1e-06 msg/s open loop", 1: "1 msg/s open loop", 1234.6: "1235 msg/s open loop"} {
		var b bytes.Buffer
		if err := Print(&b, &tcpperf.Result{Mode: "echo", Conns: 1, Connected: 1, TargetQPS: qps, MsgSize: 64}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), ", "+want+", ") {
			t.Errorf("qps %g: want %q in\n%s", qps, want, b.String())
		}
	}
}

func TestPrint(t *testing.T) {
	r := &tcpperf.Result{Mode: "echo", Conns: 10, Connected: 9, TargetQPS: 1000, MsgSize: 64, DurationS: 10,
		P50: 12.5, P90: 20, P99: 100.25, P999: 1000, P9999: 2000, Max: 12345.6, AchievedQPS: 999.6, Sent: 10000, Received: 9990,
		Errors: 11, ConnectFailures: 1, Unanswered: 10, ConnectError: "refused", LatenessP50: 1, LatenessP99: 2, LatenessMax: 3, Loops: 2, Wait: tcpperf.WaitAdaptive, Arrival: tcpperf.ArrivalRead, CPUPerMsg: 2.5, CPUUtil: 0.25, LoopBusy: 0.125}
	var b bytes.Buffer
	if err := Print(&b, r); err != nil {
		t.Fatal(err)
	}
	want := `echo mode, 9 of 10 conns, 1000 msg/s open loop, 64-byte messages, 10.0s measured
achieved 1000 msg/s (sent 10000, received 9990)
             µs   p50   p90    p99   p99.9  p99.99      max
        latency  12.5  20.0  100.2  1000.0  2000.0  12345.6
  send lateness   1.0     -    2.0       -       -      3.0
(send lateness is the tool's own floor: actual minus intended send time)
tool CPU 2.50 µs/msg (25% of one core; 2 loops waiting adaptive, busy 12% of the time; responses timed at read)
errors 11 (connect 1, write 0, read 0, content 0, unanswered 10, unsent 0)
connect: refused
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}

	// A run that fell behind: its rate is over the span its messages went
	// out in, which the line says, and how far past the window that ran.
	r.SendSpanS, r.AchievedQPS = 10.05, 9990/10.05
	b.Reset()
	if err := Print(&b, r); err != nil {
		t.Fatal(err)
	}
	wantLine := "achieved 994 msg/s over 10.05s, sending 50ms past the window (sent 10000, received 9990)\n"
	if got := strings.Split(b.String(), "\n")[1] + "\n"; got != wantLine {
		t.Errorf("fell behind: got\n%swant\n%s", got, wantLine)
	}
	r.Wait, r.BatchUs, r.Arrival = tcpperf.WaitBatch, 400, tcpperf.ArrivalKernel
	b.Reset()
	Print(&b, r)
	if s := b.String(); !strings.Contains(s, "2 loops waiting batch 400µs, busy 12% of the time; responses timed at kernel)") {
		t.Errorf("batching:\n%s", s)
	}
	r.Engine = tcpperf.EngineNetio
	b.Reset()
	Print(&b, r)
	if s := b.String(); !strings.Contains(s, "2 netio loops waiting batch 400µs") {
		t.Errorf("engine netio:\n%s", s)
	}
	r.Engine = tcpperf.EngineTcpperf
	r.TargetQPS, r.Depth, r.Connected, r.ConnectError = 0, 4, 10, ""
	b.Reset()
	Print(&b, r)
	if s := b.String(); !strings.Contains(s, "closed loop, depth 4") || strings.Contains(s, "lateness") {
		t.Errorf("closed loop:\n%s", s)
	}
	// Nothing measured (a run stopped in its warm-up, a server that never
	// answers) is no latency, not 0.0 µs; nothing sent, no lateness.
	r = &tcpperf.Result{Mode: "echo", Conns: 1, Connected: 1, TargetQPS: 100, MsgSize: 64}
	b.Reset()
	Print(&b, r)
	dashes := strings.Repeat(" -", 6)
	if s := strings.Join(strings.Fields(b.String()), " "); !strings.Contains(s, " latency"+dashes+" send lateness"+dashes+" (") {
		t.Errorf("nothing measured:\n%s", b.String())
	}
}

// -cpus beyond -conns runs as many loops as connections, and sets
// GOMAXPROCS for those: it was set to -cpus + 1 before the run, and
// -cpus 100000 had the runtime die of thread exhaustion.
func TestCPUsBeyondConns(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	var out, errb bytes.Buffer
	err := runOn(sleeptest.NewClock(), []string{"-addr", echoServer(t), "-conns", "1", "-cpus", "64", "-qps", "100",
		"-duration", "50ms", "-warmup", "0s", "-json", "-q"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var res tcpperf.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Loops != 1 {
		t.Fatalf("%v: %s, want 1 loop", err, out.String())
	}
	if got := runtime.GOMAXPROCS(0); got > max(prev, 2) {
		t.Errorf("GOMAXPROCS %d after -cpus 64 -conns 1, want at most %d", got, max(prev, 2))
	}
}

// A -batch window prints as a duration, however large: 20s printed as
// "2e+07µs".
func TestPrintBatch(t *testing.T) {
	for _, c := range []struct {
		us   float64
		want string
	}{{400, "waiting batch 400µs,"}, {2e7, "waiting batch 20s,"}, {1500, "waiting batch 1.5ms,"}, {0.5, "waiting batch 500ns,"}} {
		r := &tcpperf.Result{Mode: "echo", Conns: 1, Connected: 1, TargetQPS: 1000, Loops: 1, Wait: tcpperf.WaitBatch, BatchUs: c.us, Arrival: tcpperf.ArrivalKernel, DurationS: 1}
		var b bytes.Buffer
		if err := Print(&b, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("batch %gµs: want %q in\n%s", c.us, c.want, b.String())
		}
	}
}

// A closed-loop run's chosen wait says what applies: the loops wait for
// responses. It said "chosen by the load", as an open loop's choice.
func TestPrintClosedLoopWait(t *testing.T) {
	r := &tcpperf.Result{Mode: "echo", Conns: 1, Connected: 1, Depth: 1, Loops: 1, Wait: tcpperf.WaitSleep, WaitChosen: true, Arrival: tcpperf.ArrivalRead, DurationS: 1}
	var b bytes.Buffer
	if err := Print(&b, r); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "1 loops waiting sleep (closed loop: for responses), busy") || strings.Contains(s, "chosen by the load") {
		t.Errorf("closed loop:\n%s", s)
	}
	r.TargetQPS = 1000
	b.Reset()
	Print(&b, r)
	if s := b.String(); !strings.Contains(s, "1 loops waiting sleep, chosen by the load, busy") {
		t.Errorf("open loop:\n%s", s)
	}
}

// Loops near fully busy set the figures themselves; the text says so, in
// open loop (lateness in every latency) and closed (the rate), and not
// below busyLimit or with nothing measured.
func TestPrintBusyLimit(t *testing.T) {
	for _, c := range []struct {
		busy, qps, dur float64
		want           string
	}{
		{0.84, 60000, 4, ""},
		{0.97, 60000, 4, "the tool was near its limit (loops busy 97%): its send lateness is in every latency above;"},
		{busyLimit, 60000, 4, "(loops busy 85%): its send lateness"},
		{0.97, 0, 4, "the tool was near its limit (loops busy 97%): the rate may be the tool's, not the server's;"},
		{0.97, 60000, 0, ""},
	} {
		r := &tcpperf.Result{Mode: "echo", Conns: 1, Connected: 1, TargetQPS: c.qps, Depth: 1, Loops: 1, Wait: tcpperf.WaitBatch, Arrival: tcpperf.ArrivalKernel,
			DurationS: c.dur, Sent: 1, Received: 1, CPUPerMsg: 16, CPUUtil: c.busy, LoopBusy: c.busy}
		var b bytes.Buffer
		if err := Print(&b, r); err != nil {
			t.Fatal(err)
		}
		s := b.String()
		if got := strings.Contains(s, "near its limit"); got != (c.want != "") || !strings.Contains(s, c.want) {
			t.Errorf("busy %g, qps %g, duration %g: want %q in\n%s", c.busy, c.qps, c.dur, c.want, s)
		}
	}
}

// netio's loops do not measure how busy they are: the text said "busy 0%
// of the time" of every such run, a figure nothing measured.
func TestPrintNetioBusy(t *testing.T) {
	r := &tcpperf.Result{Mode: "echo", Conns: 1, Connected: 1, TargetQPS: 1000, Loops: 1, Engine: tcpperf.EngineNetio, Wait: tcpperf.WaitSleep, Arrival: tcpperf.ArrivalRead, DurationS: 1, CPUPerMsg: 2, CPUUtil: 0.1}
	var b bytes.Buffer
	if err := Print(&b, r); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "1 netio loops waiting sleep, busy not measured; responses") {
		t.Errorf("netio:\n%s", s)
	}
	r.Engine = tcpperf.EngineTcpperf
	b.Reset()
	Print(&b, r)
	if s := b.String(); !strings.Contains(s, "1 loops waiting sleep, busy 0% of the time; responses") {
		t.Errorf("tcpperf's loops, measured 0:\n%s", s)
	}
}

// A run in which no message was due has no CPU time per message: the
// text read "tool CPU 0.00 µs/msg".
func TestPrintNoMessageCPU(t *testing.T) {
	r := &tcpperf.Result{Mode: "echo", Conns: 2, Connected: 2, Loops: 1, Wait: tcpperf.WaitSleep, WaitChosen: true, Arrival: tcpperf.ArrivalRead, DurationS: 0.2, CPUUtil: 0.003, ReadErrors: 2, Errors: 2}
	var b bytes.Buffer
	if err := Print(&b, r); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "tool CPU - µs/msg (0% of one core; ") {
		t.Errorf("nothing sent:\n%s", s)
	}
	r.Sent, r.CPUPerMsg = 5, 3
	b.Reset()
	Print(&b, r)
	if s := b.String(); !strings.Contains(s, "tool CPU 3.00 µs/msg (") {
		t.Errorf("5 sent:\n%s", s)
	}
}

// A configuration the package refuses is a usage error naming the flag
// at fault: "bad configuration: rate -5 not 0 or ..." named none.
func TestConfigErrorNamesFlag(t *testing.T) {
	var out, errb bytes.Buffer
	refused := tooltest.RefusingAddr(t)
	for _, bad := range [][]string{
		{"-qps", "-5"}, {"-mode", "x"}, {"-spin", "1h"}, {"-batch", "1ms"}, {"-wait", "x"}, {"-arrival", "x"},
		{"-engine", "x"}, {"-msg-size", "2000000"}, {"-cpus", "2000", "-conns", "2000"},
		{"-duration", "1s", "-qps", "0.5"}, {"-addr", "unix:"},
	} {
		// A refusing address first (the -addr of bad comes after it).
		err := Run(context.Background(), append([]string{"-addr", refused, "-q", "-duration", "1s"}, bad...), &out, &errb)
		if status, _ := cli.Status(err); status != 2 || !errors.Is(err, tcpperf.ErrConfig) || !strings.HasPrefix(fmt.Sprint(err), "tcpperf: "+bad[0]+": bad configuration: ") {
			t.Errorf("%q: %v (status %d), want a usage error naming %s", bad, err, status, bad[0])
		}
	}
}

// A measurement shorter than a second is printed as it was: -duration 1ms
// read "0.0s measured", as a run stopped in its warm-up does.
func TestPrintShortMeasurement(t *testing.T) {
	for secs, want := range map[float64]string{0.001: "1ms measured", 0.25: "250ms measured", 0.0000015: "2µs measured", 0: "0.0s measured", 10: "10.0s measured", 1.25: "1.2s measured"} {
		var b bytes.Buffer
		if err := Print(&b, &tcpperf.Result{Mode: "echo", Conns: 1, Connected: 1, TargetQPS: 1000, MsgSize: 64, DurationS: secs}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), ", 64-byte messages, "+want+"\n") {
			t.Errorf("%gs: want %q in\n%s", secs, want, b.String())
		}
	}
}

// -hdr-log and -plot naming one file (by any path) is a usage error: the
// plot overwrote the log at the end, exit 0. It leaves no file made, and
// an earlier one as it was.
func TestHdrLogPlotSameFile(t *testing.T) {
	var out, errb bytes.Buffer
	refused := tooltest.RefusingAddr(t) // never a run, even before the fix
	dir := t.TempDir()
	made := filepath.Join(dir, "new")
	keep := filepath.Join(dir, "keep")
	os.WriteFile(keep, []byte("an earlier run"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(keep, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{made, made}, {keep, link}} {
		err := Run(context.Background(), []string{"-q", "-addr", refused, "-hdr-log", c[0], "-plot", c[1]}, &out, &errb)
		if status, _ := cli.Status(err); status != 2 || !strings.Contains(fmt.Sprint(err), "-hdr-log and -plot") {
			t.Errorf("-hdr-log %s -plot %s: %v (status %d), want a usage error", c[0], c[1], err, status)
		}
	}
	if _, err := os.Stat(made); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s made (%v)", made, err)
	}
	if b, _ := os.ReadFile(keep); string(b) != "an earlier run" {
		t.Errorf("the earlier file holds %q", b)
	}
}

// With -json, a run that ends in an error with no result prints the error
// as one JSON object (it printed nothing on stdout), with "interrupted"
// when a signal stopped it; a usage error prints none.
func TestJSONOnError(t *testing.T) {
	refused := tooltest.RefusingAddr(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name        string
		ctx         context.Context
		interrupted bool
	}{{"refused", context.Background(), false}, {"interrupted", cancelled, true}} {
		var out, errb bytes.Buffer
		err := Run(c.ctx, []string{"-addr", refused, "-q", "-json"}, &out, &errb)
		var got struct {
			Error       string `json:"error"`
			Interrupted bool   `json:"interrupted"`
		}
		dec := json.NewDecoder(&out)
		if jerr := dec.Decode(&got); jerr != nil || dec.More() || err == nil || got.Error != err.Error() || got.Interrupted != c.interrupted {
			t.Errorf("%s: %v; stdout %q (%v), want one JSON object with the error, interrupted %v", c.name, err, out.String(), jerr, c.interrupted)
		}
	}
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"-addr", refused, "-conns", "0", "-json"}, &out, io.Discard); !errors.Is(err, cli.ErrUsage) || out.Len() > 0 {
		t.Errorf("usage error: %v, stdout %q; want ErrUsage and no JSON", err, out.String())
	}
}

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/tcpperf"
)

func runTcpperf(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tcpperf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg tcpperf.Config
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:9000", "server address")
	fs.IntVar(&cfg.Conns, "conns", 10, "connections")
	fs.Float64Var(&cfg.QPS, "qps", 1000, "messages per second over all connections (open loop); 0 for closed loop")
	fs.IntVar(&cfg.Depth, "depth", 1, "closed loop: messages in flight per connection")
	fs.IntVar(&cfg.MsgSize, "msg-size", 64, "bytes per message, including the final newline")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "measured time")
	fs.DurationVar(&cfg.Warmup, "warmup", time.Second, "load before the measurement, not recorded")
	fs.StringVar(&cfg.Mode, "mode", "echo", "echo (response = request bytes) or line (one response line per request line)")
	fs.IntVar(&cfg.Pacers, "pacers", 1, "open loop: pacer goroutines sharing the schedule")
	fs.DurationVar(&cfg.Spin, "spin", 30*time.Microsecond, "pacers spin this long before each send instead of sleeping")
	fs.DurationVar(&cfg.DrainTimeout, "drain", 2*time.Second, "wait this long for outstanding responses at the end")
	jsonOut := fs.Bool("json", false, "print the result as one JSON object")
	hdrLog := fs.String("hdr-log", "", "write an HdrHistogram interval log (latencies in ns) to this file")
	quiet := fs.Bool("q", false, "no progress lines")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: wirespeed tcpperf -addr HOST:PORT [-conns N] [-qps R | -qps 0 -depth N] [-msg-size B] [-duration D] [-warmup D] [-mode echo|line] [-json] [-hdr-log FILE]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	if *hdrLog != "" {
		f, err := os.Create(*hdrLog)
		if err != nil {
			fmt.Fprintln(stderr, "wirespeed tcpperf:", err)
			return 1
		}
		defer f.Close()
		cfg.HdrLog = f
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	res, err := tcpperf.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "wirespeed", err) // err names tcpperf
		return 1
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(res); err != nil {
			fmt.Fprintln(stderr, "wirespeed tcpperf:", err)
			return 1
		}
	} else {
		printTcpperf(stdout, res)
	}
	if res.Errors > 0 {
		return 1
	}
	return 0
}

func printTcpperf(w io.Writer, r *tcpperf.Result) {
	load := fmt.Sprintf("%.0f msg/s open loop", r.TargetQPS)
	if r.TargetQPS == 0 {
		load = fmt.Sprintf("closed loop, depth %d", r.Depth)
	}
	conns := fmt.Sprint(r.Conns)
	if r.Connected != r.Conns {
		conns = fmt.Sprintf("%d of %d", r.Connected, r.Conns)
	}
	fmt.Fprintf(w, "%s mode, %s conns, %s, %d-byte messages, %.1fs measured\n", r.Mode, conns, load, r.MsgSize, r.DurationS)
	fmt.Fprintf(w, "achieved %.0f msg/s (sent %d, received %d)\n", r.AchievedQPS, r.Sent, r.Received)
	fmt.Fprintf(w, "latency µs   p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  p99.99 %.1f  max %.1f\n", r.P50, r.P90, r.P99, r.P999, r.P9999, r.Max)
	if r.TargetQPS > 0 {
		fmt.Fprintf(w, "send lateness µs (the tool's own floor)   p50 %.1f  p99 %.1f  max %.1f\n", r.LatenessP50, r.LatenessP99, r.LatenessMax)
	}
	fmt.Fprintf(w, "errors %d (connect %d, write %d, read %d, content %d, unanswered %d)\n",
		r.Errors, r.ConnectFailures, r.WriteErrors, r.ReadErrors, r.ContentErrors, r.Unanswered)
	if r.ConnectError != "" {
		fmt.Fprintln(w, "connect:", r.ConnectError)
	}
}

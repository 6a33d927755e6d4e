// Package tcpperfcmd is `wirespeed tcpperf`, the command-line front end of
// package tcpperf.
package tcpperfcmd

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/latplot"
	"github.com/wirespeed/wirespeed/internal/tcpperfenv"
	"github.com/wirespeed/wirespeed/tcpperf"
)

// Summary is the one-line description of the command.
const Summary = "open- or closed-loop TCP latency load generator (HdrHistogram percentiles)"

// busyLimit is the loops' busy share from which Print says the tool, not
// the server, may have set the figures. On a 2-vCPU AMD EPYC (Zen 5) on
// 2026-12-07, 10,000 connections at 60,000 msg/s, loops 87-90% busy sent
// with a lateness p99 of 5 ms, where at 67-69% it was under 1 ms.
const busyLimit = 0.85

// Subcommands are the words that make tcpperf another command: `wirespeed
// help tcpperf merge` asks for the usage of `tcpperf merge`.
func Subcommands() []string { return []string{"merge"} }

// Run runs `wirespeed tcpperf` with the arguments after "tcpperf" until the
// load is done or ctx is cancelled. A run that counted errors returns
// cli.StatusError 1 after printing its result.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return run(ctx, args, stdout, stderr, options{})
}

// options is what the tests give a run besides its arguments; the zero
// value is the command's.
type options struct {
	// env, if its Clock is set, is the run's (see tcpperfenv): the tests
	// run on a fake clock, so that none of them waits for the machine to
	// do something within a span of real time.
	env tcpperfenv.Env
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, opt options) (err error) {
	if len(args) > 0 && args[0] == "merge" {
		return merge(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("tcpperf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg tcpperf.Config
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:9000", "server address: host:port, or unix:PATH (a Unix socket, on -engine netio)")
	fs.IntVar(&cfg.Conns, "conns", 10, "connections")
	fs.Float64Var(&cfg.QPS, "qps", 1000, "messages per second over all connections (open loop); 0 for closed loop")
	fs.IntVar(&cfg.Depth, "depth", 1, "closed loop (-qps 0 only): messages in flight per connection")
	fs.IntVar(&cfg.MsgSize, "msg-size", 64, "bytes per message, including the final newline")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "measured time (in open loop, one send interval, 1/qps, at least)")
	fs.DurationVar(&cfg.Warmup, "warmup", time.Second, "load before the measurement, not recorded")
	fs.StringVar(&cfg.Mode, "mode", "echo", "echo (response = request bytes) or line (one response line per request line)")
	fs.IntVar(&cfg.Loops, "cpus", 1, "event loops, each on its own OS thread with a share of the connections and of the schedule")
	fs.Func("pin", "pin the loops to these CPUs, in turn (e.g. 1 or 2,4-5); default: not pinned", func(s string) error {
		cpus, err := parseCPUList(s)
		cfg.CPUs = cpus
		return err
	})
	fs.DurationVar(&cfg.Spin, "spin", 30*time.Microsecond, "loops poll without sleeping this long before each send (at most 10ms; negative: never)")
	fs.StringVar((*string)(&cfg.Wait), "wait", "", "how loops wait between sends (default: chosen by the load, batch where a loop's share of -qps is over 1/(spin+50µs), about 12,500 msg/s, adaptive otherwise; sleep in closed loop, also for adaptive, send and batch): adaptive (poll Spin before a send and while a response is due), send (poll only before a send), sleep (never poll), spin (always poll), batch (wake when a send is -batch late and send all that are due; responses timed by the kernel)")
	fs.DurationVar(&cfg.Batch, "batch", 0, "-wait batch: how late a send may be before the loop wakes for it and all others due (default 400µs, at most 10ms)")
	fs.StringVar((*string)(&cfg.Arrival), "arrival", "", "how responses are timed: kernel (the kernel's receive timestamp) or read (when the loop read them); default kernel with -wait batch, read otherwise")
	fs.StringVar(&cfg.Engine, "engine", "", "what serves the connections: tcpperf (its own loops, Linux only; the default there) or netio (package netio's loops; -wait sleep or batch only in open loop, responses timed at read; the default with -tls, a unix: address, or off Linux)")
	useTLS := fs.Bool("tls", false, "speak TLS (engine netio, the default with -tls): the handshakes are part of connecting, before the measurement")
	tlsInsecure := fs.Bool("tls-insecure", false, "with -tls, do not verify the server's certificate (e.g. serve -tls's self-signed one)")
	tlsCA := fs.String("tls-ca", "", "with -tls, verify the server's certificate against the certificates in this PEM file instead of the system's")
	tlsName := fs.String("tls-server-name", "", "with -tls, the name the server's certificate must have (default: the host of -addr)")
	fs.DurationVar(&cfg.DrainTimeout, "drain", 2*time.Second, "wait this long for outstanding responses at the end")
	jsonOut := fs.Bool("json", false, "print the result as one JSON object")
	hdrLog := fs.String("hdr-log", "", "write an HdrHistogram interval log (latencies in ns) to this file")
	plot := fs.String("plot", "", "draw the latency percentile spectrum to this SVG file")
	quiet := fs.Bool("q", false, "no progress lines")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wirespeed tcpperf -addr HOST:PORT [-conns N] [-qps R | -qps 0 -depth N] [-cpus N] [-pin CPUS] [-msg-size B] [-duration D] [-warmup D] [-mode echo|line] [-tls [-tls-insecure | -tls-ca FILE]] [-json] [-hdr-log FILE]")
		fmt.Fprintln(fs.Output(), "       wirespeed tcpperf merge [-json] [-plot FILE.svg] FILE...   (merge interval logs of several hosts)")
		fs.PrintDefaults()
	}
	if err := cli.Parse(fs, args, "wirespeed tcpperf", stdout); err != nil {
		return cli.ParseError(err)
	}
	if fs.NArg() > 0 {
		return cli.Usagef("tcpperf: unexpected argument %q (the address is -addr)", fs.Arg(0))
	}
	// With -json, a run past the flags prints one JSON object whatever
	// happens: the result, or an error that leaves none (no connection
	// opened, stopped while connecting, a file that cannot be made).
	printed := false
	if *jsonOut {
		defer func() {
			if !printed {
				err = cli.JSONError(ctx, stdout, err)
			}
		}()
	}
	// Flags whose 0 the package would take for its default: given on the
	// command line, 0 is a mistake.
	switch {
	case cfg.Conns < 1:
		return cli.Usagef("tcpperf: -conns %d: want 1 or more", cfg.Conns)
	case cfg.Depth < 1:
		return cli.Usagef("tcpperf: -depth %d: want 1 or more", cfg.Depth)
	case cfg.Loops < 1:
		return cli.Usagef("tcpperf: -cpus %d: want 1 or more", cfg.Loops)
	case cfg.Duration <= 0:
		return cli.Usagef("tcpperf: -duration %v: want more than 0", cfg.Duration)
	case cfg.Warmup < 0 || cfg.DrainTimeout < 0:
		return cli.Usagef("tcpperf: -warmup and -drain may not be negative")
	case cfg.MsgSize < 1:
		return cli.Usagef("tcpperf: -msg-size %d: want 1 or more", cfg.MsgSize)
	}
	if a := cfg.Addr; !strings.HasPrefix(a, "unix:") {
		if err := cli.CheckHostPort(a); err != nil {
			return cli.Usagef("tcpperf: -addr %q: %v", a, err)
		}
		// No server listens on port 0 (or none): it is a listener's "any".
		// The port as net dials it: "+0" and "-0" are 0 too.
		if _, port, _ := net.SplitHostPort(a); port == "" || lookupPort(port) == 0 {
			return cli.Usagef("tcpperf: -addr %q: port %q: a server's port, 1 to 65535, is needed", a, port)
		}
	}
	// -depth is the closed loop's: with a rate it was ignored, silently.
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	depthSet := set["depth"]
	// -spin 0 and -batch 0 would be the package's defaults, 30µs and
	// 400µs: given, they read as no polling and no window, which they
	// were not.
	switch {
	case set["spin"] && cfg.Spin == 0:
		return cli.Usagef("tcpperf: -spin 0: want more than 0, or negative for no polling before sends")
	case set["batch"] && cfg.Batch == 0:
		return cli.Usagef("tcpperf: -batch 0: want more than 0 (default 400µs)")
	}
	if depthSet && cfg.QPS != 0 {
		return cli.Usagef("tcpperf: -depth %d with -qps %g: -depth is for closed loop (-qps 0); in open loop the rate sets what is in flight", cfg.Depth, cfg.QPS)
	}
	if *useTLS {
		if *tlsInsecure && *tlsCA != "" {
			return cli.Usagef("tcpperf: -tls-insecure and -tls-ca: one or the other")
		}
		if strings.HasPrefix(cfg.Addr, "unix:") && *tlsName == "" && !*tlsInsecure {
			return cli.Usagef("tcpperf: -tls on %s: a Unix socket has no host name for the certificate; give -tls-server-name or -tls-insecure", cfg.Addr)
		}
		tc, err := tlsConfig(*tlsInsecure, *tlsCA, *tlsName)
		if err != nil {
			return err
		}
		cfg.TLS = tc
	} else if *tlsInsecure || *tlsCA != "" || *tlsName != "" {
		return cli.Usagef("tcpperf: -tls-insecure, -tls-ca and -tls-server-name go with -tls")
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	// Refused before -hdr-log and -plot are made, so that a mistake
	// does not empty the files of an earlier run.
	if err := cfg.Check(); err != nil {
		return configUsage(err)
	}
	// A spare processor for the rest of the program (see Config.Loops),
	// for the loops the run has: no more than its connections (a
	// GOMAXPROCS of -cpus 100000 + 1 had the runtime die of thread
	// exhaustion).
	if n := min(cfg.Loops, cfg.Conns) + 1; runtime.GOMAXPROCS(0) < n {
		runtime.GOMAXPROCS(n)
	}
	// The files are opened now, so that a path that cannot be written
	// fails before the run, not after it, but emptied only when the run
	// writes to them: a run that fails to connect leaves an earlier run's
	// files as they were (and makes none).
	var logs []io.Writer
	var hdrFile *logFile
	if *hdrLog != "" {
		f, err := cli.CreateOutput(*hdrLog)
		if err != nil {
			return fmt.Errorf("tcpperf: -hdr-log: %w", err)
		}
		defer f.Close()
		hdrFile = &logFile{f: f}
		logs = append(logs, hdrFile)
	}
	var plotLog bytes.Buffer // the interval log, for -plot
	var plotFile *cli.Output
	if *plot != "" {
		f, err := cli.CreateOutput(*plot)
		if err != nil {
			return fmt.Errorf("tcpperf: -plot: %w", err)
		}
		defer f.Close()
		plotFile = f
		logs = append(logs, &plotLog)
	}
	if hdrFile != nil && plotFile != nil && sameFile(*hdrLog, *plot) {
		// The plot would overwrite the log at the end, exit 0.
		return cli.Usagef("tcpperf: -hdr-log and -plot name the same file, %s", *plot)
	}
	if len(logs) > 0 {
		cfg.HdrLog = io.MultiWriter(logs...)
	}
	if opt.env.Clock != nil {
		ctx = tcpperfenv.With(ctx, opt.env)
	}
	res, err := tcpperf.Run(ctx, cfg)
	switch {
	case errors.Is(err, tcpperf.ErrConfig):
		// What only the run finds, as a -pin CPU the process may not use:
		// a usage error too.
		return configUsage(err)
	case err != nil:
		return err // it names tcpperf
	}
	if *jsonOut {
		printed = true
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return err
		}
	} else if err := Print(stdout, res); err != nil {
		return err
	}
	if plotFile != nil {
		h, err := tcpperf.LogHistogram(&plotLog)
		if err != nil {
			return err
		}
		load := latplot.Rate(cfg.QPS) + " msg/s"
		if cfg.QPS == 0 {
			load = fmt.Sprintf("closed loop, depth %d", cfg.Depth)
		}
		title := fmt.Sprintf("tcpperf %s: %s mode, %d conns, %s", cfg.Addr, cfg.Mode, cfg.Conns, load)
		if err := drawPlot(plotFile, title, []latplot.Curve{{Name: cfg.Addr, Hist: h, Unit: time.Nanosecond}}); err != nil {
			return err
		}
	}
	if hdrFile != nil {
		if err := hdrFile.close(); err != nil {
			return fmt.Errorf("tcpperf: -hdr-log: %w", err) // after the result
		}
	}
	if res.Errors > 0 || res.Interrupted {
		return cli.StatusError{Status: 1}
	}
	return nil
}

// lookupPort is the number net dials for port, which CheckHostPort has
// accepted: 0 for "0", "00", "+0" and "-0" alike.
func lookupPort(port string) int {
	p, _ := net.LookupPort("tcp", port)
	return p
}

// flagOf is the flag of each tcpperf.Config field a ConfigError names.
var flagOf = map[string]string{
	"Addr": "-addr", "Conns": "-conns", "QPS": "-qps", "Depth": "-depth", "MsgSize": "-msg-size",
	"Duration": "-duration", "Warmup": "-warmup", "Mode": "-mode", "Loops": "-cpus", "CPUs": "-pin",
	"Spin": "-spin", "Wait": "-wait", "Batch": "-batch", "Arrival": "-arrival", "DrainTimeout": "-drain",
	"Engine": "-engine", "TLS": "-tls",
}

// configUsage is the usage error of err, a tcpperf.ErrConfig: it names
// the flag of the field at fault ("rate -5 not 0 or ..." named none).
func configUsage(err error) error {
	var ce *tcpperf.ConfigError
	if errors.As(err, &ce) && flagOf[ce.Field] != "" {
		return cli.FlagUsage("tcpperf", "tcpperf", flagOf[ce.Field], err)
	}
	return cli.Usage(err)
}

// sameFile reports whether paths a and b are one regular file (both
// /dev/null are not: nothing is lost there).
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil || !fa.Mode().IsRegular() {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// A logFile is the -hdr-log file: its first write error is kept for the
// end of the run, and fails no other writer of the log (the -plot's).
// The run's own report of a failed HdrLog (tcpperf.ErrHdrLog) would not
// do: the run stops the whole log at the failure, -plot's copy with it.
type logFile struct {
	mu  sync.Mutex
	f   *cli.Output
	err error
}

func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		_, l.err = l.f.Write(p)
	}
	return len(p), nil
}

// close closes the file and returns the first error writing or closing
// it.
func (l *logFile) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return errors.Join(l.err, l.f.Close())
}

// tlsConfig is the client's configuration of -tls.
func tlsConfig(insecure bool, caFile, name string) (*tls.Config, error) {
	cfg := &tls.Config{InsecureSkipVerify: insecure, ServerName: name}
	if caFile != "" {
		pem, err := cli.ReadPEM(caFile)
		if err != nil {
			return nil, fmt.Errorf("tcpperf: -tls-ca: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tcpperf: -tls-ca: no certificate in %s", caFile)
		}
	}
	return cfg, nil
}

// Print writes r for people: the load, the throughput, the percentiles as a
// table and the errors by kind.
func Print(w io.Writer, r *tcpperf.Result) error {
	if r.Logs > 0 {
		return printMerged(w, r)
	}
	load := latplot.Rate(r.TargetQPS) + " msg/s open loop"
	if r.TargetQPS == 0 {
		load = fmt.Sprintf("closed loop, depth %d", r.Depth)
	}
	conns := fmt.Sprint(r.Conns)
	if r.Connected != r.Conns {
		conns = fmt.Sprintf("%d of %d", r.Connected, r.Conns)
	}
	measured := fmt.Sprintf("%.1fs", r.DurationS)
	if r.DurationS > 0 && r.DurationS < 1 {
		// -duration 1ms read "0.0s measured", as if nothing was.
		measured = time.Duration(math.Round(r.DurationS*1e6) * 1e3).String()
	}
	fmt.Fprintf(w, "%s mode, %s conns, %s, %d-byte messages, %s measured\n", r.Mode, conns, load, r.MsgSize, measured)
	if r.SendSpanS > r.DurationS {
		// The rate is over the span the messages went out in, which the
		// line says, lest it read as over the window: a loop behind its
		// schedule sent them late (a little, the last send's lateness,
		// where it kept up).
		fmt.Fprintf(w, "achieved %.0f msg/s over %v, sending %v past the window (sent %d, received %d)\n",
			r.AchievedQPS, seconds(r.SendSpanS), seconds(r.SendSpanS-r.DurationS), r.Sent, r.Received)
	} else {
		fmt.Fprintf(w, "achieved %.0f msg/s (sent %d, received %d)\n", r.AchievedQPS, r.Sent, r.Received)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "µs\tp50\tp90\tp99\tp99.9\tp99.99\tmax\t")
	fmt.Fprintf(tw, "latency\t%s\n", cells(r.Received, r.P50, r.P90, r.P99, r.P999, r.P9999, r.Max))
	if r.TargetQPS > 0 {
		fmt.Fprintf(tw, "send lateness\t%s\n", cells(r.Sent, r.LatenessP50, -1, r.LatenessP99, -1, -1, r.LatenessMax))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.TargetQPS > 0 {
		fmt.Fprintln(w, "(send lateness is the tool's own floor: actual minus intended send time)")
	}
	wait := string(r.Wait)
	if r.BatchUs > 0 {
		// As a duration: "%gµs" wrote 20s as "2e+07µs".
		wait += " " + time.Duration(math.Round(r.BatchUs*1e3)).String()
	}
	switch {
	case r.WaitChosen && r.TargetQPS == 0:
		wait += " (closed loop: for responses)" // no schedule: not the load's choice
	case r.WaitChosen:
		wait += ", chosen by the load"
	}
	loops := fmt.Sprintf("%d loops", r.Loops)
	if r.Engine != "" && r.Engine != tcpperf.EngineTcpperf {
		loops = fmt.Sprintf("%d %s loops", r.Loops, r.Engine)
	}
	if r.TLS {
		loops += " over TLS"
	}
	if r.DurationS == 0 {
		// Stopped before the measurement: no figures, as no percentiles.
		fmt.Fprintf(w, "tool CPU - (nothing measured; %s waiting %s; responses timed at %s)\n", loops, wait, r.Arrival)
	} else {
		busy := fmt.Sprintf("busy %.0f%% of the time", 100*r.LoopBusy)
		if r.Engine == tcpperf.EngineNetio && r.LoopBusy == 0 {
			busy = "busy not measured" // netio's loops do not tell it: not 0%
		}
		perMsg := fmt.Sprintf("%.2f µs/msg", r.CPUPerMsg)
		if r.Sent == 0 && r.CPUPerMsg == 0 {
			perMsg = "- µs/msg" // no message was due: not 0.00 each
		}
		fmt.Fprintf(w, "tool CPU %s (%.0f%% of one core; %s waiting %s, %s; responses timed at %s)\n", perMsg, 100*r.CPUUtil, loops, wait, busy, r.Arrival)
	}
	fmt.Fprintf(w, "errors %d (connect %d, write %d, read %d, content %d, unanswered %d, unsent %d)\n",
		r.Errors, r.ConnectFailures, r.WriteErrors, r.ReadErrors, r.ContentErrors, r.Unanswered, r.Unsent)
	if r.Missed > 0 {
		fmt.Fprintf(w, "missed %d: due before the end, not sent by -drain after it (the tool fell behind the rate)\n", r.Missed)
	}
	if r.DurationS > 0 && r.LoopBusy >= busyLimit {
		// Said outright: a user reads a latency, not the busy figure.
		if r.TargetQPS > 0 {
			fmt.Fprintf(w, "the tool was near its limit (loops busy %.0f%%): its send lateness is in every latency above; more loops (-cpus) on more cores, or a lower -qps, measure the server\n", 100*r.LoopBusy)
		} else {
			fmt.Fprintf(w, "the tool was near its limit (loops busy %.0f%%): the rate may be the tool's, not the server's; more loops (-cpus) on more cores measure the server\n", 100*r.LoopBusy)
		}
	}
	if r.Interrupted {
		fmt.Fprintf(w, "interrupted: stopped before the end, %d in flight not waited for\n", r.Abandoned)
	}
	if r.ConnectError != "" {
		_, err := fmt.Fprintln(w, "connect:", r.ConnectError)
		return err
	}
	return nil
}

// seconds is s seconds as a Duration, to the microsecond from one on.
func seconds(s float64) time.Duration {
	d := time.Duration(math.Round(s * 1e9))
	if d >= time.Microsecond {
		d = d.Round(time.Microsecond)
	}
	return d
}

// printMerged writes the result of merged logs: the span and the
// percentiles, which is all that interval logs hold.
func printMerged(w io.Writer, r *tcpperf.Result) error {
	if r.StartMs == 0 {
		_, err := fmt.Fprintf(w, "%d logs merged, no intervals\n", r.Logs)
		return err
	}
	fmt.Fprintf(w, "%d logs merged, %.3fs from %s\n", r.Logs, r.DurationS, time.UnixMilli(r.StartMs).UTC().Format("2006-01-02T15:04:05.000Z"))
	fmt.Fprintf(w, "achieved %.0f msg/s (received %d)\n", r.AchievedQPS, r.Received)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "µs\tp50\tp90\tp99\tp99.9\tp99.99\tmax\t")
	fmt.Fprintf(tw, "latency\t%s\n", cells(r.Received, r.P50, r.P90, r.P99, r.P999, r.P9999, r.Max))
	return tw.Flush()
}

// cells formats a table row's values, tab-terminated: "-" for one not
// given (negative), and for all of them when they summarise n = 0 values
// (nothing measured is not 0.0 µs).
func cells(n int64, vals ...float64) string {
	var b strings.Builder
	for _, v := range vals {
		if n == 0 || v < 0 {
			b.WriteString("-\t")
		} else {
			fmt.Fprintf(&b, "%.1f\t", v)
		}
	}
	return b.String()
}

// writePlot draws curves to the SVG file path.
func writePlot(path, title string, curves []latplot.Curve) error {
	f, err := cli.CreateOutput(path)
	if err != nil {
		return fmt.Errorf("tcpperf: -plot: %w", err)
	}
	return drawPlot(f, title, curves)
}

// drawPlot draws curves to f, as SVG, and closes f; a plot that cannot
// be drawn (nothing to plot) or written leaves no file of its own behind
// (an earlier one it did not begin to write stays). Its error names the
// flag, as -hdr-log's does (a full disk read "write /dev/full: ...").
func drawPlot(f *cli.Output, title string, curves []latplot.Curve) error {
	if err := latplot.WriteSVG(f, title, curves); err != nil {
		f.Abort()
		return fmt.Errorf("tcpperf: -plot: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("tcpperf: -plot: %w", err)
	}
	return nil
}

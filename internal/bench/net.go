package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/latplot"
	"github.com/wirespeed/wirespeed/internal/serve"
	"github.com/wirespeed/wirespeed/tcpperf"
)

// A netPoint is one load of `wirespeed bench net`.
type netPoint struct {
	Name  string  `json:"name"`
	Mode  string  `json:"mode"`
	Conns int     `json:"conns"`
	QPS   float64 `json:"qps"`   // 0: closed loop
	Depth int     `json:"depth"` // closed loop
}

const defaultNetPoints = "low=echo/10/1000/0,20k=echo/100/20000/0,10k=echo/10000/20000/0,pipelined=line/100/0/16"

func parseNetPoints(s string) ([]netPoint, error) {
	var ps []netPoint
	for _, item := range strings.Split(s, ",") {
		name, spec, ok := strings.Cut(strings.TrimSpace(item), "=")
		f := strings.Split(spec, "/")
		if !ok || name == "" || len(f) != 4 {
			return nil, fmt.Errorf("point %q: want NAME=MODE/CONNS/QPS/DEPTH", item)
		}
		p := netPoint{Name: name, Mode: f[0]}
		// Each field is named with what is wrong with it: all were
		// "bad numbers", even a DEPTH of 0 in closed loop.
		var err1, err2, err3 error
		p.Conns, err1 = strconv.Atoi(f[1])
		p.QPS, err2 = strconv.ParseFloat(f[2], 64)
		p.Depth, err3 = strconv.Atoi(f[3])
		switch {
		case err1 != nil || p.Conns < 1:
			return nil, fmt.Errorf("point %q: CONNS %q: want a whole number, 1 or more", item, f[1])
		case err2 != nil || p.QPS < 0:
			return nil, fmt.Errorf("point %q: QPS %q: want a rate, or 0 for closed loop", item, f[2])
		case err3 != nil:
			return nil, fmt.Errorf("point %q: DEPTH %q: want a whole number", item, f[3])
		case p.QPS == 0 && p.Depth < 1:
			return nil, fmt.Errorf("point %q: DEPTH %d: closed loop (QPS 0) wants 1 or more in flight per connection", item, p.Depth)
		case p.QPS > 0 && p.Depth != 0:
			// It was ignored: the rate sets what is in flight.
			return nil, fmt.Errorf("point %q: DEPTH is for closed loop (QPS 0): want 0 with a QPS", item)
		}
		if p.Mode != "echo" && p.Mode != "line" {
			return nil, fmt.Errorf("point %q: mode must be echo or line", item)
		}
		if slices.ContainsFunc(ps, func(q netPoint) bool { return q.Name == p.Name }) {
			return nil, fmt.Errorf("point %s given twice", p.Name)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// A netRow is one engine at one point.
type netRow struct {
	Point  string          `json:"point"`
	Engine string          `json:"engine"`
	Result *tcpperf.Result `json:"result,omitempty"`
	// The server process's CPU time and peak RSS; nil where not
	// measured (sockperf's row), absent from the JSON as the other
	// unmeasured fields are, where 0 read as measured.
	ServerCPUSec *float64 `json:"server_cpu_s,omitempty"`
	ServerRSSMB  *float64 `json:"server_peak_rss_mb,omitempty"`
	ServerCPUs   string   `json:"server_cpus,omitempty"` // Cpus_allowed_list at start
	ClientCPUs   string   `json:"client_cpus,omitempty"`
	Err          string   `json:"error,omitempty"`

	hist     *hdrhistogram.Histogram // the latencies, for -plot
	sockperf *sockperfResult         // the sockperf row's: its result in the JSON
}

// MarshalJSON writes the row, the sockperf row with the result it
// measured (sockperfResult), not its Result, whose other fields read 0.
func (r netRow) MarshalJSON() ([]byte, error) {
	type row netRow // without this method
	if r.sockperf == nil {
		return json.Marshal(row(r))
	}
	return json.Marshal(struct {
		row
		Result *sockperfResult `json:"result"` // shadows row's
	}{row(r), r.sockperf})
}

// serverCPU is ServerCPUSec, 0 where not measured.
func (r netRow) serverCPU() float64 {
	if r.ServerCPUSec == nil {
		return 0
	}
	return *r.ServerCPUSec
}

// serverRSS is ServerRSSMB, 0 where not measured.
func (r netRow) serverRSS() float64 {
	if r.ServerRSSMB == nil {
		return 0
	}
	return *r.ServerRSSMB
}

type netConfig struct {
	exe              string
	compareExe       string // serves serve.CompareEngines
	engines          []string
	points           []netPoint
	duration, warmup time.Duration
	msgSize          int
	serverCPU        int // -1: no pinning
	clientCPU        int
	sockperf         bool
	plot             string // -plot: SVG files, one per point ("" for none)
	step             string // the point whose rate is stepped up per engine
	stepRuns         int    // runs per rate in the step search (0 means 1)
	logDir           string // where tcpperf's interval logs go, for -plot
	wait             string // tcpperf's -wait ("" for its default)
	batch            time.Duration
}

// RunNet runs `wirespeed bench net` with the arguments after "net": a
// fresh `wirespeed serve` of each engine at each load point, measured by a
// `wirespeed tcpperf` child, both pinned to their own CPU where possible.
func RunNet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return parseAndRun(ctx, parseNet, args, stdout, stderr)
}

// parseNet parses the arguments of `wirespeed bench net` and returns the
// run they ask for.
func parseNet(args []string, stdout, stderr io.Writer) (func(context.Context) error, error) {
	fs := flag.NewFlagSet("bench net", flag.ContinueOnError)
	exe, _ := os.Executable()
	var cfg netConfig
	engines := fs.String("engines", strings.Join(serve.Engines(), ","), "engines to compare")
	points := fs.String("points", defaultNetPoints, "loads: NAME=MODE/CONNS/QPS/DEPTH,... (QPS 0 = closed loop with DEPTH in flight per connection; DEPTH 0 in open loop); \"\" with -overload given: only the overload experiment")
	fs.DurationVar(&cfg.duration, "duration", 5*time.Second, "measured time per run")
	fs.DurationVar(&cfg.warmup, "warmup", time.Second, "warmup per run")
	fs.IntVar(&cfg.msgSize, "msg-size", 64, "message size")
	fs.IntVar(&cfg.serverCPU, "server-cpu", 0, "CPU for the server (-1: no pinning)")
	fs.IntVar(&cfg.clientCPU, "client-cpu", 1, "CPU for tcpperf (-1: no pinning)")
	fs.BoolVar(&cfg.sockperf, "sockperf", true, "also measure sockperf ping-pong --full-rtt at the first point, when sockperf is installed, on Linux, and the point is open loop (where not, the progress says why)")
	fs.StringVar(&cfg.exe, "exe", exe, "wirespeed binary to run as server and client (a path, or a name looked up on PATH; checked before the run)")
	fs.StringVar(&cfg.compareExe, "compare-exe", "", "the comparison module's binary, which serves gnet, evio and netpoll (default: build it from the wirespeed checkout the working directory is in; checked before the run)")
	fs.StringVar(&cfg.plot, "plot", "", "draw each point's latency percentile spectra, one curve per engine, to SVG files, after the results are printed: FILE.svg (or FILE) becomes FILE-POINT.svg; FILE's directory is checked before the run")
	fs.StringVar(&cfg.step, "step", "10k", "the open-loop point whose rate is stepped up (x1.5 a step) for each engine to the highest that keeps p99 under 1 ms (\"\": none)")
	fs.IntVar(&cfg.stepRuns, "step-runs", 1, "runs per rate in the step search: a rate passes when more than half of its runs keep p99 under 1 ms, and the table shows the run with the median p99")
	fs.StringVar(&cfg.wait, "wait", "", "tcpperf's -wait at every point (default: tcpperf's)")
	fs.DurationVar(&cfg.batch, "batch", 0, "tcpperf's -batch, with -wait batch")
	jsonOut := fs.Bool("json", false, "print the rows as JSON")
	overload := fs.Duration("overload", 2*time.Second, "schedule of the overload experiment, per variant (0: skip it)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wirespeed bench net [flags]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return nil, err
	}
	if err := noArgs("net", fs.Args()); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	if *points == "" {
		// An empty list (an unset variable, say) skipped every point
		// silently and ran the overload experiment: running that alone
		// takes an -overload given too.
		if !set["overload"] {
			return nil, cli.Usagef("bench net: -points \"\": no points (to run only the overload experiment, give -overload too)")
		}
		cfg.points = nil
	} else if cfg.points, err = parseNetPoints(*points); err != nil {
		return nil, cli.Usagef("bench net: %v", err)
	}
	for _, e := range strings.Split(*engines, ",") {
		if !slices.Contains(serve.Engines(), e) {
			return nil, cli.Usagef("bench net: unknown engine %q", e)
		}
		if slices.Contains(cfg.engines, e) {
			return nil, cli.Usagef("bench net: engine %s given twice", e)
		}
		cfg.engines = append(cfg.engines, e)
	}
	switch {
	case *overload < 0:
		return nil, cli.Usagef("bench net: -overload %v: want 0 (skip it) or more", *overload)
	case len(cfg.points) == 0 && *overload == 0:
		return nil, cli.Usagef("bench net: no -points and -overload 0: nothing to run")
	}
	if err := cfg.check(set["step"]); err != nil {
		return nil, cli.Usagef("bench net: %v", err)
	}
	if len(cfg.points) > 0 { // else only the overload experiment runs, in this process
		if err := cli.CheckProgram("-exe", cfg.exe); err != nil {
			return nil, cli.Usagef("bench net: %v", err)
		}
		if cfg.compareExe != "" && slices.ContainsFunc(cfg.engines, isCompare) {
			if err := cli.CheckProgram("-compare-exe", cfg.compareExe); err != nil {
				return nil, cli.Usagef("bench net: %v", err)
			}
		}
	}
	return func(ctx context.Context) error { return runNet(ctx, cfg, *jsonOut, *overload, stdout, stderr) }, nil
}

// check refuses, before anything runs, what every tcpperf child would
// refuse, and a -step (if given) that names no open-loop point.
func (cfg *netConfig) check(stepSet bool) error {
	switch {
	case cfg.duration <= 0:
		return fmt.Errorf("-duration %v: want more than 0", cfg.duration)
	case cfg.warmup < 0 || cfg.batch < 0:
		return errors.New("-warmup and -batch: want 0 or more")
	case cfg.msgSize < 1:
		return fmt.Errorf("-msg-size %d: want 1 or more", cfg.msgSize)
	case cfg.stepRuns < 1:
		return fmt.Errorf("-step-runs %d: want 1 or more", cfg.stepRuns)
	}
	if err := checkCPUs(cfg.serverCPU, cfg.clientCPU); err != nil {
		return err
	}
	for _, p := range cfg.points {
		tc := tcpperf.Config{Addr: "127.0.0.1:1", Conns: p.Conns, QPS: p.QPS, Depth: max(p.Depth, 1), Mode: p.Mode,
			MsgSize: cfg.msgSize, Duration: cfg.duration, Warmup: cfg.warmup, Wait: tcpperf.Wait(cfg.wait), Batch: cfg.batch}
		if err := tc.Check(); err != nil {
			return fmt.Errorf("point %s: %w", p.Name, err)
		}
	}
	if stepSet && cfg.step != "" && !slices.ContainsFunc(cfg.points, func(p netPoint) bool { return p.Name == cfg.step && p.QPS > 0 }) {
		return fmt.Errorf("-step %s: no open-loop point of that name", cfg.step)
	}
	return nil
}

// checkCPUs checks the -server-cpu and -client-cpu of bench net and
// bench smtp: each -1 (no pinning) or a CPU this process may run on.
func checkCPUs(server, client int) error {
	if server < -1 || client < -1 {
		// (No upper bound here: CPU numbers need not be below NumCPU, and
		// with one CPU the run drops its pinning; the affinity mask is
		// checked below.)
		return fmt.Errorf("-server-cpu %d, -client-cpu %d: want -1 (no pinning) or a CPU", server, client)
	}
	if runtime.NumCPU() >= 2 && canPin { // else the run pins nothing
		// A CPU the process may not run on failed each run ("std:
		// start server: invalid argument") after the header.
		for _, c := range []struct {
			flag string
			cpu  int
		}{{"-server-cpu", server}, {"-client-cpu", client}} {
			if ok, cpus := cpuAllowed(c.cpu); c.cpu >= 0 && !ok {
				return fmt.Errorf("%s %d: not a CPU this process may run on (%s; -1: no pinning)", c.flag, c.cpu, cpus)
			}
		}
	}
	return nil
}

// runNet runs `wirespeed bench net` as parsed: cfg, and the overload
// experiment's schedule (0: none).
func runNet(ctx context.Context, cfg netConfig, jsonOut bool, overload time.Duration, stdout, stderr io.Writer) error {
	if cfg.plot != "" {
		if err := checkPlotDir(cfg.plot); err != nil {
			return fmt.Errorf("bench net: -plot %s: %w", cfg.plot, err)
		}
	}
	var err error
	if cfg.compareExe == "" && slices.ContainsFunc(cfg.engines, isCompare) {
		dir, err := os.MkdirTemp("", "wirespeed-bench-net")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		fmt.Fprintln(stderr, "wirespeed bench net: building the comparison engines (gnet, evio, netpoll)")
		if cfg.compareExe, err = serve.BuildCompare(ctx, dir); err != nil {
			return fmt.Errorf("bench net: %w; or pass -compare-exe, or leave them out with -engines std,netio,netio-conn", err)
		}
	}
	if runtime.NumCPU() < 2 || !canPin {
		fmt.Fprintln(stderr, "wirespeed bench net: fewer than 2 CPUs or no affinity control: not pinning; server and client share CPUs")
		cfg.serverCPU, cfg.clientCPU = -1, -1
	}
	if cfg.plot != "" {
		if cfg.logDir, err = os.MkdirTemp("", "wirespeed-bench-net"); err != nil {
			return err
		}
		defer os.RemoveAll(cfg.logDir)
	}
	rows := benchNet(ctx, cfg, stderr)
	steps := stepNet(ctx, cfg, rows, stderr)
	var ocfg *overloadConfig
	var orows []overloadRow
	if overload > 0 && ctx.Err() == nil {
		c := defaultOverload(overload)
		ocfg = &c
		for _, v := range overloadVariants() {
			fmt.Fprintf(stderr, "overload: %s\n", v.Name)
			orows = append(orows, runOverload(ctx, c, v))
		}
	}
	return reportNet(stdout, cfg, jsonOut, rows, steps, ocfg, orows)
}

// reportNet prints the results of a run (ocfg nil if the overload
// experiment did not run), as tables or JSON, then draws the -plot files:
// a plot that cannot be written is reported after the results, which are
// not lost with it.
func reportNet(stdout io.Writer, cfg netConfig, jsonOut bool, rows []netRow, steps []netStep, ocfg *overloadConfig, orows []overloadRow) error {
	if jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		out := struct {
			Points   []netRow        `json:"points"`
			Steps    []netStep       `json:"steps,omitempty"`
			Overload *overloadConfig `json:"overload,omitempty"`
			Rows     []overloadRow   `json:"overload_rows,omitempty"`
		}{Points: rows, Steps: steps, Overload: ocfg, Rows: orows}
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		if len(rows) > 0 {
			if err := printNetTable(stdout, cfg, rows); err != nil {
				return err
			}
		}
		if len(steps) > 0 {
			if err := printSteps(stdout, steps); err != nil {
				return err
			}
		}
		if len(orows) > 0 {
			if err := printOverloadTable(stdout, *ocfg, orows); err != nil {
				return err
			}
		}
	}
	if cfg.plot != "" {
		if err := plotNet(cfg, rows); err != nil {
			return fmt.Errorf("bench net: -plot: %w", err)
		}
	}
	for _, r := range rows {
		if r.Err != "" {
			return cli.StatusError{Status: 1} // the table says which
		}
	}
	for _, r := range orows {
		if r.Err != "" {
			return cli.StatusError{Status: 1}
		}
	}
	return nil
}

func benchNet(ctx context.Context, cfg netConfig, progress io.Writer) []netRow {
	var rows []netRow
	for i, p := range cfg.points {
		if i == 0 && cfg.sockperf {
			// Where there is no sockperf row, say why: it was left out
			// in silence.
			path, err := exec.LookPath("sockperf")
			switch {
			case p.QPS == 0:
				fmt.Fprintf(progress, "%s: no sockperf row: the first point is closed loop, and sockperf's ping-pong wants a rate\n", p.Name)
			case err != nil:
				fmt.Fprintf(progress, "%s: no sockperf row: sockperf is not installed (%v)\n", p.Name, err)
			case !canPin:
				fmt.Fprintf(progress, "%s: no sockperf row: finding its server's port needs Linux's /proc\n", p.Name)
			default:
				fmt.Fprintf(progress, "%s: sockperf ping-pong\n", p.Name)
				rows = append(rows, runSockperf(ctx, cfg, p, path))
			}
		}
		for _, e := range cfg.engines {
			if ctx.Err() != nil {
				return rows
			}
			fmt.Fprintf(progress, "%s: %s\n", p.Name, e)
			rows = append(rows, runNetPoint(ctx, cfg, p, e, progress))
		}
	}
	return rows
}

// runNetPoint runs a fresh server of engine e and tcpperf against it.
func runNetPoint(ctx context.Context, cfg netConfig, p netPoint, engine string, stderr io.Writer) netRow {
	row := netRow{Point: p.Name, Engine: engine}
	scfg := serve.Config{Engine: engine, Mode: p.Mode, Addr: "127.0.0.1:0"}
	srv := exec.CommandContext(ctx, cfg.exe, append([]string{"serve"}, serve.Args(scfg)...)...)
	if isCompare(engine) {
		srv = exec.CommandContext(ctx, cfg.compareExe, serve.Args(scfg)...)
	}
	srv.Stderr = stderr
	out, err := srv.StdoutPipe()
	if err != nil {
		row.Err = err.Error()
		return row
	}
	if err := startPinned(srv, cfg.serverCPU); err != nil {
		row.Err = "start server: " + err.Error()
		return row
	}
	row.ServerCPUs = cpusAllowed(srv.Process.Pid)
	defer func() {
		if srv.ProcessState == nil {
			srv.Process.Kill()
			srv.Wait()
		}
	}()
	addr, err := readListening(out)
	if err != nil {
		row.Err = "server: " + err.Error()
		return row
	}
	go io.Copy(io.Discard, out)

	client := exec.CommandContext(ctx, cfg.exe, "tcpperf", "-addr", addr, "-mode", p.Mode,
		"-conns", strconv.Itoa(p.Conns), "-qps", strconv.FormatFloat(p.QPS, 'f', -1, 64),
		"-msg-size", strconv.Itoa(cfg.msgSize),
		"-duration", cfg.duration.String(), "-warmup", cfg.warmup.String(), "-json", "-q")
	if p.QPS == 0 {
		client.Args = append(client.Args, "-depth", strconv.Itoa(p.Depth)) // tcpperf refuses it with a rate
	}
	client.Args = append(client.Args, cfg.waitArgs()...)
	var hlog string
	if cfg.logDir != "" {
		hlog = filepath.Join(cfg.logDir, fmt.Sprintf("%s-%s.hlog", p.Name, engine))
		client.Args = append(client.Args, "-hdr-log", hlog)
	}
	var cliOut, cliErr bytes.Buffer
	client.Stdout, client.Stderr = &cliOut, &cliErr
	if err := startPinned(client, cfg.clientCPU); err != nil {
		row.Err = "start tcpperf: " + err.Error()
		return row
	}
	row.ClientCPUs = cpusAllowed(client.Process.Pid)
	werr := client.Wait() // exit status 1 just means errors, which the JSON reports
	var res tcpperf.Result
	if err := json.Unmarshal(cliOut.Bytes(), &res); err != nil {
		row.Err = "tcpperf: " + noResult(ctx, cliErr.String(), werr)
		return row
	}
	if res.Interrupted {
		// A signal stopped it (^C reaches the whole process group):
		// what it measured is part of a run, not the point's.
		row.Err = "tcpperf: interrupted"
		return row
	}
	cpu, rss, err := stopMeasured(srv)
	if err != nil {
		// A server that failed (it exited with an error, or ignored
		// SIGTERM and was killed 10 s later, its CPU time counting
		// the wait) makes no measurement: the row showed tcpperf's
		// figures and the server's beside the error.
		row.Err = "server exit: " + err.Error()
		return row
	}
	row.Result = &res
	if hlog != "" {
		if f, err := os.Open(hlog); err == nil {
			row.hist, _ = tcpperf.LogHistogram(f) // a bad log leaves the curve out
			f.Close()
		}
	}
	secs := cpu.Seconds()
	row.ServerCPUSec, row.ServerRSSMB = &secs, &rss
	return row
}

// noResult says why tcpperf gave no result: what it said, or else that
// the run was interrupted (its child killed), or else how it ended.
func noResult(ctx context.Context, stderr string, werr error) string {
	switch {
	case strings.TrimSpace(stderr) != "":
		return strings.TrimSpace(stderr)
	case ctx.Err() != nil:
		return "interrupted"
	case werr != nil:
		return werr.Error() + ", without a result"
	}
	return "no result"
}

// isCompare says whether the comparison module's binary serves engine.
func isCompare(engine string) bool { return slices.Contains(serve.CompareEngines(), engine) }

// stopMeasured stops srv as stopServer does, and returns its CPU time
// and peak RSS in MB: read from the running process where the system
// tells it (peakRSS), else from its rusage, which on Linux also counts
// the memory of this process when it forked the server (the peak is
// carried over exec).
func stopMeasured(srv *exec.Cmd) (cpu time.Duration, rssMB float64, err error) {
	peak, ok := peakRSS(srv.Process.Pid)
	err = stopServer(srv)
	cpu, rssMB = serverUsage(srv)
	if ok {
		rssMB = peak
	}
	return cpu, rssMB, err
}

// errNoStop reports a server that did not stop on SIGTERM.
var errNoStop = errors.New("did not stop on SIGTERM")

// stopServer stops srv with SIGTERM, or after 10 s with SIGKILL (then it
// returns errNoStop), and waits for it.
func stopServer(srv *exec.Cmd) error {
	srv.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		srv.Process.Kill()
		<-done
		return errNoStop
	}
}

// serverUsage is the CPU time (user and system) and peak RSS in MB of the
// ended process srv.
func serverUsage(srv *exec.Cmd) (cpu time.Duration, rssMB float64) {
	cpu = srv.ProcessState.UserTime() + srv.ProcessState.SystemTime()
	if maxRSS, _, ok := rusage(srv.ProcessState); ok {
		rssMB = float64(maxRSS) / 1024
	}
	return cpu, rssMB
}

// readListening reads the server's first line, "listening on ADDR".
func readListening(r io.Reader) (string, error) {
	line, err := readLine(r, func(line string) bool { return true })
	if err != nil {
		return "", err
	}
	addr, ok := strings.CutPrefix(line, "listening on ")
	if !ok {
		return "", fmt.Errorf("unexpected first line %q", line)
	}
	return addr, nil
}

// readLine returns the first line of r (trimmed) for which match is true,
// within 20s; a child that says nothing so long is stuck.
func readLine(r io.Reader, match func(line string) bool) (string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); match(line) {
				ch <- result{line: line}
				return
			}
		}
		err := sc.Err()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		ch <- result{err: err}
	}()
	select {
	case res := <-ch:
		return res.line, res.err
	case <-time.After(20 * time.Second):
		return "", errors.New("not ready within 20s")
	}
}

// cpusAllowed returns the Cpus_allowed_list of a process ("" if unknown).
func cpusAllowed(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	m := regexp.MustCompile(`(?m)^Cpus_allowed_list:\s*(\S+)`).FindSubmatch(b)
	if m == nil {
		return ""
	}
	return string(m[1])
}

var sockperfPct = regexp.MustCompile(`percentile (\d+\.\d+) =\s+([\d.]+)|<MAX> observation =\s+([\d.]+)`)

// sockperfReady is in the line sockperf's server prints once it waits on
// its sockets ("sockperf: [tid N] using recvfrom() to block on socket(s)").
const sockperfReady = "to block on socket"

// sockperfInterrupted is in what sockperf's client prints when a signal
// stopped it ("sockperf: Test end (interrupted by user)").
const sockperfInterrupted = "interrupted by user"

// runSockperf measures the kernel's TCP ping-pong round trip with sockperf,
// server and client pinned like the engines. The server binds port 0 (and
// prints 0 as its port), so its port is read from /proc once it says it is
// ready.
func runSockperf(ctx context.Context, cfg netConfig, p netPoint, path string) netRow {
	row := netRow{Point: p.Name, Engine: "sockperf"}
	srv := exec.CommandContext(ctx, path, "server", "--tcp", "-i", "127.0.0.1", "-p", "0")
	srvOut, err := srv.StdoutPipe()
	if err != nil {
		row.Err = err.Error()
		return row
	}
	srv.Stderr = srv.Stdout
	if err := startPinned(srv, cfg.serverCPU); err != nil {
		row.Err = err.Error()
		return row
	}
	row.ServerCPUs = cpusAllowed(srv.Process.Pid)
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	if _, err := readLine(srvOut, func(line string) bool { return strings.Contains(line, sockperfReady) }); err != nil {
		row.Err = "sockperf server: " + err.Error()
		return row
	}
	go io.Copy(io.Discard, srvOut)
	ports, err := listeningPorts(srv.Process.Pid)
	if err == nil && len(ports) != 1 {
		err = fmt.Errorf("listening on ports %v, want one", ports)
	}
	if err != nil {
		row.Err = "sockperf server: " + err.Error()
		return row
	}
	port := strconv.Itoa(ports[0])
	secs := int((cfg.duration + cfg.warmup + time.Second - 1) / time.Second)
	client := exec.CommandContext(ctx, path, "ping-pong", "--tcp", "-i", "127.0.0.1", "-p", port, "--full-rtt",
		"-m", strconv.Itoa(cfg.msgSize), "--mps", strconv.FormatFloat(p.QPS, 'f', 0, 64), "-t", strconv.Itoa(secs))
	var out bytes.Buffer
	client.Stdout, client.Stderr = &out, &out
	if err := startPinned(client, cfg.clientCPU); err != nil {
		row.Err = err.Error()
		return row
	}
	row.ClientCPUs = cpusAllowed(client.Process.Pid)
	err = client.Wait()
	if ctx.Err() != nil || strings.Contains(out.String(), sockperfInterrupted) {
		// Killed, or stopped by a signal of its own (^C reaches the
		// whole process group), when it prints its statistics so far
		// and exits 0: part of a run.
		row.Err = "sockperf: interrupted"
		return row
	}
	if err != nil {
		row.Err = "sockperf: " + err.Error()
		return row
	}
	measured, ok := sockperfRow(p, cfg.msgSize, out.String())
	if !ok {
		row.Err = "sockperf: no percentiles in its output"
		return row
	}
	row.Result, row.sockperf = measured.Result, measured.sockperf
	return row
}

// sockperfRow is the row of point p whose sockperf ping-pong with
// msgSize-byte messages printed out, and whether out has its percentiles.
func sockperfRow(p netPoint, msgSize int, out string) (netRow, bool) {
	sp := &sockperfResult{Mode: "ping-pong", Conns: 1, TargetQPS: p.QPS, MsgSize: msgSize}
	if !parseSockperf(out, sp) {
		return netRow{}, false
	}
	return netRow{Point: p.Name, Engine: "sockperf", Result: sp.result(), sockperf: sp}, true
}

// A sockperfResult is what the sockperf row measured: the percentiles
// sockperf ping-pong printed (nil where it printed none), under the
// names of tcpperf.Result's, with the load it was given. It is the row's
// result in -json, in place of a tcpperf.Result, whose other fields
// (counts, rates, errors, the tool's CPU and lateness) the row does not
// measure and would read 0, as if measured.
type sockperfResult struct {
	Mode      string   `json:"mode"` // "ping-pong"
	Conns     int      `json:"conns"`
	TargetQPS float64  `json:"target_qps"`
	MsgSize   int      `json:"msg_size"`
	P50       *float64 `json:"p50_us,omitempty"`
	P90       *float64 `json:"p90_us,omitempty"`
	P99       *float64 `json:"p99_us,omitempty"`
	P999      *float64 `json:"p999_us,omitempty"`
	P9999     *float64 `json:"p9999_us,omitempty"`
	Max       *float64 `json:"max_us,omitempty"`
}

// result is sp as a tcpperf.Result, for the code that reads rows (0
// where sockperf printed nothing).
func (sp *sockperfResult) result() *tcpperf.Result {
	v := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	return &tcpperf.Result{Mode: sp.Mode, Conns: sp.Conns, Connected: sp.Conns, TargetQPS: sp.TargetQPS, MsgSize: sp.MsgSize,
		P50: v(sp.P50), P90: v(sp.P90), P99: v(sp.P99), P999: v(sp.P999), P9999: v(sp.P9999), Max: v(sp.Max)}
}

// parseSockperf fills sp's percentiles from the output of sockperf
// ping-pong and reports whether it found the median.
func parseSockperf(out string, sp *sockperfResult) bool {
	for _, m := range sockperfPct.FindAllStringSubmatch(out, -1) {
		s := m[2]
		if m[3] != "" {
			s = m[3]
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			continue
		}
		switch {
		case m[3] != "":
			sp.Max = &v
		case m[1] == "50.000":
			sp.P50 = &v
		case m[1] == "90.000":
			sp.P90 = &v
		case m[1] == "99.000":
			sp.P99 = &v
		case m[1] == "99.900":
			sp.P999 = &v
		case m[1] == "99.990":
			sp.P9999 = &v
		}
	}
	return sp.P50 != nil && *sp.P50 > 0
}

// waitArgs are tcpperf's arguments for -wait and -batch.
func (cfg *netConfig) waitArgs() []string {
	var args []string
	if cfg.wait != "" {
		args = append(args, "-wait", cfg.wait)
	}
	if cfg.batch != 0 {
		args = append(args, "-batch", cfg.batch.String())
	}
	return args
}

// pinning says, for a table's header, where the server and the client of
// a run were pinned (a CPU below 0: not pinned). With one side pinned the
// header read "not pinned", or "tcpperf on CPU -1".
func pinning(server string, serverCPU int, client string, clientCPU int) string {
	on := func(name string, cpu int) string {
		if cpu < 0 {
			return name + " not pinned"
		}
		return fmt.Sprintf("%s on CPU %d", name, cpu)
	}
	if serverCPU < 0 && clientCPU < 0 {
		return "not pinned"
	}
	return on(server, serverCPU) + ", " + on(client, clientCPU)
}

// printNetTable writes one table per load point.
func printNetTable(w io.Writer, cfg netConfig, rows []netRow) error {
	pin := pinning("server", cfg.serverCPU, "tcpperf", cfg.clientCPU)
	fmt.Fprintf(w, "%d-byte messages, %v measured after %v warmup per run, %s\n", cfg.msgSize, cfg.duration, cfg.warmup, pin)
	fmt.Fprintln(w, "late p50/p99: tcpperf's own send lateness, µs (part of the latencies, which count from each message's intended send time); tool µs/msg: its CPU per message")
	for _, p := range cfg.points {
		load := "open loop " + strconv.FormatFloat(p.QPS, 'f', -1, 64) + " msg/s" // 200, 0.001
		if p.QPS == 0 {
			load = fmt.Sprintf("closed loop, depth %d", p.Depth)
		}
		fmt.Fprintf(w, "\n%s: %s mode, %d conns, %s\n", p.Name, p.Mode, p.Conns, load)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "engine\tp50 µs\tp99 µs\tp99.99 µs\tmsg/s\tsrv CPU s\tCPU µs/msg\tsrv RSS MB\tKiB/conn\terrors\tlate p50\tlate p99\ttool µs/msg\ttool wait")
		var failed []netRow
		for _, r := range rows {
			if r.Point != p.Name {
				continue
			}
			if r.Result == nil || r.Err != "" { // a failed run: no figures
				failed = append(failed, r)
				continue
			}
			res := r.Result
			rate, cpu, rss, errs, late := latplot.Rate(res.AchievedQPS), fmt.Sprintf("%.2f", r.serverCPU()), fmt.Sprintf("%.1f", r.serverRSS()), strconv.FormatInt(res.Errors, 10), fmt.Sprintf("%.1f", res.LatenessP50)
			late99, wait := fmt.Sprintf("%.1f", res.LatenessP99), string(res.Wait)
			if res.BatchUs > 0 {
				wait += fmt.Sprintf(" %gµs", res.BatchUs)
			}
			// Over the connections tcpperf opened: some of the point's
			// may have failed (a descriptor limit), holding no memory.
			perConn, tool := "-", fmt.Sprintf("%.2f", res.CPUPerMsg)
			if res.Connected > 0 {
				perConn = fmt.Sprintf("%.1f", r.serverRSS()*1024/float64(res.Connected))
			}
			perMsg := "-"
			if res.SentAll > 0 {
				// warmup included, like the CPU time
				perMsg = fmt.Sprintf("%.2f", r.serverCPU()*1e6/float64(res.SentAll))
			}
			us := func(v float64) string { return fmt.Sprintf("%.1f", v) }
			// Percentiles of nothing are no latency, not 0.0 µs (as
			// tcpperf prints them, and leaves them out of its JSON):
			// of no response received, no message sent, no measurement.
			p50, p99, p9999 := "-", "-", "-"
			if res.Received > 0 {
				p50, p99, p9999 = us(res.P50), us(res.P99), us(res.P9999)
			}
			if res.Sent == 0 {
				late, late99 = "-", "-"
			}
			if res.DurationS == 0 {
				rate, tool = "-", "-"
			}
			if sp := r.sockperf; sp != nil {
				// Only sockperf's percentiles are measured, those it
				// printed.
				rate, cpu, perMsg, rss, perConn, errs, late, late99, tool, wait = "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"
				pct := func(v *float64) string {
					if v == nil {
						return "-"
					}
					return us(*v)
				}
				p50, p99, p9999 = pct(sp.P50), pct(sp.P99), pct(sp.P9999)
			}
			if p.QPS == 0 {
				late, late99 = "-", "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Engine, p50, p99, p9999, rate, cpu, perMsg, rss, perConn, errs, late, late99, tool, wait)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, r := range failed {
			if _, err := fmt.Fprintf(w, "%s: %s\n", r.Engine, r.Err); err != nil {
				return err
			}
		}
	}
	return nil
}

// A netStep is the rate search of one engine at the -step point: the
// highest rate (x1.5 a step from the point's) at which p99 stayed under
// stepP99 in more than half of the rate's runs.
type netStep struct {
	Point  string   `json:"point"`
	Engine string   `json:"engine"`
	Best   float64  `json:"best_msg_per_s"` // 0: not even the point's rate
	Runs   int      `json:"runs_per_rate"`
	Rows   []netRow `json:"runs"` // from the point's rate up, Runs a rate
}

const (
	stepP99    = 1000.0 // µs
	stepFactor = 1.5
	maxSteps   = 6
)

// stepNet runs the rate search at cfg.step for each engine, from the
// point's own run in rows: up by stepFactor while p99 stays under stepP99,
// the rate is reached and nothing fails.
func stepNet(ctx context.Context, cfg netConfig, rows []netRow, progress io.Writer) []netStep {
	var p *netPoint
	for i := range cfg.points {
		if cfg.points[i].Name == cfg.step && cfg.points[i].QPS > 0 {
			p = &cfg.points[i]
		}
	}
	if p == nil {
		return nil
	}
	runs := max(cfg.stepRuns, 1)
	var steps []netStep
	for _, e := range cfg.engines {
		st := netStep{Point: p.Name, Engine: e, Runs: runs}
		for _, r := range rows {
			if r.Point == p.Name && r.Engine == e {
				st.Rows = append(st.Rows, r)
			}
		}
		if len(st.Rows) == 0 {
			steps = append(steps, st)
			continue
		}
		qps := p.QPS
		more := func(k int) { // k more runs at qps
			for range k {
				if ctx.Err() != nil {
					return
				}
				q := *p
				q.QPS = qps
				q.Name = p.Name + "@" + latplot.Rate(qps)
				fmt.Fprintf(progress, "%s: %s\n", q.Name, e)
				st.Rows = append(st.Rows, runNetPoint(ctx, cfg, q, e, progress))
			}
		}
		more(runs - len(st.Rows))
		for k := 0; k <= maxSteps && ctx.Err() == nil; k++ {
			if !ratePasses(st.Rows[max(len(st.Rows)-runs, 0):], qps) {
				break
			}
			st.Best = qps
			if k == maxSteps {
				break
			}
			qps *= stepFactor
			more(runs)
		}
		steps = append(steps, st)
	}
	return steps
}

// ratePasses reports whether more than half of rs, the runs at qps,
// kept p99 under stepP99 with the rate reached and no errors.
func ratePasses(rs []netRow, qps float64) bool {
	n := 0
	for _, r := range rs {
		if r.Err == "" && r.Result != nil && r.Result.Errors == 0 && r.Result.P99 < stepP99 && r.Result.AchievedQPS >= 0.95*qps {
			n++
		}
	}
	return 2*n > len(rs)
}

// medianRun is the run at qps with the median p99 (the lower of the two
// middle ones), or nil if none was measured (received a response).
func medianRun(rs []netRow, qps float64) *netRow {
	var at []*netRow
	for i := range rs {
		// A run that received nothing has no p99 (not 0 µs).
		if r := &rs[i]; r.Result != nil && r.Result.TargetQPS == qps && r.Result.Received > 0 {
			at = append(at, r)
		}
	}
	if len(at) == 0 {
		return nil
	}
	slices.SortFunc(at, func(a, b *netRow) int { return cmp.Compare(a.Result.P99, b.Result.P99) })
	return at[(len(at)-1)/2]
}

func printSteps(w io.Writer, steps []netStep) error {
	fmt.Fprintf(w, "\n%s: the highest open-loop rate (x%.1f a step) with p99 under %.0f µs", steps[0].Point, stepFactor, stepP99)
	if n := steps[0].Runs; n > 1 {
		fmt.Fprintf(w, " in more than half of %d runs a rate (the run with the median p99 shown)", n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "engine\tmsg/s\tp99 µs at it\tCPU µs/msg at it\tp99 µs one step up")
	for _, st := range steps {
		best, p99, cpu, next := "-", "-", "-", "-"
		if r := medianRun(st.Rows, st.Best); r != nil && st.Best > 0 {
			best, p99 = latplot.Rate(st.Best), fmt.Sprintf("%.1f", r.Result.P99)
			if r.Result.SentAll > 0 {
				cpu = fmt.Sprintf("%.2f", r.serverCPU()*1e6/float64(r.Result.SentAll))
			}
		}
		if r := medianRun(st.Rows, st.Best*stepFactor); r != nil && st.Best > 0 {
			next = fmt.Sprintf("%.1f", r.Result.P99)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", st.Engine, best, p99, cpu, next)
	}
	return tw.Flush()
}

// plotNet draws each point's latency spectra, one curve per engine, and
// returns the errors of the files it could not write, which it leaves out.
func plotNet(cfg netConfig, rows []netRow) error {
	var errs []error
	for _, p := range cfg.points {
		var curves []latplot.Curve
		for _, r := range rows {
			if r.Point == p.Name && r.hist != nil && r.hist.TotalCount() > 0 {
				curves = append(curves, latplot.Curve{Name: r.Engine, Hist: r.hist, Unit: time.Nanosecond})
			}
		}
		if len(curves) == 0 {
			continue
		}
		load := latplot.Rate(p.QPS) + " msg/s"
		if p.QPS == 0 {
			load = fmt.Sprintf("closed loop, depth %d", p.Depth)
		}
		title := fmt.Sprintf("%s: %s, %d conns, %s, %d-byte messages", p.Name, p.Mode, p.Conns, load, cfg.msgSize)
		f, err := os.Create(plotPath(cfg.plot, p.Name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		err = latplot.WriteSVG(f, title, curves)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
			errs = append(errs, fmt.Errorf("%s: %w", f.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// plotPath is the SVG file of a point: FILE.svg, or FILE with no .svg,
// becomes FILE-POINT.svg.
func plotPath(plot, point string) string {
	return strings.TrimSuffix(plot, ".svg") + "-" + point + ".svg"
}

// checkPlotDir checks, before a run, that the directory of the -plot
// files exists and takes new files, so that a run is not made for plots
// that cannot be written.
func checkPlotDir(plot string) error {
	dir := filepath.Dir(plot)
	f, err := os.CreateTemp(dir, ".wirespeed-plot-*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // not the probe's name
		}
		return fmt.Errorf("cannot write in directory %s: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

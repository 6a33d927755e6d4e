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
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/smtpsource"
)

// The sinks and sources `wirespeed bench smtp` knows.
const (
	engWirespeed  = "wirespeed"            // wirespeed smtp-sink, or wirespeed smtp-source
	engPipelining = "wirespeed-pipelining" // wirespeed smtp-source -pipelining
	engPostfix    = "postfix"              // Postfix's smtp-sink or smtp-source
	engTLS        = "wirespeed-tls"        // wirespeed smtp-sink -tls, or smtp-source -tls (each only with the other)
	engGoroutine  = "wirespeed-goroutine"  // wirespeed smtp-sink -engine goroutine (the default, wirespeed, is loops on Linux)
)

// An smtpSize is one message size of the suite.
type smtpSize struct {
	Name     string
	Length   int // -l
	Messages int // -m, per run
}

type smtpConfig struct {
	exe              string
	pfSink, pfSource string // paths; "" where not installed or not wanted
	sinks, sources   []string
	sizes            []smtpSize
	sessions         int
	count            int           // runs of each row
	latMessages      int           // messages of each latency-honesty run
	delay            time.Duration // the sink's wait before its end-of-data reply in the honesty row
	serverCPU        int           // -1: no pinning
	clientCPU        int
	now              func() time.Time // reads a source run's start and end; nil: time.Now (tests give a clock)
}

// An smtpRow is one source driving one sink at one size: the median of its
// runs by messages/s.
type smtpRow struct {
	Size     string `json:"size"`
	Length   int    `json:"length"`
	Sink     string `json:"sink"`
	Source   string `json:"source"`
	Sessions int    `json:"sessions"`
	Messages int    `json:"messages"` // per run, asked for (-m)
	// Runs is the runs measured, of which the row is the median;
	// FailedRuns those that failed (Err names the first), left out. A
	// row with no run measured has no figures: in -json its fields up
	// to Runs, FailedRuns and Err only (MarshalJSON).
	Runs       int `json:"runs"`
	FailedRuns int `json:"failed_runs"`
	// Delivered is the messages the median run delivered: Messages,
	// unless wirespeed's source counted errors (Errors, Err).
	Delivered int64 `json:"delivered"`
	// MsgPerS is the messages delivered over the source process's wall
	// time, from its start to its exit (the same for every source);
	// MBPerS is MsgPerS times the body length, in 10^6 bytes. The rows'
	// runs are ordered by it; the CPU figures and waits are per message
	// delivered too.
	MsgPerS float64 `json:"messages_per_s"`
	MBPerS  float64 `json:"mb_per_s"`
	// Latency is the whole message's, from wirespeed's source (nil for
	// Postfix's, which does not measure it); Dot its end-of-data phase.
	Latency *smtpsource.Latency `json:"latency,omitempty"`
	Dot     *smtpsource.Latency `json:"dot_latency,omitempty"`
	// The sink process's CPU time (user and system) per message sent, and
	// its peak RSS.
	ServerCPUPerMsgUS float64 `json:"server_cpu_us_per_msg"`
	ServerRSSMB       float64 `json:"server_peak_rss_mb"`
	// The source process's CPU time per message sent, and how often per
	// message it gave up the CPU to wait (voluntary context switches from
	// its rusage; 0 where the system does not report them): a source at
	// the end of its CPU is the limit of its row, whatever the sink.
	SourceCPUPerMsgUS float64 `json:"source_cpu_us_per_msg"`
	SourceWaitsPerMsg float64 `json:"source_waits_per_msg"`
	ServerCPUs        string  `json:"server_cpus,omitempty"` // Cpus_allowed_list at start
	ClientCPUs        string  `json:"client_cpus,omitempty"`
	// SinkEngine is the engine wirespeed's sink ran, as its summary says
	// (the wirespeed sink runs the system's default: loops on Linux,
	// goroutine elsewhere); absent for Postfix's sink, or a sink that
	// does not say.
	SinkEngine string `json:"sink_engine,omitempty"`
	Errors     int64  `json:"errors"` // counted by wirespeed's source, over the runs measured
	Err        string `json:"error,omitempty"`
}

// MarshalJSON writes the row, one with no run measured without its
// figures: its rates, costs and counts read 0 beside its error, as if
// measured.
func (r smtpRow) MarshalJSON() ([]byte, error) {
	type row smtpRow // without this method
	if r.Runs > 0 {
		return json.Marshal(row(r))
	}
	return failedJSON(r, "size", "length", "sink", "source", "sessions", "messages", "runs", "failed_runs", "error")
}

// smtpRun is one run of a row.
type smtpRun struct {
	wall       time.Duration
	res        *smtpsource.Result // wirespeed's source only
	serverCPU  time.Duration
	serverRSS  float64 // MB
	sourceCPU  time.Duration
	sourceCS   int64 // voluntary context switches
	srvCPUs    string
	cliCPUs    string
	delivered  int64  // as the source counted them (Postfix's: all, or it failed)
	sinkMsgs   int64  // as the sink counted them (wirespeed's sink; -1 unknown)
	sinkEngine string // as wirespeed's sink reported it
	sourceFail string
}

// smtpHonesty is the latency-honesty check: wirespeed's source against
// wirespeed's sink with and without a wait before the end-of-data reply.
type smtpHonesty struct {
	DelayUS   float64 `json:"delay_us"`
	Sessions  int     `json:"sessions"`
	Messages  int     `json:"messages"`
	P50Plain  float64 `json:"dot_p50_us"`
	P50Delay  float64 `json:"dot_p50_delayed_us"`
	DiffUS    float64 `json:"difference_us"`
	DiffRatio float64 `json:"difference_over_delay"` // 1.0 is exact
	Err       string  `json:"error,omitempty"`
}

// MarshalJSON writes the check, a failed one (Err) without its figures:
// they read 0 beside its error (or, the wait's run failing, the plain
// run's p50 alone), as if measured.
func (h smtpHonesty) MarshalJSON() ([]byte, error) {
	type honesty smtpHonesty // without this method
	if h.Err == "" {
		return json.Marshal(honesty(h))
	}
	return failedJSON(h, "delay_us", "sessions", "messages", "error")
}

// An smtpBar is one of issue 11's ratios, from the rows.
type smtpBar struct {
	Name  string  `json:"name"`
	Ratio float64 `json:"ratio"` // 0: rows missing
	Bar   string  `json:"bar"`
}

// postfixTool returns the path of Postfix's tool name, on PATH or in
// /usr/sbin (where Debian keeps it), or "".
func postfixTool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p, err := exec.LookPath("/usr/sbin/" + name); err == nil {
		return p
	}
	return ""
}

// RunSMTP runs `wirespeed bench smtp` with the arguments after "smtp".
func RunSMTP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return parseAndRun(ctx, parseSMTP, args, stdout, stderr)
}

// parseSMTP parses the arguments of `wirespeed bench smtp` and returns the
// run they ask for.
func parseSMTP(args []string, stdout, stderr io.Writer) (func(context.Context) error, error) {
	fs := flag.NewFlagSet("bench smtp", flag.ContinueOnError)
	exe, _ := os.Executable()
	var cfg smtpConfig
	sinks := fs.String("sinks", engWirespeed+","+engGoroutine+","+engPostfix+","+engTLS, "sinks to drive: wirespeed (its default engine: loops on Linux), wirespeed-goroutine (-engine goroutine), postfix (Postfix's smtp-sink, where installed), wirespeed-tls (-tls, a self-signed certificate; driven only by the wirespeed-tls source)")
	sources := fs.String("sources", engWirespeed+","+engPipelining+","+engPostfix+","+engTLS, "sources: wirespeed, wirespeed-pipelining (-pipelining), postfix (Postfix's smtp-source, where installed), wirespeed-tls (-tls -tls-insecure, into the wirespeed-tls sink only)")
	postfix := fs.Bool("postfix", true, "use Postfix's smtp-sink and smtp-source where installed (PATH or /usr/sbin)")
	fs.IntVar(&cfg.sessions, "s", 10, "sessions in parallel (smtp-source -s), reusing connections (-d)")
	m4k := fs.Int("m4k", 20000, "messages per run with 4 KiB bodies (0: skip the size)")
	m1m := fs.Int("m1m", 300, "messages per run with 1 MiB bodies (0: skip the size)")
	fs.IntVar(&cfg.count, "count", 1, "runs of each row, alternating rows; the table shows each row's median run")
	fs.IntVar(&cfg.latMessages, "lat-m", 2000, "messages of each latency-honesty run (one session, 4 KiB, closed loop; 0: skip)")
	fs.DurationVar(&cfg.delay, "delay", time.Millisecond, "the sink's wait before its end-of-data reply in the latency-honesty run")
	fs.IntVar(&cfg.serverCPU, "server-cpu", 0, "CPU for the sink (-1: no pinning)")
	fs.IntVar(&cfg.clientCPU, "client-cpu", 1, "CPU for the source (-1: no pinning)")
	fs.StringVar(&cfg.exe, "exe", exe, "wirespeed binary to run as sink and source (a path, or a name looked up on PATH; checked before the run)")
	tlsCeil := fs.Bool("tls-ceiling", true, "with the 1 MiB rows of wirespeed's plain and TLS pairs: measure the same bytes with no SMTP, plain and over crypto/tls (bench tlspipe), the TLS bar's ceiling")
	quick := fs.Bool("quick", false, "short runs (-m4k 200 -m1m 4 -lat-m 50 -count 1 unless given): a smoke test, not a measurement")
	jsonOut := fs.Bool("json", false, "print the rows as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wirespeed bench smtp [flags]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return nil, err
	}
	if err := noArgs("smtp", fs.Args()); err != nil {
		return nil, err
	}
	if *quick { // for the flags not given
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, v := range map[string]*int{"m4k": m4k, "m1m": m1m, "lat-m": &cfg.latMessages, "count": &cfg.count} {
			if !set[name] {
				*v = map[string]int{"m4k": 200, "m1m": 4, "lat-m": 50, "count": 1}[name]
			}
		}
	}
	if cfg.sessions < 1 || cfg.count < 1 || *m4k < 0 || *m1m < 0 || cfg.latMessages < 0 || cfg.delay <= 0 {
		return nil, cli.Usagef("bench smtp: -s and -count must be positive, -m4k, -m1m and -lat-m not negative, -delay positive")
	}
	if *m4k == 0 && *m1m == 0 && cfg.latMessages == 0 {
		return nil, cli.Usagef("bench smtp: -m4k 0, -m1m 0 and -lat-m 0: nothing to run")
	}
	// A CPU the process may not run on failed every run ("start
	// wirespeed smtp-sink: invalid argument") after the header; -2 ran
	// unpinned, the header saying "source on CPU -2".
	if err := checkCPUs(cfg.serverCPU, cfg.clientCPU); err != nil {
		return nil, cli.Usagef("bench smtp: %v", err)
	}
	if *m4k > 0 {
		cfg.sizes = append(cfg.sizes, smtpSize{"4KiB", 4096, *m4k})
	}
	if *m1m > 0 {
		cfg.sizes = append(cfg.sizes, smtpSize{"1MiB", 1 << 20, *m1m})
	}
	o := smtpOptions{sinks: *sinks, sources: *sources, postfix: *postfix, m1m: *m1m, tlsCeiling: *tlsCeil, json: *jsonOut}
	return func(ctx context.Context) error { return runSMTP(ctx, cfg, o, stdout, stderr) }, nil
}

// smtpOptions are the flags of `wirespeed bench smtp` that runSMTP reads
// besides its smtpConfig.
type smtpOptions struct {
	sinks, sources   string
	postfix          bool
	m1m              int
	tlsCeiling, json bool
}

// runSMTP runs `wirespeed bench smtp` as parsed.
func runSMTP(ctx context.Context, cfg smtpConfig, o smtpOptions, stdout, stderr io.Writer) error {
	if o.postfix {
		cfg.pfSink, cfg.pfSource = postfixTool("smtp-sink"), postfixTool("smtp-source")
	}
	var err error
	if cfg.sinks, err = engines(o.sinks, []string{engWirespeed, engGoroutine, engPostfix, engTLS}, cfg.pfSink != "", "smtp-sink", stderr); err != nil {
		return err
	}
	if cfg.sources, err = engines(o.sources, []string{engWirespeed, engPipelining, engPostfix, engTLS}, cfg.pfSource != "", "smtp-source", stderr); err != nil {
		return err
	}
	if len(cfg.sizes) > 0 && !slices.ContainsFunc(cfg.sinks, func(sink string) bool {
		return slices.ContainsFunc(cfg.sources, func(src string) bool { return paired(sink, src) })
	}) {
		return cli.Usagef("bench smtp: no source of %s drives a sink of %s: the %s source and sink go only with each other", strings.Join(cfg.sources, ","), strings.Join(cfg.sinks, ","), engTLS)
	}
	notPostfix := func(e string) bool { return e != engPostfix }
	if cfg.latMessages > 0 || slices.ContainsFunc(cfg.sinks, notPostfix) || slices.ContainsFunc(cfg.sources, notPostfix) {
		if err := cli.CheckProgram("-exe", cfg.exe); err != nil {
			return cli.Usagef("bench smtp: %v", err)
		}
	}
	if runtime.NumCPU() < 2 || !canPin {
		fmt.Fprintln(stderr, "wirespeed bench smtp: fewer than 2 CPUs or no affinity control: not pinning; sink and source share CPUs")
		cfg.serverCPU, cfg.clientCPU = -1, -1
	}
	rows := benchSMTP(ctx, cfg, stderr)
	var hon *smtpHonesty
	if cfg.latMessages > 0 && ctx.Err() == nil {
		fmt.Fprintln(stderr, "latency honesty: wirespeed source, wirespeed sink with and without the wait")
		hon = smtpLatencyHonesty(ctx, cfg)
	}
	var tc *smtpTLSCeiling
	if o.tlsCeiling && o.m1m > 0 && slices.Contains(cfg.sinks, engTLS) && slices.Contains(cfg.sinks, engWirespeed) &&
		slices.Contains(cfg.sources, engTLS) && slices.Contains(cfg.sources, engWirespeed) && ctx.Err() == nil {
		tc = smtpTLSCeilingRuns(ctx, cfg, o.m1m, stderr)
	}
	if tc != nil && tc.Err == "" {
		tc.bound(rows)
	}
	bars := smtpBars(rows, hon)
	ceil := smtpSourceCeiling(rows)
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Rows    []smtpRow       `json:"rows"`
			Honesty *smtpHonesty    `json:"latency_honesty,omitempty"`
			Bars    []smtpBar       `json:"bars"`
			Ceiling *smtpCeiling    `json:"postfix_source_ceiling,omitempty"`
			TLS     *smtpTLSCeiling `json:"tls_ceiling,omitempty"`
		}{rows, hon, bars, ceil, tc}); err != nil {
			return err
		}
	} else {
		if err := printSMTPTable(stdout, cfg, rows, hon, bars, ceil); err != nil {
			return err
		}
		if tc != nil {
			if err := printTLSCeiling(stdout, tc); err != nil {
				return err
			}
		}
	}
	for _, r := range rows {
		if r.Err != "" || r.Errors > 0 {
			return cli.StatusError{Status: 1} // the table says which
		}
	}
	if (hon != nil && hon.Err != "") || (tc != nil && tc.Err != "") {
		return cli.StatusError{Status: 1}
	}
	return nil
}

// engines parses a list of engines, dropping Postfix's with a note when it
// is not installed; an engine given twice is refused.
func engines(list string, known []string, havePostfix bool, tool string, stderr io.Writer) ([]string, error) {
	var out, seen []string
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
			continue
		case !slices.Contains(known, e):
			return nil, cli.Usagef("bench smtp: unknown engine %q (known: %s)", e, strings.Join(known, ", "))
		case slices.Contains(seen, e):
			return nil, cli.Usagef("bench smtp: %s %s given twice", tool, e)
		}
		seen = append(seen, e)
		if e == engPostfix && !havePostfix {
			fmt.Fprintf(stderr, "wirespeed bench smtp: Postfix's %s is not installed (or -postfix=false): no %s rows\n", tool, tool)
			continue
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, cli.Usagef("bench smtp: no %s to run", tool)
	}
	return out, nil
}

func benchSMTP(ctx context.Context, cfg smtpConfig, progress io.Writer) []smtpRow {
	type key struct{ size, sink, source string }
	runs := map[key][]smtpRun{}
	fails := map[key]string{}
	failed := map[key]int{}
	total := 0
	for _, sink := range cfg.sinks {
		for _, src := range cfg.sources {
			if paired(sink, src) {
				total += cfg.count * len(cfg.sizes)
			}
		}
	}
	i := 0
	for rep := 0; rep < cfg.count; rep++ {
		for _, sz := range cfg.sizes {
			for _, sink := range cfg.sinks {
				for _, src := range cfg.sources {
					if ctx.Err() != nil {
						break
					}
					if !paired(sink, src) {
						continue
					}
					i++
					fmt.Fprintf(progress, "[%d/%d] %s: %s source into %s sink\n", i, total, sz.Name, src, sink)
					k := key{sz.Name, sink, src}
					run, err := runSMTPOnce(ctx, cfg, sink, src, sz.Length, sz.Messages, nil)
					if err != nil {
						if fails[k] == "" {
							fails[k] = err.Error()
						}
						failed[k]++
						continue
					}
					runs[k] = append(runs[k], run)
				}
			}
		}
	}
	var rows []smtpRow
	for _, sz := range cfg.sizes {
		for _, sink := range cfg.sinks {
			for _, src := range cfg.sources {
				if !paired(sink, src) {
					continue
				}
				k := key{sz.Name, sink, src}
				row := smtpRow{Size: sz.Name, Length: sz.Length, Sink: sink, Source: src, Sessions: cfg.sessions, Messages: sz.Messages, Err: fails[k]}
				rs := runs[k]
				row.Runs, row.FailedRuns = len(rs), failed[k]
				if len(rs) == 0 {
					if row.Err == "" {
						row.Err = "not run"
					}
					rows = append(rows, row)
					continue
				}
				for _, r := range rs {
					if r.res != nil {
						row.Errors += r.res.Errors
					}
					if r.sourceFail != "" && row.Err == "" {
						row.Err = r.sourceFail
					}
				}
				// The runs' rates and costs are per message delivered:
				// a run with errors counted delivered fewer than -m
				// (its rate from -m read as if all had gone).
				rate := func(r smtpRun) float64 { return float64(r.delivered) / r.wall.Seconds() }
				slices.SortFunc(rs, func(a, b smtpRun) int { return cmp.Compare(rate(a), rate(b)) })
				med := rs[len(rs)/2]
				n := float64(med.delivered)
				row.Delivered = med.delivered
				row.MsgPerS = rate(med)
				row.MBPerS = row.MsgPerS * float64(sz.Length) / 1e6
				if med.res != nil {
					row.Latency, row.Dot = med.res.Phases.Message, med.res.Phases.Dot
				}
				row.ServerCPUPerMsgUS = med.serverCPU.Seconds() * 1e6 / n
				row.ServerRSSMB = med.serverRSS
				row.SourceCPUPerMsgUS = med.sourceCPU.Seconds() * 1e6 / n
				row.SourceWaitsPerMsg = float64(med.sourceCS) / n
				row.ServerCPUs, row.ClientCPUs = med.srvCPUs, med.cliCPUs
				row.SinkEngine = med.sinkEngine
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// paired reports whether the source is run into the sink: the TLS sink
// and the TLS source only with each other.
func paired(sink, source string) bool { return (sink == engTLS) == (source == engTLS) }

// smtpLatencyHonesty runs wirespeed's source (one session, closed loop)
// against wirespeed's sink, once plain and once told to wait cfg.delay
// before each end-of-data reply, and compares the end-of-data phase's p50.
func smtpLatencyHonesty(ctx context.Context, cfg smtpConfig) *smtpHonesty {
	h := &smtpHonesty{DelayUS: float64(cfg.delay) / 1e3, Sessions: 1, Messages: cfg.latMessages}
	lcfg := cfg
	lcfg.sessions = 1
	var p50 [2]float64
	for i, sinkArgs := range [][]string{nil, {"-W", ".:" + cfg.delay.String()}} {
		run, err := runSMTPOnce(ctx, lcfg, engWirespeed, engWirespeed, 4096, cfg.latMessages, sinkArgs)
		switch {
		case err != nil:
			h.Err = err.Error()
		case run.sourceFail != "":
			h.Err = run.sourceFail
		case run.res.Phases.Dot == nil:
			h.Err = "no end-of-data latencies"
		}
		if h.Err != "" {
			return h
		}
		p50[i] = run.res.Phases.Dot.P50
	}
	h.P50Plain, h.P50Delay = p50[0], p50[1]
	h.DiffUS = h.P50Delay - h.P50Plain
	h.DiffRatio = h.DiffUS / h.DelayUS
	return h
}

// runSMTPOnce starts a fresh sink, runs one source against it and stops
// the sink. An error is a run that could not be made or did not end as a
// run: a source that failed (Postfix's exiting non-zero, wirespeed's
// printing no result) or was stopped by a signal, or bench interrupted;
// its time is no measurement; so is a run whose sink (wirespeed's: it
// tells its count) counted other than the messages the source delivered
// (Postfix's: all -m of them when it exits 0; wirespeed's: as it counted
// them), or that delivered none. A run that ended with errors counted is measured,
// by the messages it delivered, with what is wrong in sourceFail.
func runSMTPOnce(ctx context.Context, cfg smtpConfig, sink, source string, length, messages int, sinkArgs []string) (smtpRun, error) {
	run := smtpRun{sinkMsgs: -1}
	srv, addr, out, err := startSMTPSink(ctx, cfg, sink, sinkArgs)
	if err != nil {
		return run, err
	}
	run.srvCPUs = cpusAllowed(srv.Process.Pid)
	stopped := false
	defer func() {
		if !stopped {
			srv.Process.Kill()
			srv.Wait()
		}
	}()

	common := []string{"-d", "-s", strconv.Itoa(cfg.sessions), "-m", strconv.Itoa(messages), "-l", strconv.Itoa(length)}
	var cmd *exec.Cmd
	switch source {
	case engPostfix:
		cmd = exec.CommandContext(ctx, cfg.pfSource, append(common, addr)...)
	default:
		// -size=false: the commands Postfix's smtp-source sends, which
		// has no SIZE=, so that the sources' rows compare like with like.
		a := append([]string{"smtp-source", "-q", "-json", "-size=false"}, common...)
		switch source {
		case engPipelining:
			a = append(a, "-pipelining")
		case engTLS:
			a = append(a, "-tls", "-tls-insecure") // the sink's certificate is self-signed
		}
		cmd = exec.CommandContext(ctx, cfg.exe, append(a, addr)...)
	}
	var cliOut, cliErr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &cliOut, &cliErr
	now := cfg.now
	if now == nil {
		now = time.Now
	}
	t0 := now()
	if err := startPinned(cmd, cfg.clientCPU); err != nil {
		return run, fmt.Errorf("start %s smtp-source: %w", source, err)
	}
	run.cliCPUs = cpusAllowed(cmd.Process.Pid)
	werr := cmd.Wait()
	run.wall = now().Sub(t0)
	run.sourceCPU, _ = serverUsage(cmd)
	if _, waits, ok := rusage(cmd.ProcessState); ok {
		run.sourceCS = waits
	}
	if ctx.Err() != nil {
		return run, errSMTPInterrupted // the sink is killed too
	}
	if source == engPostfix {
		if werr != nil {
			return run, fmt.Errorf("Postfix smtp-source: %v: %s", werr, strings.TrimSpace(cliErr.String()))
		}
	} else {
		// Exit status 1 only says that errors were counted: the JSON
		// has them.
		var res smtpsource.Result
		if err := json.Unmarshal(cliOut.Bytes(), &res); err != nil {
			return run, fmt.Errorf("wirespeed smtp-source: %v: %s", werr, strings.TrimSpace(cliErr.String()))
		}
		if res.Interrupted {
			// A signal stopped it (^C reaches the whole process
			// group): what it sent is part of a run.
			return run, fmt.Errorf("wirespeed smtp-source: %w", errSMTPInterrupted)
		}
		run.res = &res
		if res.Errors > 0 {
			run.sourceFail = "wirespeed smtp-source: " + res.FirstError
		}
	}

	stopped = true
	var srvCPU time.Duration
	var srvRSS float64
	if srvCPU, srvRSS, err = stopMeasured(srv); errors.Is(err, errNoStop) {
		return run, fmt.Errorf("%s smtp-sink %w", sink, err)
	}
	if sink == engWirespeed || sink == engGoroutine || sink == engTLS {
		if err != nil {
			return run, fmt.Errorf("wirespeed smtp-sink: %v", err)
		}
		var sum struct {
			Messages int64  `json:"messages"`
			Engine   string `json:"engine"`
		}
		<-out.eof // all it wrote
		if err := json.Unmarshal(out.rest(), &sum); err != nil {
			return run, fmt.Errorf("wirespeed smtp-sink: no summary: %v", err)
		}
		run.sinkMsgs, run.sinkEngine = sum.Messages, sum.Engine
	}
	// Postfix's sink is not asked for its count: its -c writes a counter
	// for every message, CPU its column would carry.
	// Postfix's source delivered all, or it failed: without -A it exits 1
	// at the first reply it did not expect (end of data's included), a
	// lost connection or a timeout (TestPostfixSourceRefused).
	delivered := int64(messages)
	if run.res != nil {
		delivered = run.res.Delivered
	}
	if run.sinkMsgs >= 0 && run.sinkMsgs != delivered {
		return run, fmt.Errorf("the %s sink counted %d messages, the %s source delivered %d", sink, run.sinkMsgs, source, delivered)
	}
	if delivered == 0 {
		// No rate, and no cost a message, to show.
		first := ""
		if run.res != nil {
			first = run.res.FirstError
		}
		return run, fmt.Errorf("%s smtp-source delivered no message: %s", source, cmp.Or(first, "no error said"))
	}
	run.delivered = delivered
	run.serverCPU, run.serverRSS = srvCPU, srvRSS
	return run, nil
}

// errSMTPInterrupted is the error of a run that bench's interruption, or
// a signal to the source, cut short.
var errSMTPInterrupted = errors.New("interrupted")

// lineWriter keeps what a child writes and hands over its first line.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first chan string
	sent  bool
	eof   chan struct{} // closed when the child's end of the pipe is (pipe)
}

func newLineWriter() *lineWriter {
	return &lineWriter{first: make(chan string, 1), eof: make(chan struct{})}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.sent {
		if line, _, ok := bytes.Cut(w.buf.Bytes(), []byte{'\n'}); ok {
			w.first <- strings.TrimSpace(string(line))
			w.sent = true
		}
	}
	return len(p), nil
}

// pipe starts cmd pinned to cpu with its standard output (and its
// standard error too, if stderr is nil) into w through a pipe of its own,
// so that w.eof tells when the child has exited (no other process holds
// the pipe): exec's own copy does not say.
func (w *lineWriter) pipe(cmd *exec.Cmd, cpu int, stderr io.Writer) error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	if cmd.Stdout == nil {
		cmd.Stdout = pw
	}
	cmd.Stderr = stderr
	if stderr == nil {
		cmd.Stderr = pw
	}
	err = startPinned(cmd, cpu)
	pw.Close()
	if err != nil {
		pr.Close()
		return err
	}
	go func() {
		io.Copy(w, pr)
		pr.Close()
		close(w.eof)
	}()
	return nil
}

// rest returns what came after the first line.
func (w *lineWriter) rest() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, rest, _ := bytes.Cut(w.buf.Bytes(), []byte{'\n'})
	return bytes.Clone(rest)
}

// all returns all it has, once the child's end of the pipe is closed.
func (w *lineWriter) all() string {
	<-w.eof
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(w.buf.String())
}

// startSMTPSink starts a sink on 127.0.0.1 pinned to cfg.serverCPU and
// returns it once it greets, with its address and its output. A sink that
// exits before it greets fails at once.
func startSMTPSink(ctx context.Context, cfg smtpConfig, sink string, extra []string) (srv *exec.Cmd, addr string, out *lineWriter, err error) {
	if sink == engWirespeed || sink == engGoroutine || sink == engTLS {
		out = newLineWriter()
		args := append([]string{"smtp-sink", "-addr", "127.0.0.1:0", "-json"}, extra...)
		switch sink {
		case engTLS:
			args = append(args, "-tls")
		case engGoroutine:
			args = append(args, "-engine", "goroutine")
		}
		srv = exec.CommandContext(ctx, cfg.exe, args...)
		var errBuf bytes.Buffer
		if err := out.pipe(srv, cfg.serverCPU, &errBuf); err != nil {
			return nil, "", nil, fmt.Errorf("start wirespeed smtp-sink: %w", err)
		}
		kill := func() {
			srv.Process.Kill()
			srv.Wait()
		}
		select {
		case line := <-out.first:
			addr, ok := strings.CutPrefix(line, "listening on ")
			if !ok {
				kill()
				return nil, "", nil, fmt.Errorf("wirespeed smtp-sink: first line %q", line)
			}
			return srv, addr, out, nil
		case <-out.eof:
			err := srv.Wait()
			return nil, "", nil, fmt.Errorf("wirespeed smtp-sink exited before it listened: %v: %s", err, strings.TrimSpace(errBuf.String()+out.all()))
		case <-time.After(20 * time.Second):
			kill()
			return nil, "", nil, fmt.Errorf("wirespeed smtp-sink not listening within 20s: %s", errBuf.String())
		}
	}
	// Postfix's smtp-sink has no port 0: take a free port and hand it
	// over, again if someone else took it meanwhile (the sink then exits:
	// it cannot bind). Its greeting names a host name of this run's
	// (-h), so that another server on the port is not taken for it.
	name := fmt.Sprintf("wirespeed-bench-%d-%d.invalid", os.Getpid(), time.Now().UnixNano())
	args := append(slices.Clone(extra), "-h", name)
	if os.Geteuid() == 0 {
		args = append(args, "-u", "nobody") // it refuses to run as root without
	}
	var last error
	for try := 0; try < 5; try++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, "", nil, err
		}
		addr := ln.Addr().String()
		ln.Close()
		out := newLineWriter()
		srv := exec.CommandContext(ctx, cfg.pfSink, append(slices.Clone(args), addr, "1024")...)
		if err := out.pipe(srv, cfg.serverCPU, nil); err != nil {
			return nil, "", nil, fmt.Errorf("start Postfix smtp-sink: %w", err)
		}
		err = sinkReady(addr, name, out.eof)
		if err == nil {
			return srv, addr, out, nil
		}
		srv.Process.Kill()
		werr := srv.Wait()
		if !errors.Is(err, errSinkExited) {
			return nil, "", nil, fmt.Errorf("Postfix smtp-sink on %s: %w", addr, err)
		}
		last = fmt.Errorf("Postfix smtp-sink exited before it greeted: %v: %s", werr, out.all())
		if ln, lerr := net.Listen("tcp", addr); lerr == nil {
			ln.Close()
			return nil, "", nil, last // not for the port: it would again
		}
	}
	return nil, "", nil, last
}

// errSinkExited is sinkReady's error for a sink that exited.
var errSinkExited = errors.New("the sink exited")

// sinkReady waits until addr greets a connection with 220 and the host
// name name, as the sink bench started does; it fails at once if exited
// is closed (the sink exited), or if another server greets.
func sinkReady(addr, name string, exited <-chan struct{}) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errSinkExited
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			select { // not listening yet: poll again
			case <-exited:
				return errSinkExited
			case <-time.After(5 * time.Millisecond):
			}
			continue
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Write([]byte("QUIT\r\n"))
		c.Close()
		switch {
		case err != nil:
			return fmt.Errorf("no greeting: %v", err)
		case !strings.HasPrefix(line, "220 "+name+" "):
			return fmt.Errorf("greeted %q, not as the smtp-sink started (-h %s) would: another server has the port", strings.TrimSpace(line), name)
		}
		return nil
	}
	return errors.New("no greeting within 10s")
}

// smtpBars computes issue 11's ratios from the rows (0 where one is
// missing).
func smtpBars(rows []smtpRow, h *smtpHonesty) []smtpBar {
	find := func(size, sink, source string) *smtpRow {
		for i, r := range rows {
			if r.Size == size && r.Sink == sink && r.Source == source && r.Err == "" && r.MsgPerS > 0 {
				return &rows[i]
			}
		}
		return nil
	}
	ratio := func(a, b *smtpRow, mb bool) float64 {
		if a == nil || b == nil {
			return 0
		}
		if mb {
			return a.MBPerS / b.MBPerS
		}
		return a.MsgPerS / b.MsgPerS
	}
	cpuRatio := func(a, b *smtpRow) float64 {
		if a == nil || b == nil || b.ServerCPUPerMsgUS <= 0 {
			return 0
		}
		return a.ServerCPUPerMsgUS / b.ServerCPUPerMsgUS
	}
	// The wirespeed sink runs smtp-sink's default engine, loops on Linux
	// only: the bars name the one its summary reported (they said loops
	// wherever they ran).
	engine := "default engine"
	for _, r := range rows {
		if r.Sink == engWirespeed && r.SinkEngine != "" {
			engine = r.SinkEngine
			break
		}
	}
	bars := []smtpBar{
		{"sink msg/s, 4KiB, Postfix's source: wirespeed / Postfix", ratio(find("4KiB", engWirespeed, engPostfix), find("4KiB", engPostfix, engPostfix), false), ">= 1.5"},
		{"sink CPU/msg, 4KiB, Postfix's source: wirespeed (" + engine + ") / Postfix", cpuRatio(find("4KiB", engWirespeed, engPostfix), find("4KiB", engPostfix, engPostfix)), "<= 0.5"},
		{"sink CPU/msg, 4KiB, Postfix's source: wirespeed goroutine engine / Postfix", cpuRatio(find("4KiB", engGoroutine, engPostfix), find("4KiB", engPostfix, engPostfix)), "<= 0.7"},
		{"sink MB/s, 1MiB, Postfix's source: " + engine + " / goroutine engine", ratio(find("1MiB", engWirespeed, engPostfix), find("1MiB", engGoroutine, engPostfix), true), ">= 0.9"},
		{"sink MB/s, 1MiB, Postfix's source: wirespeed / Postfix", ratio(find("1MiB", engWirespeed, engPostfix), find("1MiB", engPostfix, engPostfix), true), ">= 5"},
		{"pair msg/s, 4KiB: wirespeed -pipelining into wirespeed / Postfix into Postfix", ratio(find("4KiB", engWirespeed, engPipelining), find("4KiB", engPostfix, engPostfix), false), ">= 3"},
		{"source msg/s, 4KiB, Postfix's sink: wirespeed / Postfix", ratio(find("4KiB", engPostfix, engWirespeed), find("4KiB", engPostfix, engPostfix), false), ">= 1"},
		{"source msg/s, 4KiB, Postfix's sink: wirespeed -pipelining / Postfix", ratio(find("4KiB", engPostfix, engPipelining), find("4KiB", engPostfix, engPostfix), false), ">= 1.5"},
		{"pair msg/s, 4KiB, -d: wirespeed over STARTTLS / plain", ratio(find("4KiB", engTLS, engTLS), find("4KiB", engWirespeed, engWirespeed), false), ">= 0.8"},
		{"pair MB/s, 1MiB: wirespeed over STARTTLS / plain", ratio(find("1MiB", engTLS, engTLS), find("1MiB", engWirespeed, engWirespeed), true), ">= 0.5"},
	}
	if h != nil && h.Err == "" {
		bars = append(bars, smtpBar{"end-of-data p50, sink waiting, minus without: / the wait", h.DiffRatio, "0.95 to 1.05"})
	}
	return bars
}

// An smtpCeiling bounds the first bar from the source's side: Postfix's
// smtp-source has no pipelining and is as much of a load as the sink, so
// it runs out of CPU first against a sink as fast as wirespeed's. At the
// CPU per message it spends against wirespeed's sink, it cannot move more
// than MaxMsgPerS into it, nor more than Ratio times what it moved into
// Postfix's.
type smtpCeiling struct {
	SourceCPUPerMsgUS float64 `json:"source_cpu_us_per_msg"` // smtp-source's, into wirespeed's sink
	SourceBusy        float64 `json:"source_busy"`           // its CPU time over its wall time there
	MaxMsgPerS        float64 `json:"max_messages_per_s"`    // 1 s over SourceCPUPerMsgUS
	Ratio             float64 `json:"ratio"`                 // MaxMsgPerS over its msg/s into Postfix's sink
}

// smtpSourceCeiling computes the ceiling from the 4 KiB rows of Postfix's
// source, or returns nil if one is missing.
func smtpSourceCeiling(rows []smtpRow) *smtpCeiling {
	var ws, pf *smtpRow
	for i, r := range rows {
		if r.Size != "4KiB" || r.Source != engPostfix || r.Err != "" || r.MsgPerS <= 0 || r.SourceCPUPerMsgUS <= 0 {
			continue
		}
		switch r.Sink {
		case engWirespeed:
			ws = &rows[i]
		case engPostfix:
			pf = &rows[i]
		}
	}
	if ws == nil || pf == nil {
		return nil
	}
	c := &smtpCeiling{SourceCPUPerMsgUS: ws.SourceCPUPerMsgUS, SourceBusy: ws.MsgPerS * ws.SourceCPUPerMsgUS / 1e6, MaxMsgPerS: 1e6 / ws.SourceCPUPerMsgUS}
	c.Ratio = c.MaxMsgPerS / pf.MsgPerS
	return c
}

func printSMTPTable(w io.Writer, cfg smtpConfig, rows []smtpRow, h *smtpHonesty, bars []smtpBar, ceil *smtpCeiling) error {
	pin := pinning("sink", cfg.serverCPU, "source", cfg.clientCPU)
	// A row whose runs failed in part (or were cut short) is the
	// median of fewer: it says so below the table.
	median := fmt.Sprintf("median of %d run(s) a row", cfg.count)
	if slices.ContainsFunc(rows, func(r smtpRow) bool { return r.Runs > 0 && r.Runs < cfg.count }) {
		median += " (of fewer where said below)"
	}
	fmt.Fprintf(w, "%d sessions reusing connections (-d), %s, %s; msg/s: messages delivered over the source's whole process;\nlatency (µs, whole message) from wirespeed's source only; srv CPU and RSS of the sink process;\nsrc CPU of the source process, src waits its voluntary context switches\n\n", cfg.sessions, pin, median)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "size\tsink\tsource\tmsg/s\tMB/s\tp50\tp99\tp99.9\tsrv CPU µs/msg\tsrv RSS MB\tsrc CPU µs/msg\tsrc waits/msg\terrors")
	var notes []string
	for _, r := range rows {
		var says []string
		if r.Runs > 0 && r.Runs < cfg.count {
			why := fmt.Sprintf("%d failed", r.FailedRuns)
			if notRun := cfg.count - r.Runs - r.FailedRuns; notRun > 0 && r.FailedRuns > 0 {
				why += fmt.Sprintf(", %d not run", notRun)
			} else if notRun > 0 {
				why = fmt.Sprintf("%d not run", notRun)
			}
			says = append(says, fmt.Sprintf("median of %d run(s), not %d (%s)", r.Runs, cfg.count, why))
		}
		if r.Err != "" {
			says = append(says, r.Err)
		}
		if len(says) > 0 {
			notes = append(notes, fmt.Sprintf("%s %s source into %s sink: %s", r.Size, r.Source, r.Sink, strings.Join(says, "; ")))
		}
		if r.Runs == 0 {
			continue
		}
		p50, p99, p999 := "-", "-", "-"
		if l := r.Latency; l != nil {
			p50, p99, p999 = fmt.Sprintf("%.0f", l.P50), fmt.Sprintf("%.0f", l.P99), fmt.Sprintf("%.0f", l.P999)
		}
		errs := strconv.FormatInt(r.Errors, 10)
		if r.Source == engPostfix {
			errs = "-" // it stops at the first; a failed run is reported below
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.1f\t%s\t%s\t%s\t%.2f\t%.1f\t%.2f\t%.3f\t%s\n", r.Size, r.Sink, r.Source, r.MsgPerS, r.MBPerS, p50, p99, p999, r.ServerCPUPerMsgUS, r.ServerRSSMB, r.SourceCPUPerMsgUS, r.SourceWaitsPerMsg, errs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	if h != nil {
		fmt.Fprintf(w, "\nlatency honesty (wirespeed source, 1 session, 4 KiB, %d messages, into wirespeed sink): ", h.Messages)
		if h.Err != "" {
			fmt.Fprintln(w, h.Err)
		} else {
			fmt.Fprintf(w, "end-of-data p50 %.1f µs, with a %.0f µs wait before the reply %.1f µs: +%.1f µs (%.3fx the wait)\n", h.P50Plain, h.DelayUS, h.P50Delay, h.DiffUS, h.DiffRatio)
		}
	}
	fmt.Fprintln(w, "\nbars (same run):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ratio\tmeasured\tbar")
	for _, b := range bars {
		m := "-"
		if b.Ratio > 0 {
			m = fmt.Sprintf("%.2fx", b.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", b.Name, m, b.Bar)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if ceil != nil {
		_, err := fmt.Fprintf(w, "\nthe first bar's ceiling: Postfix's smtp-source into wirespeed's sink ran %.0f%% busy at %.2f µs of CPU a message;\nat that cost, all of its CPU moves %.0f msg/s, %.2fx what it moved into Postfix's sink\n",
			100*ceil.SourceBusy, ceil.SourceCPUPerMsgUS, ceil.MaxMsgPerS, ceil.Ratio)
		return err
	}
	return nil
}

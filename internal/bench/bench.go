// Package bench is `wirespeed bench`: the suites that compare wirespeed with
// the standard library side by side (seed, dot, textproto, digest, netio),
// run by a driver of its own; `wirespeed bench net`, which compares the
// serve engines under tcpperf load in child processes; and `wirespeed bench
// smtp`, which drives wirespeed's and Postfix's SMTP sinks with their
// sources.
package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/benchcase"
	"github.com/wirespeed/wirespeed/internal/cli"
)

// Summary is the one-line description of the command.
const Summary = "compare wirespeed with the standard library side by side"

// Result is one row of the report.
type Result struct {
	Suite       string  `json:"suite"`
	Group       string  `json:"group"`
	Impl        string  `json:"impl"`
	NsPerOp     float64 `json:"ns_per_op"`
	MBPerSec    float64 `json:"mb_per_s,omitempty"`
	AllocsPerOp int64   `json:"allocs_per_op"`
	BytesPerOp  int64   `json:"alloc_bytes_per_op"`
	Speedup     float64 `json:"speedup,omitempty"` // baseline ns/op divided by this ns/op
	Baseline    string  `json:"baseline,omitempty"`
	// Metrics are what the case reported beyond time and allocations,
	// per op (the MD5ManyFiles rows: how many files multi-buffer MD5
	// hashed).
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// env describes the run.
type env struct {
	Go     string `json:"go"`
	GOOS   string `json:"goos"`
	GOARCH string `json:"goarch"`
	CPUs   int    `json:"cpus"`
	// GOMAXPROCS bounds the cores the run uses (digest.Files hashes that
	// many files at once); it may be below CPUs (a container's CPU limit).
	GOMAXPROCS int    `json:"gomaxprocs"`
	DotKernel  string `json:"dot_kernel"` // the dot package's kernel: avx512, avx2 or generic
	Benchtime  string `json:"benchtime"`
}

// Run runs `wirespeed bench` with the arguments after "bench": the
// standard-library suites named (all if none), or a harness suite, which
// runs alone: `bench net ...` runs RunNet, `bench smtp ...` RunSMTP,
// `bench tlspipe ...` RunTLSPipe. Cancelling ctx stops the run and its
// child processes; what was measured by then is printed (net, smtp), and
// Run returns errInterrupted.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p, err := parse(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // the usage asked for is on stdout
	}
	if err != nil {
		return err
	}
	err = p.run(ctx)
	if ctx.Err() != nil {
		return errInterrupted
	}
	return err
}

// errInterrupted ends a run whose context was cancelled (SIGINT, SIGTERM).
var errInterrupted = errors.New("interrupted")

// A harness is a suite of `wirespeed bench` that the driver does not run:
// it has a runner and flags of its own, and runs alone.
type harness struct {
	name  string
	about string // what it runs, for the error that refuses to combine it
	// shared are the flags of bench that it takes too: given before
	// its name, they are passed on to it.
	shared []string
	parse  func(args []string, stdout, stderr io.Writer) (func(context.Context) error, error)
}

// harnesses returns the harness suites, in the order the usage lists them.
func harnesses() []harness {
	return []harness{
		{name: "net", about: "the serve engines under tcpperf load, in child processes", shared: []string{"json"}, parse: parseNet},
		{name: "smtp", about: "wirespeed's and Postfix's smtp-sink and smtp-source, in child processes", shared: []string{"json"}, parse: parseSMTP},
		{name: "tlspipe", about: "one end of a byte pipe (-listen or -connect), the other end another process", parse: parseTLSPipe},
	}
}

// Subcommands are the harness suites, each a command of its own after
// `bench`: `wirespeed help bench net` asks for the usage of `bench net`.
func Subcommands() []string { return harnessNames() }

func harnessNames() []string {
	var names []string
	for _, h := range harnesses() {
		names = append(names, h.name)
	}
	return names
}

// A plan is a `wirespeed bench` command line, parsed: what it runs.
type plan struct {
	// harness is the harness suite that runs, with args: the shared flags
	// given before its name, then the arguments after it. "" for the
	// standard-library suites.
	harness string
	args    []string
	// The standard-library suites: the cases to measure, and how.
	cases     []Case
	benchtime time.Duration
	json      bool

	run func(context.Context) error
}

// parse parses the arguments of `wirespeed bench`. Flags and suites may
// alternate; a harness suite takes the arguments after its name, and runs
// alone. An asked-for usage goes to stdout and returns flag.ErrHelp.
func parse(args []string, stdout, stderr io.Writer) (*plan, error) {
	cases := Cases()
	suites := suiteNames(cases)
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	benchtime := fs.Duration("benchtime", 500*time.Millisecond, "target run time of each measurement (longer is steadier)")
	long := fs.Bool("long", false, "steadier run: -benchtime 2s")
	filter := fs.String("run", "", "only groups whose name contains this string")
	jsonOut := fs.Bool("json", false, "print results as JSON")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: wirespeed bench [flags] [suite...]")
		fmt.Fprintln(w, "       wirespeed bench [-json] net|smtp [flags]")
		fmt.Fprintln(w, "       wirespeed bench tlspipe [flags]")
		fmt.Fprintf(w, "suites: %s %s\n", strings.Join(suites, " "), strings.Join(harnessNames(), " "))
		fmt.Fprintln(w, "net, smtp and tlspipe each run alone, with flags of their own after the name (wirespeed bench net -h).")
		fs.PrintDefaults()
	}
	var named []string
	for rest := args; ; {
		if err := parseFlags(fs, rest, stdout, stderr); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		name := fs.Arg(0)
		rest = fs.Args()[1:]
		if i := slices.Index(harnessNames(), name); i >= 0 {
			if len(named) > 0 {
				return nil, combineError(name, named[0])
			}
			return parseHarness(harnesses()[i], fs, rest, stdout, stderr)
		}
		if !slices.Contains(suites, name) {
			return nil, cli.Usagef("unknown suite %q", name)
		}
		named = append(named, name)
	}
	if *long {
		set := false
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == "benchtime" })
		if set {
			return nil, cli.Usagef("-long is -benchtime 2s: give one of them")
		}
		*benchtime = 2 * time.Second
	}
	if *benchtime <= 0 {
		return nil, cli.Usagef("-benchtime %v: want more than 0", *benchtime)
	}
	p := &plan{benchtime: *benchtime, json: *jsonOut}
	for _, c := range cases {
		if (len(named) == 0 || slices.Contains(named, c.Suite)) && strings.Contains(c.Group, *filter) {
			p.cases = append(p.cases, c)
		}
	}
	if len(p.cases) == 0 {
		return nil, cli.Usagef("bench: -run %q: no case of %s has it in its name", *filter, cmp.Or(strings.Join(named, ", "), "the suites"))
	}
	p.run = func(ctx context.Context) error { return p.measure(ctx, stdout, stderr) }
	return p, nil
}

// parseHarness parses the arguments of harness h: the flags of bench set
// before its name (fs), which it must share, then rest.
func parseHarness(h harness, fs *flag.FlagSet, rest []string, stdout, stderr io.Writer) (*plan, error) {
	var args []string
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch {
		case err != nil:
		case slices.Contains(h.shared, f.Name):
			args = append(args, "-"+f.Name+"="+f.Value.String())
		default:
			err = cli.Usagef("bench: %s takes no -%s: it runs alone, with flags of its own after its name (wirespeed bench %s -h)", h.name, f.Name, h.name)
		}
	})
	if err != nil {
		return nil, err
	}
	args = append(args, rest...)
	run, err := h.parse(args, stdout, stderr)
	if err != nil {
		return nil, err
	}
	return &plan{harness: h.name, args: args, run: run}, nil
}

// combineError is the error for harness suite name given with another
// suite, other.
func combineError(name, other string) error {
	about := ""
	if i := slices.Index(harnessNames(), name); i >= 0 {
		about = " (" + harnesses()[i].about + ")"
	}
	return cli.Usagef("bench: suite %s cannot be combined with %s: %s runs a harness of its own%s, with its own flags; run it alone: wirespeed bench %s [flags]", name, other, name, about, name)
}

// noArgs checks what a harness's flags leave of its arguments: nothing.
// A suite there is one given with the harness.
func noArgs(name string, rest []string) error {
	if len(rest) == 0 {
		return nil
	}
	for _, a := range rest {
		if slices.Contains(harnessNames(), a) || slices.Contains(suiteNames(Cases()), a) {
			return combineError(name, a)
		}
	}
	return cli.Usagef("bench %s: unexpected arguments %q", name, rest)
}

// parseFlags parses args with fs, as cli.Parse does for the other
// commands: a usage asked for (-h, -help) goes to stdout and returns
// flag.ErrHelp; a mistake, which the flag package describes on stderr in
// one line followed by where the usage is (not the whole of it), returns
// exit status 2. fs is named as the command after "wirespeed".
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	fs.SetOutput(stderr)
	err := cli.Parse(fs, args, "wirespeed "+fs.Name(), stdout)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return cli.ParseError(err) // status 2, or the usage's failed write
}

// parseAndRun runs a harness's command line: its usage, if asked for, or
// what parse makes of args.
func parseAndRun(ctx context.Context, parse func(args []string, stdout, stderr io.Writer) (func(context.Context) error, error), args []string, stdout, stderr io.Writer) error {
	run, err := parse(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	return run(ctx)
}

// measure runs the standard-library suites of p and prints their report.
func (p *plan) measure(ctx context.Context, stdout, stderr io.Writer) error {
	results := make([]Result, 0, len(p.cases))
	// The progress line is rewritten in place on a terminal only: in a
	// file it would be clutter.
	f, ok := stderr.(*os.File)
	tty := ok && term.IsTerminal(int(f.Fd()))
	for i, c := range p.cases {
		if err := ctx.Err(); err != nil {
			return err
		}
		if tty {
			fmt.Fprintf(stderr, "\r[%d/%d] %-50s", i+1, len(p.cases), c.Group+"/impl="+c.Impl)
		}
		r, err := runCaseContext(ctx, c, p.benchtime)
		if err != nil {
			if tty {
				fmt.Fprintln(stderr)
			}
			return fmt.Errorf("%s/impl=%s: %w", c.Group, c.Impl, err)
		}
		results = append(results, r)
	}
	if tty {
		fmt.Fprintf(stderr, "\r%-60s\r", "")
	}
	addSpeedups(results)
	e := env{Go: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), DotKernel: dot.Kernel(), Benchtime: p.benchtime.String()}
	if p.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			env
			Results []Result `json:"results"`
		}{e, results})
	}
	fmt.Fprintf(stdout, "%s %s/%s, %d CPUs, GOMAXPROCS %d, dot kernel %s, benchtime %s\n\n", e.Go, e.GOOS, e.GOARCH, e.CPUs, e.GOMAXPROCS, e.DotKernel, e.Benchtime)
	return printTable(stdout, results)
}

// runCaseContext measures one case, or returns ctx's error as soon as ctx
// is cancelled: a case runs for up to a few benchtimes and cannot be
// stopped, so it is left to end with the process.
func runCaseContext(ctx context.Context, c Case, benchtime time.Duration) (Result, error) {
	type result struct {
		r   Result
		err error
	}
	ch := make(chan result, 1)
	go func() {
		r, err := runCase(c, benchtime, time.Now)
		ch <- result{r, err}
	}()
	select {
	case res := <-ch:
		return res.r, res.err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// runCase measures one case.
func runCase(c Case, benchtime time.Duration, now func() time.Time) (Result, error) {
	if c.Size != nil {
		c.Bytes = c.Size()
	}
	m, err := measure(func(d *driver) { c.Fn(d) }, benchtime, now)
	if err != nil {
		return Result{}, err
	}
	r := Result{Suite: c.Suite, Group: c.Group, Impl: c.Impl, NsPerOp: m.NsPerOp(), AllocsPerOp: m.AllocsPerOp(), BytesPerOp: m.BytesPerOp(), Metrics: m.Metrics}
	if c.Bytes > 0 && r.NsPerOp > 0 {
		r.MBPerSec = float64(c.Bytes) / r.NsPerOp * 1e3
	}
	return r, nil
}

// suiteNames returns the suites of cs, sorted.
func suiteNames(cs []Case) []string {
	var names []string
	for _, c := range cs {
		if !slices.Contains(names, c.Suite) {
			names = append(names, c.Suite)
		}
	}
	slices.Sort(names)
	return names
}

// addSpeedups fills Speedup for every result whose group has a baseline.
func addSpeedups(rs []Result) {
	base := map[string]Result{}
	for _, b := range baselineImpls {
		for _, r := range rs {
			if _, ok := base[r.Group]; !ok && r.Impl == b {
				base[r.Group] = r
			}
		}
	}
	for i, r := range rs {
		b, ok := base[r.Group]
		if !ok || b.Impl == r.Impl || r.NsPerOp == 0 {
			continue
		}
		rs[i].Speedup = b.NsPerOp / r.NsPerOp
		rs[i].Baseline = b.Impl
	}
}

// printTable writes the results as a table, each group's name on its first
// row, and the notes that explain rows present.
func printTable(w io.Writer, rs []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "benchmark\timpl\tMB/s\tns/op\tspeed-up\tallocs/op")
	prev := ""
	for _, r := range rs {
		name := r.Group
		if name == prev {
			name = ""
		}
		prev = r.Group
		mbs, sp := "-", "-"
		if r.MBPerSec > 0 {
			mbs = fmt.Sprintf("%.1f", r.MBPerSec)
		}
		if r.Speedup > 0 {
			sp = fmt.Sprintf("%.1fx", r.Speedup)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%s\t%d\n", name, r.Impl, mbs, r.NsPerOp, sp, r.AllocsPerOp)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes(rs) {
		if _, err := fmt.Fprintf(w, "\n%s\n", n); err != nil {
			return err
		}
	}
	return nil
}

// notes returns the explanations for the groups among rs that need one.
func notes(rs []Result) []string {
	var ns []string
	has := func(prefix string) bool {
		return slices.ContainsFunc(rs, func(r Result) bool { return strings.HasPrefix(r.Group, prefix) })
	}
	if has("seed/BufioWrite") || has("seed/BufioRead") {
		ns = append(ns, benchcase.SeedNote)
	}
	if has("MD5File/") {
		ns = append(ns, digestNote)
	}
	if has("MD5ManyFiles/") {
		ns = append(ns, digestManyNote(rs))
	}
	if n := speedupNote(rs); n != "" {
		ns = append(ns, n)
	}
	return ns
}

// speedupNote says what the speed-up column is measured against, which the
// table does not show (the JSON has each row's baseline): the baseline row
// of each group, named where it is not the stdlib row.
func speedupNote(rs []Result) string {
	var other []string // "group: impl", for the baselines other than stdlib
	compared := false
	for _, r := range rs {
		if r.Speedup <= 0 {
			continue
		}
		compared = true
		if s := r.Group + ": " + r.Baseline; r.Baseline != "stdlib" && !slices.Contains(other, s) {
			other = append(other, s)
		}
	}
	if !compared {
		return ""
	}
	n := "speed-up: the ns/op of the group's baseline row divided by this row's (above 1x is faster); the baseline is the stdlib row"
	if len(other) > 0 {
		n += ", except in " + strings.Join(other, ", ")
	}
	return n + "."
}

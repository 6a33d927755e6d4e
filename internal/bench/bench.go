// Package bench is `wirespeed bench`: the suites that compare wirespeed with
// the standard library side by side (seed, dot, textproto, digest, netio),
// run by a driver of its own; `wirespeed bench net`, which compares the
// serve engines under tcpperf load in child processes; and `wirespeed bench
// smtp`, which drives wirespeed's and Postfix's SMTP sinks with their
// sources.
package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

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
}

// env describes the run.
type env struct {
	Go        string `json:"go"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	CPUs      int    `json:"cpus"`
	DotKernel string `json:"dot_kernel"` // the dot package's kernel: avx512, avx2 or generic
	Benchtime string `json:"benchtime"`
}

// Run runs `wirespeed bench` with the arguments after "bench"; `bench net
// ...` runs RunNet, `bench smtp ...` RunSMTP.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "net" {
		return RunNet(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "smtp" {
		return RunSMTP(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "tlspipe" {
		return RunTLSPipe(ctx, args[1:], stdout, stderr)
	}
	cases := Cases()
	suites := suiteNames(cases)
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	benchtime := fs.Duration("benchtime", 500*time.Millisecond, "target run time of each measurement (longer is steadier)")
	long := fs.Bool("long", false, "steadier run: -benchtime 2s")
	filter := fs.String("run", "", "only groups whose name contains this string")
	jsonOut := fs.Bool("json", false, "print results as JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: wirespeed bench [flags] [suite...]")
		fmt.Fprintf(stderr, "suites: %s net smtp tlspipe\n", strings.Join(suites, " "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cli.StatusError{Status: 2} // the flag package has said why
	}
	if *long {
		*benchtime = 2 * time.Second
	}
	for _, s := range fs.Args() {
		if !slices.Contains(suites, s) {
			return cli.Usagef("unknown suite %q", s)
		}
	}
	var todo []Case
	for _, c := range cases {
		if (fs.NArg() == 0 || slices.Contains(fs.Args(), c.Suite)) && strings.Contains(c.Group, *filter) {
			todo = append(todo, c)
		}
	}
	results := make([]Result, 0, len(todo))
	for i, c := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "\r[%d/%d] %-50s", i+1, len(todo), c.Group+"/impl="+c.Impl)
		r, err := runCase(c, *benchtime, time.Now)
		if err != nil {
			fmt.Fprintln(stderr)
			return fmt.Errorf("%s/impl=%s: %w", c.Group, c.Impl, err)
		}
		results = append(results, r)
	}
	fmt.Fprintf(stderr, "\r%-60s\r", "")
	addSpeedups(results)
	e := env{Go: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), DotKernel: dot.Kernel(), Benchtime: benchtime.String()}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			env
			Results []Result `json:"results"`
		}{e, results})
	}
	fmt.Fprintf(stdout, "%s %s/%s, %d CPUs, dot kernel %s, benchtime %s\n\n", e.Go, e.GOOS, e.GOARCH, e.CPUs, e.DotKernel, e.Benchtime)
	return printTable(stdout, results)
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
	r := Result{Suite: c.Suite, Group: c.Group, Impl: c.Impl, NsPerOp: m.NsPerOp(), AllocsPerOp: m.AllocsPerOp(), BytesPerOp: m.BytesPerOp()}
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
	return ns
}

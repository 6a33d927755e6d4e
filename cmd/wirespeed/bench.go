package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/dot"
)

// A benchCase is one measurement of `wirespeed bench`: one implementation
// (impl) of one workload (group). Cases of the same group are printed side
// by side, and every impl is compared with the group's baseline impl.
type benchCase struct {
	suite string // "textproto", "digest", ...: selects cases on the command line
	group string // e.g. "DotReader/corpus=mail"
	impl  string // e.g. "stdlib", "wirespeed"
	// bytes is the payload of one op, for MB/s; 0 reports no throughput.
	bytes int64
	// size, if set, gives bytes when the case runs (for inputs generated
	// lazily, so that other subcommands do not pay for them).
	size func() int64
	// fn is a standard benchmark function running the code path users call.
	fn func(b *testing.B)
}

// baselineImpls are the implementations speed-ups are measured against, in
// order of preference.
var baselineImpls = []string{"stdlib", "io.Copy", "ReadFile+Sum"}

var benchCases []benchCase

// registerBench adds cases to `wirespeed bench`; it is called from init.
func registerBench(cases ...benchCase) { benchCases = append(benchCases, cases...) }

// benchRunners are suites that run their own way (for example, servers in
// child processes): `wirespeed bench NAME [flags]` hands over to them.
var benchRunners = map[string]func(args []string, stdout, stderr io.Writer) int{}

// benchResult is one row of the report.
type benchResult struct {
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

func runBench(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if r, ok := benchRunners[args[0]]; ok {
			return r(args[1:], stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	benchtime := fs.Duration("benchtime", 500*time.Millisecond, "target run time of each measurement (longer is steadier)")
	long := fs.Bool("long", false, "steadier run: -benchtime 2s")
	filter := fs.String("run", "", "only groups whose name contains this string")
	jsonOut := fs.Bool("json", false, "print results as JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: wirespeed bench [flags] [suite...]")
		fmt.Fprintf(stderr, "suites: %s", strings.Join(suiteNames(), " "))
		for n := range benchRunners {
			fmt.Fprintf(stderr, " %s", n)
		}
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *long {
		*benchtime = 2 * time.Second
	}
	want := map[string]bool{}
	for _, s := range fs.Args() {
		if !contains(suiteNames(), s) {
			fmt.Fprintf(stderr, "wirespeed bench: unknown suite %q\n", s)
			return 2
		}
		want[s] = true
	}
	testing.Init()
	if err := flag.Set("test.benchtime", benchtime.String()); err != nil {
		fmt.Fprintln(stderr, "wirespeed bench:", err)
		return 2
	}

	var todo []benchCase
	sort.SliceStable(benchCases, func(i, j int) bool {
		return suiteRank(benchCases[i].suite) < suiteRank(benchCases[j].suite)
	})
	for _, c := range benchCases {
		if (len(want) == 0 || want[c.suite]) && strings.Contains(c.group, *filter) {
			todo = append(todo, c)
		}
	}
	results := make([]benchResult, 0, len(todo))
	for i, c := range todo {
		fmt.Fprintf(stderr, "\r[%d/%d] %-50s", i+1, len(todo), c.group+"/impl="+c.impl)
		if c.size != nil {
			c.bytes = c.size()
		}
		r := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			if c.bytes > 0 {
				b.SetBytes(c.bytes)
			}
			c.fn(b)
		})
		res := benchResult{Suite: c.suite, Group: c.group, Impl: c.impl, AllocsPerOp: r.AllocsPerOp(), BytesPerOp: r.AllocedBytesPerOp()}
		if r.N > 0 {
			res.NsPerOp = float64(r.T.Nanoseconds()) / float64(r.N)
		}
		if c.bytes > 0 && res.NsPerOp > 0 {
			res.MBPerSec = float64(c.bytes) / res.NsPerOp * 1e3
		}
		results = append(results, res)
	}
	fmt.Fprintf(stderr, "\r%-60s\r", "")
	addSpeedups(results)
	env := benchEnv{Go: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), DotKernel: dot.Kernel(), Benchtime: benchtime.String()}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			benchEnv
			Results []benchResult `json:"results"`
		}{env, results}); err != nil {
			fmt.Fprintln(stderr, "wirespeed bench:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stdout, "%s %s/%s, %d CPUs, dot kernel %s, benchtime %s\n\n", env.Go, env.GOOS, env.GOARCH, env.CPUs, env.DotKernel, env.Benchtime)
	printTable(stdout, results)
	return 0
}

// benchEnv describes the run.
type benchEnv struct {
	Go        string `json:"go"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	CPUs      int    `json:"cpus"`
	DotKernel string `json:"dot_kernel"` // the dot package's kernel: avx512, avx2 or generic
	Benchtime string `json:"benchtime"`
}

// suiteOrder is the order suites are reported in; others follow.
var suiteOrder = []string{"seed", "dot", "textproto", "digest", "netio"}

func suiteRank(s string) int {
	for i, x := range suiteOrder {
		if x == s {
			return i
		}
	}
	return len(suiteOrder)
}

func suiteNames() []string {
	seen := map[string]bool{}
	var names []string
	for _, c := range benchCases {
		if !seen[c.suite] {
			seen[c.suite] = true
			names = append(names, c.suite)
		}
	}
	sort.Strings(names)
	return names
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// addSpeedups fills Speedup for every result whose group has a baseline.
func addSpeedups(rs []benchResult) {
	base := map[string]benchResult{}
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

func printTable(w io.Writer, rs []benchResult) {
	fmt.Fprintf(w, "%-36s %-20s %10s %12s %9s %10s\n", "benchmark", "impl", "MB/s", "ns/op", "speed-up", "allocs/op")
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
		fmt.Fprintf(w, "%-36s %-20s %10s %12.0f %9s %10d\n", name, r.Impl, mbs, r.NsPerOp, sp, r.AllocsPerOp)
	}
}

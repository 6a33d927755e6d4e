package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/benchcase"
	"github.com/wirespeed/wirespeed/internal/cli"
)

func runBench(args ...string) (stdout, stderr string, err error) {
	return runBenchContext(context.Background(), args...)
}

func runBenchContext(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	err = Run(ctx, args, &out, &errb)
	return out.String(), errb.String(), err
}

func TestBenchJSON(t *testing.T) {
	out, errs, err := runBench("-benchtime", "1ms", "-run", "seed/Dot", "-json", "seed")
	if err != nil {
		t.Fatalf("%v: %s", err, errs)
	}
	var rep struct {
		DotKernel string   `json:"dot_kernel"`
		Results   []Result `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.DotKernel == "" {
		t.Error("no dot kernel named")
	}
	impls := map[string]Result{}
	for _, r := range rep.Results {
		if !strings.HasPrefix(r.Group, "seed/Dot") {
			t.Errorf("-run seed/Dot ran %s", r.Group)
		}
		if r.NsPerOp <= 0 || r.MBPerSec <= 0 {
			t.Errorf("%s/%s: no measurement: %+v", r.Group, r.Impl, r)
		}
		impls[r.Group+"/"+r.Impl] = r
	}
	ws, ok := impls["seed/DotReader/wirespeed"]
	if !ok || len(impls) != 4 {
		t.Fatalf("want stdlib and wirespeed rows for DotReader and DotWriter, got %v", impls)
	}
	if ws.Speedup <= 0 || ws.Baseline != "stdlib" {
		t.Errorf("wirespeed row not compared with stdlib: %+v", ws)
	}
}

func TestBenchTable(t *testing.T) {
	out, errs, err := runBench("-benchtime", "1ms", "-run", "seed/", "seed")
	if err != nil {
		t.Fatalf("%v: %s", err, errs)
	}
	for _, want := range []string{"dot kernel", "seed/DotWriter", "stdlib", "wirespeed", "speed-up", "seed/BufioWrite", "ReadFrom hidden"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// The progress line is a terminal's only: a file (here a buffer)
	// gets none of its carriage-return clutter.
	if errs != "" {
		t.Errorf("stderr that is no terminal: %q, want nothing", errs)
	}
}

func TestBenchUnknownSuite(t *testing.T) {
	_, _, err := runBench("nosuchsuite")
	if status, print := cli.Status(err); !errors.Is(err, cli.ErrUsage) || status != 2 || !print {
		t.Fatalf("%v: status %d", err, status)
	}
	_, _, err = runBench("-nosuchflag")
	if status, print := cli.Status(err); status != 2 || print {
		t.Fatalf("bad flag: %v: status %d", err, status)
	}
	// -long and -benchtime together: -long's 2s won silently.
	_, _, err = runBench("-long", "-benchtime", "10ms", "-run", "DotReader")
	if status, _ := cli.Status(err); !errors.Is(err, cli.ErrUsage) || status != 2 {
		t.Fatalf("-long -benchtime 10ms: %v: status %d", err, status)
	}
	// A -run that matches nothing: it printed an empty table, exit 0.
	_, _, err = runBench("-run", "nomatch")
	if status, _ := cli.Status(err); !errors.Is(err, cli.ErrUsage) || status != 2 {
		t.Fatalf("-run nomatch: %v: status %d", err, status)
	}
}

// The table: one header, group names on their group's first row only,
// columns aligned by text/tabwriter, and the notes of the groups shown.
func TestPrintTable(t *testing.T) {
	rs := []Result{
		{Group: "MD5File/size=64MiB", Impl: "io.Copy", NsPerOp: 2000, MBPerSec: 500, AllocsPerOp: 6},
		{Group: "MD5File/size=64MiB", Impl: "wirespeed", NsPerOp: 1000, MBPerSec: 1000},
		{Group: "Other", Impl: "x", NsPerOp: 12345},
	}
	addSpeedups(rs)
	var b bytes.Buffer
	if err := printTable(&b, rs); err != nil {
		t.Fatal(err)
	}
	want := "benchmark           impl       MB/s    ns/op  speed-up  allocs/op\n" +
		"MD5File/size=64MiB  io.Copy    500.0   2000   -         6\n" +
		"                    wirespeed  1000.0  1000   2.0x      0\n" +
		"Other               x          -       12345  -         0\n" +
		"\n" + digestNote + "\n" +
		"\nspeed-up: the ns/op of the group's baseline row divided by this row's (above 1x is faster); the baseline is the stdlib row, except in MD5File/size=64MiB: io.Copy.\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestDigestCases checks that `wirespeed bench digest` has the comparison
// of the issue, without running it (it generates 128 MiB).
func TestDigestCases(t *testing.T) {
	impls := map[string][]string{}
	for _, c := range Cases() {
		if c.Suite == "digest" {
			impls[c.Group] = append(impls[c.Group], c.Impl)
			if c.Bytes <= 0 || c.Fn == nil {
				t.Errorf("%s/%s: no payload or function", c.Group, c.Impl)
			}
		}
	}
	want := map[string]string{
		"MD5File/size=64MiB":         "ReadFile+Sum io.Copy bufio+io.Copy CopyBuffer4K wirespeed",
		"MD5ManyFiles/files=64x1MiB": "io.Copy wirespeed-crypto-md5 wirespeed",
	}
	for g, w := range want {
		if got := strings.Join(impls[g], " "); got != w {
			t.Errorf("%s: impls %q, want %q", g, got, w)
		}
	}
}

// Every case is in one of the reported suites, and no row appears twice.
func TestCasesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Cases() {
		key := c.Group + "/" + c.Impl
		if seen[key] {
			t.Errorf("%s twice", key)
		}
		seen[key] = true
	}
	if got := strings.Join(suiteNames(Cases()), " "); got != "digest dot netio seed textproto" {
		t.Errorf("suites %q", got)
	}
}

// parsePlan parses a bench command line, never running it.
func parsePlan(t *testing.T, args ...string) (*plan, string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	p, err := parse(args, &out, &errb)
	return p, out.String(), errb.String(), err
}

// The harness suites work wherever the usage puts a suite: first, after
// bench's flags (the shared ones passed on), with their own flags after
// them; the standard-library suites take flags before and between them.
func TestParsePlan(t *testing.T) {
	suitesOf := func(cs []Case) string {
		var s []string
		for _, c := range cs {
			if !slices.Contains(s, c.Suite) {
				s = append(s, c.Suite)
			}
		}
		return strings.Join(s, " ")
	}
	for _, c := range []struct {
		args      []string
		harness   string
		hargs     string // the harness's arguments, space-separated
		suites    string // the standard-library suites run
		benchtime time.Duration
		json      bool
	}{
		{args: nil, suites: "seed dot textproto digest netio", benchtime: 500 * time.Millisecond},
		{args: []string{"digest", "seed"}, suites: "seed digest", benchtime: 500 * time.Millisecond},
		{args: []string{"-long", "digest"}, suites: "digest", benchtime: 2 * time.Second},
		{args: []string{"-json", "seed", "-benchtime", "1ms", "digest"}, suites: "seed digest", benchtime: time.Millisecond, json: true},
		{args: []string{"net"}, harness: "net"},
		{args: []string{"net", "-engines", "std"}, harness: "net", hargs: "-engines std"},
		{args: []string{"-json", "net"}, harness: "net", hargs: "-json=true"},
		{args: []string{"-json", "net", "-engines", "std,netio", "-json=false"}, harness: "net", hargs: "-json=true -engines std,netio -json=false"},
		{args: []string{"smtp", "-quick"}, harness: "smtp", hargs: "-quick"},
		{args: []string{"-json", "smtp"}, harness: "smtp", hargs: "-json=true"},
		{args: []string{"tlspipe", "-listen", "127.0.0.1:0"}, harness: "tlspipe", hargs: "-listen 127.0.0.1:0"},
	} {
		p, out, errs, err := parsePlan(t, c.args...)
		if err != nil || out != "" || errs != "" {
			t.Errorf("%q: %v, stdout %q, stderr %q", c.args, err, out, errs)
			continue
		}
		if p.harness != c.harness || strings.Join(p.args, " ") != c.hargs || p.run == nil {
			t.Errorf("%q: harness %q with %q; want %q with %q", c.args, p.harness, p.args, c.harness, c.hargs)
		}
		if got := suitesOf(p.cases); got != c.suites || p.benchtime != c.benchtime || p.json != c.json {
			t.Errorf("%q: suites %q, benchtime %v, json %v; want %q, %v, %v", c.args, got, p.benchtime, p.json, c.suites, c.benchtime, c.json)
		}
	}
	if p, _, _, err := parsePlan(t, "-run", "MD5File", "digest", "seed"); err != nil || len(p.cases) != 5 {
		t.Errorf("-run MD5File digest seed: %v, %d cases, want the 5 of MD5File", err, len(p.cases))
	}
}

// Suites that cannot run, or cannot run together, are usage errors that
// say why, found while parsing (nothing runs).
func TestBenchSuiteErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"digest", "net"}, "bench: suite net cannot be combined with digest: net runs a harness of its own (the serve engines under tcpperf load"},
		{[]string{"-json", "seed", "smtp"}, "bench: suite smtp cannot be combined with seed"},
		{[]string{"net", "digest"}, "bench: suite net cannot be combined with digest"},
		{[]string{"net", "-json", "smtp"}, "bench: suite net cannot be combined with smtp"},
		{[]string{"tlspipe", "-listen", ":0", "net"}, "bench: suite tlspipe cannot be combined with net"},
		{[]string{"-long", "smtp"}, "bench: smtp takes no -long: it runs alone, with flags of its own after its name (wirespeed bench smtp -h)"},
		{[]string{"-run", "x", "tlspipe"}, "bench: tlspipe takes no -run"},
		{[]string{"-json", "tlspipe", "-listen", ":0"}, "bench: tlspipe takes no -json"},
		{[]string{"-benchtime", "-1s", "digest"}, "-benchtime -1s: want more than 0"},
		{[]string{"-benchtime", "1s", "net"}, "bench: net takes no -benchtime"},
		{[]string{"net", "x"}, `bench net: unexpected arguments ["x"]`},
		{[]string{"seed", "nosuch"}, `unknown suite "nosuch"`},
	} {
		_, _, errs, err := parsePlan(t, c.args...)
		if status, print := cli.Status(err); status != 2 || !print || !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("%q: %v (status %d); want %q", c.args, err, status, c.err)
		}
		if errs != "" {
			t.Errorf("%q: stderr %q", c.args, errs)
		}
	}
}

// Asking for the usage of bench or of a harness prints it on stdout and
// succeeds (flag.ErrHelp from parse, which Run takes for success); a bad
// flag prints it on stderr and fails with status 2.
func TestBenchHelp(t *testing.T) {
	if out, errs, err := runBench("-h"); err != nil || !strings.HasPrefix(out, "usage: wirespeed bench") || errs != "" {
		t.Errorf("-h: %v, stdout %q, stderr %q", err, out, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-h"}, "usage: wirespeed bench [flags] [suite...]\n"},
		{[]string{"digest", "-help"}, "suites: digest dot netio seed textproto net smtp tlspipe\n"},
		{[]string{"net", "-h"}, "usage: wirespeed bench net [flags]\n"},
		{[]string{"-json", "net", "-h"}, "  -engines string\n"},
		{[]string{"smtp", "-help"}, "usage: wirespeed bench smtp [flags]\n"},
		{[]string{"tlspipe", "-h"}, "  -listen string\n"},
		{[]string{"tlspipe", "-h"}, "usage: wirespeed bench tlspipe -listen ADDR [flags]\n       wirespeed bench tlspipe -connect ADDR [flags]\n-listen and -connect are the pipe's two ends, each run as a process of its own"},
	} {
		_, out, errs, err := parsePlan(t, c.args...)
		if !errors.Is(err, flag.ErrHelp) || !strings.Contains(out, c.want) || errs != "" {
			t.Errorf("%q: %v, stdout %q, stderr %q; want stdout with %q", c.args, err, out, errs, c.want)
		}
	}
	// A bad flag is the flag package's one line and where the usage is,
	// as for the other commands: the whole usage (35 lines for net)
	// scrolled the reason away.
	for _, c := range []struct {
		args []string
		cmd  string
	}{{[]string{"-nosuch"}, "bench"}, {[]string{"net", "-nosuch"}, "bench net"}, {[]string{"-json", "net", "-nosuch"}, "bench net"},
		{[]string{"smtp", "-nosuch"}, "bench smtp"}, {[]string{"tlspipe", "-nosuch"}, "bench tlspipe"}} {
		_, out, errs, err := parsePlan(t, c.args...)
		want := "flag provided but not defined: -nosuch\nRun 'wirespeed " + c.cmd + " -help' for usage.\n"
		if status, print := cli.Status(err); status != 2 || print || out != "" || errs != want {
			t.Errorf("%q: %v, stdout %q, stderr %q; want status 2 and stderr %q", c.args, err, out, errs, want)
		}
	}
}

// Cancelling the context (SIGINT, SIGTERM) ends a run at once, in the
// middle of a case, with errInterrupted: bench had no interrupt handling,
// and with it a case ran to its end first.
func TestBenchInterrupt(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	p := &plan{benchtime: time.Hour, cases: []Case{{Suite: "x", Group: "x/Block", Impl: "stdlib", Fn: func(b benchcase.B) {
		for b.Loop() {
			close(started)
			<-release
			b.Fatal("released") // ends the case, which is no longer waited for
		}
	}}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.measure(ctx, io.Discard, io.Discard) }()
	<-started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("measure: %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute): // a hang guard only
		t.Fatal("measure did not return within a minute of the cancel")
	}
	if _, _, err := runBenchContext(ctx, "-benchtime", "1ms", "-run", "seed/DotReader", "seed"); err != errInterrupted {
		t.Errorf("bench, cancelled: %v, want %v", err, errInterrupted)
	}
}

// The MD5ManyFiles rows compare one goroutine with GOMAXPROCS of them: the
// table says so, and the header and the JSON give GOMAXPROCS, which may be
// below the CPUs.
func TestManyFilesNoteAndGOMAXPROCS(t *testing.T) {
	ns := notes([]Result{{Group: "MD5ManyFiles/files=64x1MiB", Impl: "io.Copy"}})
	if !slices.ContainsFunc(ns, func(n string) bool {
		return strings.Contains(n, "one after another") && strings.Contains(n, fmt.Sprintf("here %d", runtime.GOMAXPROCS(0)))
	}) {
		t.Errorf("no note on MD5ManyFiles's cores: %q", ns)
	}
	out, errs, err := runBench("-benchtime", "1ms", "-run", "seed/IONull", "seed")
	if err != nil {
		t.Fatalf("%v: %s", err, errs)
	}
	if want := fmt.Sprintf("GOMAXPROCS %d,", runtime.GOMAXPROCS(0)); !strings.Contains(out, want) {
		t.Errorf("header lacks %q:\n%s", want, out)
	}
	out, errs, err = runBench("-benchtime", "1ms", "-run", "seed/IONull", "-json", "seed")
	if err != nil {
		t.Fatalf("%v: %s", err, errs)
	}
	var rep struct {
		GOMAXPROCS int `json:"gomaxprocs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.GOMAXPROCS != runtime.GOMAXPROCS(0) {
		t.Errorf("JSON gomaxprocs %d (%v), want %d", rep.GOMAXPROCS, err, runtime.GOMAXPROCS(0))
	}
}

// A seed row's impl is what it runs: IONull has no bufio.
func TestSeedImpls(t *testing.T) {
	for _, c := range Cases() {
		if c.Suite != "seed" || c.Impl == "stdlib" || c.Impl == "wirespeed" {
			continue
		}
		want := "bufio"
		if c.Group == "seed/IONull" {
			want = "io.Copy"
		}
		if c.Impl != want {
			t.Errorf("%s: impl %s, want %s", c.Group, c.Impl, want)
		}
	}
}

// bench tlspipe's -listen address, when it cannot be listened on, is
// named, with the rule of serve's -addr (cli.ListenError): a host that
// does not exist is a usage error, exit 2 (it said "listen tcp: lookup
// HOST: no such host", exit 1, the flag unsaid); a port in use, exit 1.
func TestTLSPipeListenErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	b := busy.Addr().String()
	for _, c := range []struct {
		addr, want string
		status     int
	}{
		{"no such host.invalid:0", `bench tlspipe: -listen "no such host.invalid:0": lookup `, 2},
		{b, fmt.Sprintf("bench tlspipe: -listen %q: bind: address already in use", b), 1},
	} {
		// Not a ctx done already: it would cancel the lookup.
		err := RunTLSPipe(t.Context(), []string{"-listen", c.addr}, io.Discard, io.Discard)
		if status, _ := cli.Status(err); status != c.status || !strings.HasPrefix(fmt.Sprint(err), c.want) {
			t.Errorf("-listen %q: %v (status %d), want %q in front, exit status %d", c.addr, err, status, c.want, c.status)
		}
	}
}

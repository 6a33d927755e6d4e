package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/cli"
)

func runBench(args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	err = Run(context.Background(), args, &out, &errb)
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
	if !strings.Contains(errs, "[1/9]") {
		t.Errorf("no progress on stderr: %q", errs)
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
		"\n" + digestNote + "\n"
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

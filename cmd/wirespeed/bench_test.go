package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestBenchJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "-benchtime", "1ms", "-run", "seed/Dot", "-json", "seed"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep struct {
		DotKernel string        `json:"dot_kernel"`
		Results   []benchResult `json:"results"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if rep.DotKernel == "" {
		t.Error("no dot kernel named")
	}
	impls := map[string]benchResult{}
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
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "-benchtime", "1ms", "-run", "seed/DotWriter", "seed"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"dot kernel", "seed/DotWriter", "stdlib", "wirespeed", "speed-up"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errb.String(), "[1/2]") {
		t.Errorf("no progress on stderr: %q", errb.String())
	}
}

func TestBenchUnknownSuite(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "nosuchsuite"}, nil, &out, &errb); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
}

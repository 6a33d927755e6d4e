package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestOverload runs every variant of the overload experiment briefly and
// checks its accounting: what the producer offered is delivered or
// dropped, the blocking variants drop nothing, the bound holds, and the
// table names every variant. (The latencies are the experiment's result,
// not asserted.)
func TestOverload(t *testing.T) {
	cfg := overloadConfig{Rate: 4000, MsgSize: 64, Drain: 64 * 2000, Duration: 200 * time.Millisecond, SockBuf: 16 << 10}
	var rows []overloadRow
	for _, v := range overloadVariants() {
		r := runOverload(context.Background(), cfg, v)
		if r.Err != "" {
			t.Fatalf("%s: %s", v.Name, r.Err)
		}
		if r.Offered != int64(cfg.Rate*cfg.Duration.Seconds()) || r.Delivered+r.Dropped != r.Offered {
			t.Errorf("%s: offered %d, delivered %d, dropped %d", v.Name, r.Offered, r.Delivered, r.Dropped)
		}
		if !v.Opt.NonBlocking && r.Dropped != 0 {
			t.Errorf("%s: a blocking writer dropped %d", v.Name, r.Dropped)
		}
		if max := v.Opt.MaxQueued; max == 0 && r.PeakQueued > 1<<20+16<<10 {
			t.Errorf("%s: %d bytes queued, over the 1 MiB bound", v.Name, r.PeakQueued)
		}
		rows = append(rows, r)
	}
	var out bytes.Buffer
	if err := printOverloadTable(&out, cfg, rows); err != nil {
		t.Fatal(err)
	}
	for _, v := range overloadVariants() {
		if !strings.Contains(out.String(), v.Name) {
			t.Errorf("table lacks %q:\n%s", v.Name, out.String())
		}
	}
	if r := runOverload(context.Background(), overloadConfig{MsgSize: 8}, overloadVariants()[0]); r.Err == "" {
		t.Error("8-byte messages accepted")
	}
}

// A variant that delivered nothing has no latencies: they read 0.0 ms in
// the table and 0 in the JSON, as if measured.
func TestOverloadNothingDelivered(t *testing.T) {
	cfg := defaultOverload(time.Second)
	rows := []overloadRow{{Variant: "bounded 1 MiB, shedding", Offered: 100, Dropped: 100}}
	var out bytes.Buffer
	if err := printOverloadTable(&out, cfg, rows); err != nil {
		t.Fatal(err)
	}
	// variant (4 words) delivered dropped p50 p99 max
	if f := strings.Fields(lineOf(out.String(), "bounded 1 MiB, shedding")); len(f) < 9 || f[4] != "0" || f[6] != "-" || f[7] != "-" || f[8] != "-" {
		t.Errorf("nothing delivered: %q:\n%s", f, out.String())
	}
	b, err := json.Marshal(rows[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "latency_") {
		t.Errorf("nothing delivered, latencies in the JSON: %s", b)
	}
}

// A variant that failed shows its error alone: in -json it carried the
// figures of the run it cut short (offered, delivered, dropped, queue,
// window) beside its error, read by a script as a measurement.
func TestOverloadFailedNoFigures(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the run stops before its schedule
	cfg := overloadConfig{Rate: 4000, MsgSize: 64, Drain: 64 * 2000, Duration: 200 * time.Millisecond, SockBuf: 16 << 10}
	r := runOverload(ctx, cfg, overloadVariants()[1])
	if r.Err == "" {
		t.Fatalf("a cancelled run did not fail: %+v", r)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m["variant"] != r.Variant || m["error"] != r.Err {
		t.Errorf("failed row in -json: %s; want its variant and error alone", b)
	}
	// A row that ran keeps its figures, 0 included.
	b, err = json.Marshal(overloadRow{Variant: "unbounded", Offered: 10, Delivered: 10})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"offered":10`) || !strings.Contains(s, `"dropped":0`) || strings.Contains(s, `"error"`) {
		t.Errorf("row in -json: %s", s)
	}
}

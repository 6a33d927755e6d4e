package bench

import (
	"encoding/json"
	"testing"
)

// TestFailedRowJSON pins the -json form of each kind of failed row: its
// identifying fields and its error alone, in the struct's order, the
// error present even when empty (a row with no run measured), HTML
// characters escaped as encoding/json escapes them. The figures, which
// would read as measured, are absent.
func TestFailedRowJSON(t *testing.T) {
	const msg = `dial <127.0.0.1:25> & "refused" é`
	const esc = `"dial \u003c127.0.0.1:25\u003e \u0026 \"refused\" é"`
	for _, c := range []struct {
		name string
		row  any
		want string
	}{
		{"smtp row, no run measured", smtpRow{Size: "4k", Length: 4096, Sink: "wirespeed", Source: "postfix", Sessions: 10, Messages: 20000,
			Runs: 0, FailedRuns: 3, Delivered: 7, MsgPerS: 1.5, MBPerS: 2.5, ServerCPUPerMsgUS: 3, ServerRSSMB: 4, SourceCPUPerMsgUS: 5,
			SourceWaitsPerMsg: 6, ServerCPUs: "0", ClientCPUs: "1", SinkEngine: "loops", Errors: 8, Err: msg},
			`{"size":"4k","length":4096,"sink":"wirespeed","source":"postfix","sessions":10,"messages":20000,"runs":0,"failed_runs":3,"error":` + esc + `}`},
		{"smtp row, no run and no error", smtpRow{Size: "1m", Length: 1 << 20, Sink: "postfix", Source: "wirespeed", Sessions: 1, Messages: 2},
			`{"size":"1m","length":1048576,"sink":"postfix","source":"wirespeed","sessions":1,"messages":2,"runs":0,"failed_runs":0,"error":""}`},
		{"latency honesty", smtpHonesty{DelayUS: 2000.5, Sessions: 4, Messages: 300, P50Plain: 10, P50Delay: 2010, DiffUS: 2000, DiffRatio: 1, Err: msg},
			`{"delay_us":2000.5,"sessions":4,"messages":300,"error":` + esc + `}`},
		{"overload row", overloadRow{Variant: "adaptive 10 ms", Offered: 10, Delivered: 9, Dropped: 1, P50MS: 1, P99MS: 2, MaxMS: 3,
			PeakQueued: 4, Window: 5, DrainRate: 6, BehindMS: 7, Err: msg},
			`{"variant":"adaptive 10 ms","error":` + esc + `}`},
		{"TLS ceiling", smtpTLSCeiling{Sessions: 10, MiB: 300, Runs: 3, Modes: []smtpTLSCeilingRow{{Mode: "plain", MBPerS: 1}},
			Ratio: 0.5, BatchedRatio: 0.6, SealMBPerS: 1000, OpenMBPerS: 900, SourceBound: 0.7, SinkBound: 0.8, Err: msg},
			`{"sessions":10,"mib":300,"error":` + esc + `}`},
	} {
		b, err := json.Marshal(c.row)
		if err != nil || string(b) != c.want {
			t.Errorf("%s:\n got %s %v\nwant %s", c.name, b, err, c.want)
		}
	}
}

// TestFailedJSONNames: a name that is no field's fails, rather than
// leaving the field out of the row unnoticed.
func TestFailedJSONNames(t *testing.T) {
	if b, err := failedJSON(overloadRow{Variant: "v"}, "variant", "eror"); err == nil {
		t.Errorf("a misspelt name: %s, no error", b)
	}
}

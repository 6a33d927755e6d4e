package tcpperf

import (
	"encoding/json"
	"strings"
	"testing"
)

// A run that received nothing has no latency percentiles, and one that
// sent nothing no send lateness: its JSON leaves them out, as the text
// prints "-", where it wrote 0, which read as 0 µs measured. A latency of
// 0 measured (a fake clock's) is written.
func TestResultJSONNothingMeasured(t *testing.T) {
	latency := []string{`"p50_us"`, `"p90_us"`, `"p99_us"`, `"p999_us"`, `"p9999_us"`, `"max_us"`, `"mean_us"`}
	lateness := []string{`"send_lateness_p50_us"`, `"send_lateness_p99_us"`, `"send_lateness_max_us"`}
	for _, c := range []struct {
		res                   Result
		wantLatency, wantLate bool
	}{
		{Result{Mode: "echo", Conns: 1, TargetQPS: 100}, false, false},
		{Result{Mode: "echo", Conns: 1, TargetQPS: 100, Sent: 10, LatenessP99: 3}, false, true},
		{Result{Mode: "echo", Conns: 1, Sent: 10, Received: 10}, true, true}, // 0 µs measured
		{Result{Mode: "ping-pong", P50: 12, P99: 30}, true, false},           // percentiles from elsewhere (bench's sockperf)
	} {
		b, err := json.Marshal(c.res)
		if err != nil {
			t.Fatal(err)
		}
		js := string(b)
		for _, keys := range []struct {
			keys []string
			want bool
		}{{latency, c.wantLatency}, {lateness, c.wantLate}} {
			for _, k := range keys.keys {
				if strings.Contains(js, k) != keys.want {
					t.Errorf("%+v: %s in its JSON: %v, want %v: %s", c.res, k, !keys.want, keys.want, js)
				}
			}
		}
		if !strings.Contains(js, `"received":`) || !strings.Contains(js, `"sent":`) {
			t.Errorf("counts left out: %s", js)
		}
		var back Result
		if err := json.Unmarshal(b, &back); err != nil || back != c.res {
			t.Errorf("decoded %+v (%v), want %+v", back, err, c.res)
		}
	}
}

package smtpsource

import (
	"bytes"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"
)

// No message disappears from the figures: of four messages, one times out
// (its DATA is never answered), one is refused; the two that fail have a
// histogram of their own, in the Result's JSON and in the interval log
// (tagged "failed"), beside the two delivered, and the one that timed out
// is there with the wait it cost, Timeout at least.
func TestFailedMessagesCounted(t *testing.T) {
	var datas, mails atomic.Int64
	f := &fakeServer{reply: func(verb, arg string) string {
		switch {
		case verb == "DATA" && datas.Add(1) == 1:
			return "hang"
		case verb == "MAIL" && mails.Add(1) == 3:
			return "451 4.3.0 try later"
		}
		return ""
	}}
	h := holdDeadlines(f)
	cfg := base(f.start(t))
	var hlog bytes.Buffer
	cfg.Messages, cfg.Reuse, cfg.Timeout, cfg.HdrLog = 4, true, 50*time.Millisecond, &hlog
	res := h.run(t, cfg)
	if res.Started != 4 || res.Delivered != 2 || res.Failed != 2 || res.IOErrors != 1 || res.Rejections != 1 {
		t.Fatalf("%+v", res)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Latency map[string]*Latency `json:"latency"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if m, f := j.Latency["message"], j.Latency["failed"]; m == nil || m.Count != 2 || f == nil || f.Count != 2 || f.Max < 50e3 {
		t.Errorf("JSON latencies: message %+v, failed %+v; want 2 each, a failure of 50ms or more", m, f)
	}
	if byTag := logCounts(t, &hlog); byTag[""] != 2 || byTag["failed"] != 2 {
		t.Errorf("interval log: %v latencies by tag, want 2 untagged (delivered) and 2 failed", byTag)
	}
}

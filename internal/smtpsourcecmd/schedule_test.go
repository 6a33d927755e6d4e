package smtpsourcecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/tooltest"
	"github.com/wirespeed/wirespeed/smtpsource"
)

// -qps in stages and -duration: with no -m the run sends what the
// schedule starts before its end (counts, not times, are asserted: the
// intended starts are fixed), each stage's latencies apart in -json and
// in the table; bad stages are usage errors.
func TestStagesAndDuration(t *testing.T) {
	run := func(args ...string) (*smtpsource.Result, string) {
		t.Helper()
		s := &sink{}
		addr := s.start(t)
		var out, errb bytes.Buffer
		if err := Run(context.Background(), append(args, "-q", addr), &out, &errb); err != nil {
			t.Fatalf("%q: %v\n%s%s", args, err, out.String(), errb.String())
		}
		if !strings.Contains(strings.Join(args, " "), "-json") {
			return nil, out.String()
		}
		var res smtpsource.Result
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		return &res, out.String()
	}
	// 20 to 40/s over 100ms: 3 messages (at 0, 41.4ms and 73.2ms); then
	// 40/s for 100ms: 4.
	res, _ := run("-qps", "20:40/100ms,40/100ms", "-d", "-json")
	if res.Delivered != 7 || res.Messages != 0 || len(res.Stages) != 2 || res.Stages[0].Message.Count != 3 || res.Stages[1].Message.Count != 4 || res.DurationLimitS != 0.2 {
		t.Errorf("stages: %+v", res)
	}
	_, out := run("-qps", "20:40/100ms,40/100ms", "-d")
	for _, w := range []string{"open loop in stages 20:40/100ms,40/100ms, for 0.2s, no message limit,", "stage1 message", "stage2 message"} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in\n%s", w, out)
		}
	}
	res, _ = run("-qps", "10", "-duration", "300ms", "-d", "-json")
	if res.Delivered != 3 || res.Messages != 0 || res.DurationLimitS != 0.3 {
		t.Errorf("-qps 10 -duration 300ms: %+v", res)
	}
	res, _ = run("-qps", "10", "-duration", "300ms", "-m", "2", "-json")
	if res.Delivered != 2 || res.Messages != 2 {
		t.Errorf("-m 2 -duration 300ms: %+v", res)
	}
	// 30/s down to 0 over 100ms schedules 2 messages (at 0 and 42.3ms):
	// the other 8 of -m 10 are never due, and the summary says so.
	_, out = run("-qps", "30:0/100ms", "-m", "10", "-d")
	if !strings.Contains(out, "delivered 2 of 2 started") || !strings.Contains(out, "unscheduled 8: never due") {
		t.Errorf("-qps 30:0/100ms -m 10:\n%s", out)
	}
	var o, e bytes.Buffer
	// Stages all at rate 0 ("0/1s") are refused naming -qps: they ran,
	// sent nothing and exited 0.
	for _, q := range []string{"1:2", "5/0s", "abc", "-1", "1:x/1s", "5/1s,", "-5/1s", "0/1s", "0:0/1s,0/1h"} {
		e.Reset()
		err := Run(context.Background(), []string{"-qps", q, "127.0.0.1:1"}, &o, &e)
		if st, _ := cli.Status(err); st != 2 || !strings.Contains(e.String(), "flag -qps") {
			t.Errorf("-qps %q: status %d, %v, %q; want 2 naming -qps", q, st, err, e.String())
		}
	}
}

// A configuration smtpsource refuses (here -dsn-ret with a value it does
// not know) is a usage error, exit status 2, refused before -hdr-log is
// made: it exited 1, and after emptying an earlier run's log.
func TestConfigErrorIsUsage(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "keep.hdr")
	if err := os.WriteFile(keep, []byte("an earlier run"), 0o644); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	err := Run(context.Background(), []string{"-dsn-ret", "ALL", "-hdr-log", keep, "127.0.0.1:1"}, &o, &e)
	b, _ := os.ReadFile(keep)
	if st, print := cli.Status(err); st != 2 || !print || !errors.Is(err, smtpsource.ErrConfig) || string(b) != "an earlier run" {
		t.Errorf("-dsn-ret ALL: %v (status %d), -hdr-log holds %q", err, st, b)
	}
}

// A run that opens no connection (ErrConnect) leaves an earlier run's
// -hdr-log as it was, and makes none: it held the log's header alone.
func TestConnectErrorKeepsLog(t *testing.T) {
	refused := tooltest.RefusingAddr(t)
	dir := t.TempDir()
	keep, made := filepath.Join(dir, "keep.hdr"), filepath.Join(dir, "made.hdr")
	if err := os.WriteFile(keep, []byte("an earlier run"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{keep, made} {
		var o, e bytes.Buffer
		err := Run(context.Background(), []string{"-m", "3", "-q", "-hdr-log", path, refused}, &o, &e)
		if !errors.Is(err, smtpsource.ErrConnect) {
			t.Errorf("no server: %v, want ErrConnect", err)
		}
	}
	if b, _ := os.ReadFile(keep); string(b) != "an earlier run" {
		t.Errorf("the earlier log holds %q", b)
	}
	if _, err := os.Stat(made); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a log made for a run that connected nowhere: %v", err)
	}
}

//go:build unix

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fakeSMTPTools writes stand-ins for wirespeed and Postfix's smtp-source
// into a new directory: wirespeed's smtp-sink says where it listens and,
// told to stop, prints a summary of 3 messages; wirespeed's smtp-source
// prints source (a JSON result, or nothing) and exits status; Postfix's
// smtp-source writes a line to stderr and exits pfStatus. Each source
// first writes to the FIFO started, if it is there.
func fakeSMTPTools(t *testing.T, source string, status, pfStatus int) (dir string) {
	t.Helper()
	return fakeTools{source: source, status: status, pfStatus: pfStatus, sinkMsgs: 3}.write(t)
}

// fakeTools are the stand-ins fakeSMTPTools writes, with more knobs:
// sinkMsgs is the count wirespeed's sink reports, engine the engine it
// reports when not told -engine goroutine (none if "").
type fakeTools struct {
	source           string
	status, pfStatus int
	sinkMsgs         int
	engine           string
}

func (f fakeTools) write(t *testing.T) (dir string) {
	t.Helper()
	dir = t.TempDir()
	started := filepath.Join(dir, "started")
	signal := `[ -p ` + started + ` ] && echo started > ` + started + ` && exec sleep 600; `
	engine := ""
	if f.engine != "" {
		engine = `,\"engine\":\"'$eng'\"`
	}
	ws := `#!/bin/sh
eng=` + f.engine + `
case " $* " in *" -engine goroutine "*) eng=goroutine;; esac
case "$1" in
smtp-sink) trap 'echo "{\"messages\":` + strconv.Itoa(f.sinkMsgs) + engine + `}"; exit 0' TERM; echo "listening on 127.0.0.1:9"; while :; do sleep 0.1 >/dev/null; done;;
smtp-source) ` + signal + `echo '` + f.source + `'; exit ` + strconv.Itoa(f.status) + `;;
esac
`
	pf := `#!/bin/sh
` + signal + `echo "smtp-source: fatal: connect: Connection refused" >&2; exit ` + strconv.Itoa(f.pfStatus) + `
`
	for name, script := range map[string]string{"wirespeed": ws, "smtp-source": pf} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The bars name the engine wirespeed's sink ran, as its summary says:
// they read "wirespeed (loops) / Postfix" and "loops / goroutine engine"
// wherever they ran, where off Linux the default engine is goroutine.
func TestSMTPBarsSinkEngine(t *testing.T) {
	for _, engine := range []string{"goroutine", "loops"} {
		dir := fakeTools{source: `{"delivered":3,"errors":0}`, sinkMsgs: 3, engine: engine}.write(t)
		var out, errOut bytes.Buffer
		err := RunSMTP(context.Background(), []string{"-exe", filepath.Join(dir, "wirespeed"), "-postfix=false", "-sinks", "wirespeed,wirespeed-goroutine", "-sources", "wirespeed",
			"-m4k", "3", "-m1m", "3", "-lat-m", "0", "-server-cpu", "-1", "-client-cpu", "-1", "-json"}, &out, &errOut)
		if err != nil {
			t.Fatalf("%s: %v\n%s", engine, err, errOut.String())
		}
		var rep smtpReport
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("%v:\n%s", err, out.String())
		}
		for _, r := range rep.Rows {
			if want := map[string]string{engWirespeed: engine, engGoroutine: "goroutine"}[r.Sink]; r.SinkEngine != want || r.Runs != 1 {
				t.Errorf("%s: %s sink row: engine %q, runs %d; want %q", engine, r.Sink, r.SinkEngine, r.Runs, want)
			}
		}
		var names []string
		for _, b := range rep.Bars {
			names = append(names, b.Name)
		}
		all := strings.Join(names, "\n")
		for _, want := range []string{"wirespeed (" + engine + ") / Postfix", "Postfix's source: " + engine + " / goroutine engine"} {
			if !strings.Contains(all, want) {
				t.Errorf("%s: no bar reads %q:\n%s", engine, want, all)
			}
		}
		if engine == "goroutine" && strings.Contains(all, "loops") {
			t.Errorf("a bar names loops, which did not run:\n%s", all)
		}
	}
}

// A run whose source did not end as a run is no measurement: it was
// measured, its messages over its time, when wirespeed's source had been
// stopped by a signal (^C reaches the whole process group; it prints what
// it sent with "interrupted") and when Postfix's exited non-zero (a row
// of Postfix's source that failed at once read millions of messages a
// second), and it read "wirespeed smtp-sink: signal: killed" when bench
// itself was interrupted.
func TestSMTPRunNotMeasured(t *testing.T) {
	cfg := smtpConfig{sessions: 1, count: 1, sizes: []smtpSize{{"4KiB", 4096, 3}}, serverCPU: -1, clientCPU: -1}
	for _, c := range []struct {
		name, source, result string
		status, pfStatus     int
		want                 string
	}{
		{"signalled", engWirespeed, `{"delivered":3,"errors":0,"interrupted":true}`, 1, 0, "wirespeed smtp-source: interrupted"},
		{"postfix failed", engPostfix, "", 0, 1, "Postfix smtp-source: exit status 1: smtp-source: fatal: connect: Connection refused"},
		{"no result", engWirespeed, "", 2, 0, "wirespeed smtp-source: exit status 2: "},
	} {
		dir := fakeSMTPTools(t, c.result, c.status, c.pfStatus)
		cfg := cfg
		cfg.exe, cfg.pfSource = filepath.Join(dir, "wirespeed"), filepath.Join(dir, "smtp-source")
		cfg.sinks, cfg.sources = []string{engWirespeed}, []string{c.source}
		rows := benchSMTP(context.Background(), cfg, io.Discard)
		if len(rows) != 1 || rows[0].Runs != 0 || rows[0].MsgPerS != 0 || rows[0].Err != c.want {
			t.Errorf("%s: rows %+v; want one not measured, error %q", c.name, rows, c.want)
		}
	}

	// Interrupted mid-run.
	dir := fakeSMTPTools(t, "", 0, 0)
	started := filepath.Join(dir, "started")
	if err := syscall.Mkfifo(started, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if b, err := os.ReadFile(started); err == nil && len(b) > 0 {
			cancel()
		}
	}()
	cfg.exe, cfg.pfSource = filepath.Join(dir, "wirespeed"), filepath.Join(dir, "smtp-source")
	cfg.sinks, cfg.sources = []string{engWirespeed}, []string{engWirespeed}
	rows := benchSMTP(ctx, cfg, io.Discard)
	if len(rows) != 1 || rows[0].Runs != 0 || rows[0].Err != "interrupted" {
		t.Errorf("interrupted: rows %+v; want one not measured, error %q", rows, "interrupted")
	}
}

//go:build unix

package bench

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
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
	dir = t.TempDir()
	started := filepath.Join(dir, "started")
	signal := `[ -p ` + started + ` ] && echo started > ` + started + ` && exec sleep 600; `
	ws := `#!/bin/sh
case "$1" in
smtp-sink) trap 'echo "{\"messages\":3}"; exit 0' TERM; echo "listening on 127.0.0.1:9"; while :; do sleep 0.1 >/dev/null; done;;
smtp-source) ` + signal + `echo '` + source + `'; exit ` + strconv.Itoa(status) + `;;
esac
`
	pf := `#!/bin/sh
` + signal + `echo "smtp-source: fatal: connect: Connection refused" >&2; exit ` + strconv.Itoa(pfStatus) + `
`
	for name, script := range map[string]string{"wirespeed": ws, "smtp-source": pf} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
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

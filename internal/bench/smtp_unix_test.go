//go:build unix

package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/tooltest"
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
	sinkExits        bool // wirespeed's sink exits at once, with a message
	// wirespeed's smtp-source fails its first sourceFails runs: a
	// message on stderr, exit status 2, no result
	sourceFails int
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
smtp-sink) ` + map[bool]string{true: `echo "smtp-sink: -engine: bad value" >&2; exit 2; `}[f.sinkExits] + `trap 'echo "{\"messages\":` + strconv.Itoa(f.sinkMsgs) + engine + `}"; exit 0' TERM; echo "listening on 127.0.0.1:9"; while :; do sleep 0.1 >/dev/null; done;;
smtp-source) ` + signal + `n=$(($(cat ` + filepath.Join(dir, "source-runs") + ` 2>/dev/null || echo 0) + 1)); echo $n > ` + filepath.Join(dir, "source-runs") + `
	[ $n -le ` + strconv.Itoa(f.sourceFails) + ` ] && { echo "smtp-source: run $n failed" >&2; exit 2; }
	echo '` + f.source + `'; exit ` + strconv.Itoa(f.status) + `;;
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

// fakePostfixSink writes a stand-in for Postfix's smtp-sink into dir,
// which counts its starts in dir/starts. With exit, it exits at once with
// a fatal message. Otherwise it hands its arguments to the test through
// the FIFO dir/args and waits for SIGTERM; playSink then plays its
// network half.
func fakePostfixSink(t *testing.T, dir string, exit bool) string {
	t.Helper()
	script := `#!/bin/sh
echo start >> ` + filepath.Join(dir, "starts") + `
`
	if exit {
		script += `echo "smtp-sink: fatal: usage: smtp-sink [options] host:port backlog" >&2; exit 1
`
	} else {
		if err := syscall.Mkfifo(filepath.Join(dir, "args"), 0o600); err != nil {
			t.Fatal(err)
		}
		script += `echo "$@" > ` + filepath.Join(dir, "args") + `
trap 'exit 0' TERM
while :; do sleep 0.1; done
`
	}
	path := filepath.Join(dir, "smtp-sink")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// playSink listens where the fake sink in dir was told to, once it has
// started, and greets each connection with greet(the sink's -h).
func playSink(t *testing.T, dir string, greet func(hostname string) string) {
	playSinkWith(t, dir, func(c net.Conn, host string) {
		c.Write([]byte(greet(host) + "\r\n"))
		c.Close()
	})
}

// playSinkWith is playSink with each connection served by serve, one at
// a time.
func playSinkWith(t *testing.T, dir string, serve func(c net.Conn, hostname string)) {
	lns := make(chan net.Listener, 1)
	t.Cleanup(func() {
		select {
		case ln := <-lns:
			ln.Close()
		default:
		}
	})
	go func() {
		b, err := os.ReadFile(filepath.Join(dir, "args"))
		args := strings.Fields(string(b))
		if err != nil || len(args) < 2 {
			return
		}
		host := ""
		if i := slices.Index(args, "-h"); i >= 0 && i+1 < len(args) {
			host = args[i+1]
		}
		ln, err := net.Listen("tcp", args[len(args)-2])
		if err != nil {
			return
		}
		lns <- ln
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			serve(c, host)
		}
	}()
}

// bench smtp knows Postfix's sink it started from another server: it took
// any 220 greeting on the port as the sink's, and so measured whatever
// held the port; and a sink that exited at once was retried for 50 s (5
// ports, 10 s each) before its run failed, without its message.
func TestPostfixSinkStart(t *testing.T) {
	cfg := smtpConfig{sessions: 1, count: 1, sizes: []smtpSize{{"4KiB", 4096, 3}}, serverCPU: -1, clientCPU: -1,
		sinks: []string{engPostfix}, sources: []string{engPostfix}}
	starts := func(dir string) int {
		b, _ := os.ReadFile(filepath.Join(dir, "starts"))
		return strings.Count(string(b), "start")
	}

	// Another server on the port the sink was given.
	dir := fakeSMTPTools(t, "", 0, 0)
	cfg.pfSink, cfg.pfSource = fakePostfixSink(t, dir, false), filepath.Join(dir, "smtp-source")
	playSink(t, dir, func(string) string { return "220 mail.example ESMTP Postfix" })
	rows := benchSMTP(context.Background(), cfg, io.Discard)
	if len(rows) != 1 || rows[0].Runs != 0 || !strings.Contains(rows[0].Err, `greeted "220 mail.example ESMTP Postfix", not as the smtp-sink started`) {
		t.Errorf("another server: rows %+v; want one not measured, saying another server greeted", rows)
	}

	// A sink that exits at once: once, with what it said.
	dir = fakeSMTPTools(t, "", 0, 0)
	cfg.pfSink, cfg.pfSource = fakePostfixSink(t, dir, true), filepath.Join(dir, "smtp-source")
	rows = benchSMTP(context.Background(), cfg, io.Discard)
	if len(rows) != 1 || rows[0].Runs != 0 || !strings.Contains(rows[0].Err, "exited before it greeted: exit status 1: smtp-sink: fatal: usage") || starts(dir) != 1 {
		t.Errorf("sink exiting: rows %+v, %d starts; want one not measured, saying why, one start", rows, starts(dir))
	}

	// The sink started, greeting with the host name it was given.
	dir = fakeSMTPTools(t, "", 0, 0)
	cfg.pfSink, cfg.pfSource = fakePostfixSink(t, dir, false), filepath.Join(dir, "smtp-source")
	playSink(t, dir, func(host string) string { return "220 " + host + " ESMTP" })
	rows = benchSMTP(context.Background(), cfg, io.Discard)
	if len(rows) != 1 || rows[0].Runs != 1 || rows[0].Err != "" {
		t.Errorf("the sink: rows %+v; want one measured", rows)
	}
}

// A run is measured only if the sink counted the messages the source
// delivered: the sink's count was not read for Postfix's sink, nor
// compared for Postfix's source, and a wirespeed source's run that
// disagreed with the sink was measured (the row failed, with its time).
func TestSMTPSinkCountChecked(t *testing.T) {
	cfg := smtpConfig{sessions: 1, count: 1, sizes: []smtpSize{{"4KiB", 4096, 3}}, serverCPU: -1, clientCPU: -1}
	for _, c := range []struct {
		name, sink, source string
		want               string
	}{
		{"wirespeed", engWirespeed, engWirespeed, "the wirespeed sink counted 2 messages, the wirespeed source delivered 3"},
		{"postfix source", engWirespeed, engPostfix, "the wirespeed sink counted 2 messages, the postfix source delivered 3"},
	} {
		dir := fakeTools{source: `{"delivered":3,"errors":0}`, sinkMsgs: 2}.write(t)
		cfg := cfg
		cfg.exe, cfg.pfSource = filepath.Join(dir, "wirespeed"), filepath.Join(dir, "smtp-source")
		cfg.pfSink = fakePostfixSink(t, dir, false)
		cfg.sinks, cfg.sources = []string{c.sink}, []string{c.source}
		rows := benchSMTP(context.Background(), cfg, io.Discard)
		if len(rows) != 1 || rows[0].Runs != 0 || rows[0].MsgPerS != 0 || rows[0].Err != c.want {
			t.Errorf("%s: rows %+v; want one not measured, error %q", c.name, rows, c.want)
		}
	}

	// wirespeed's sink exiting at once fails the run at once, with what
	// it said (it waited 20 s for "listening on").
	dir := fakeTools{source: `{"delivered":3,"errors":0}`, sinkMsgs: 3, sinkExits: true}.write(t)
	cfg.exe = filepath.Join(dir, "wirespeed")
	cfg.sinks, cfg.sources = []string{engWirespeed}, []string{engWirespeed}
	rows := benchSMTP(context.Background(), cfg, io.Discard)
	if want := "wirespeed smtp-sink exited before it listened: exit status 2: smtp-sink: -engine: bad value"; len(rows) != 1 || rows[0].Runs != 0 || rows[0].Err != want {
		t.Errorf("sink exiting: rows %+v; want one not measured, error %q", rows, want)
	}
}

// A row's rate is of the messages delivered: a run of -m 4 whose source
// counted errors and delivered 1 read 4 msg/s over its second (the
// messages asked for), as if all had gone. A run that delivered none is
// no measurement.
func TestSMTPRateFromDelivered(t *testing.T) {
	clock := time.Unix(0, 0)
	cfg := smtpConfig{sessions: 1, count: 1, sizes: []smtpSize{{"4KiB", 4096, 4}}, serverCPU: -1, clientCPU: -1,
		sinks: []string{engWirespeed}, sources: []string{engWirespeed},
		now: func() time.Time { clock = clock.Add(time.Second); return clock }} // each run: 1 s

	dir := fakeTools{source: `{"delivered":1,"errors":3,"rejections":3,"first_error":"550 no"}`, sinkMsgs: 1}.write(t)
	cfg.exe = filepath.Join(dir, "wirespeed")
	rows := benchSMTP(context.Background(), cfg, io.Discard)
	if len(rows) != 1 {
		t.Fatalf("rows %+v", rows)
	}
	r := rows[0]
	if r.Runs != 1 || r.Delivered != 1 || r.MsgPerS != 1 || r.MBPerS != 4096/1e6 || r.Errors != 3 || r.Err != "wirespeed smtp-source: 550 no" {
		t.Errorf("row %+v; want 1 run of 1 message delivered in 1 s: 1 msg/s, with its 3 errors", r)
	}
	var table bytes.Buffer
	if err := printSMTPTable(&table, cfg, rows, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^4KiB +wirespeed +wirespeed +1 +0\.0 `).MatchString(table.String()) {
		t.Errorf("table does not show 1 msg/s:\n%s", table.String())
	}

	dir = fakeTools{source: `{"delivered":0,"errors":4,"rejections":4,"first_error":"550 no"}`, sinkMsgs: 0}.write(t)
	cfg.exe = filepath.Join(dir, "wirespeed")
	rows = benchSMTP(context.Background(), cfg, io.Discard)
	if want := "wirespeed smtp-source delivered no message: 550 no"; len(rows) != 1 || rows[0].Runs != 0 || rows[0].MsgPerS != 0 || rows[0].Err != want {
		t.Errorf("nothing delivered: rows %+v; want one not measured, error %q", rows, want)
	}
}

// A row is the median of its runs that were measured: with -count 3 and a
// run failed, the header read "median of 3 run(s) a row" over a median of
// 2 (only -json's runs said so), and a row whose every run failed carried
// figures of 0 in -json (messages_per_s, delivered, CPU and RSS), read by
// a script as measured.
func TestSMTPRowRuns(t *testing.T) {
	run := func(t *testing.T, f fakeTools, count string) (rep smtpReport, table, js string) {
		t.Helper()
		dir := f.write(t)
		args := []string{"-exe", filepath.Join(dir, "wirespeed"), "-postfix=false", "-sinks", "wirespeed", "-sources", "wirespeed",
			"-m4k", "3", "-m1m", "0", "-lat-m", "0", "-server-cpu", "-1", "-client-cpu", "-1", "-count", count}
		var jsOut, tableOut, errOut bytes.Buffer
		if err := RunSMTP(context.Background(), append(args, "-json"), &jsOut, &errOut); err == nil {
			t.Errorf("a failed run, exit status 0")
		}
		if err := json.Unmarshal(jsOut.Bytes(), &rep); err != nil || len(rep.Rows) != 1 {
			t.Fatalf("%v:\n%s", err, jsOut.String())
		}
		os.Remove(filepath.Join(dir, "source-runs"))
		if err := RunSMTP(context.Background(), args, &tableOut, &errOut); err == nil {
			t.Errorf("a failed run, exit status 0")
		}
		return rep, tableOut.String(), jsOut.String()
	}
	good := `{"delivered":3,"errors":0}`

	// One of three runs failed: the row is the median of two, and says so.
	rep, table, _ := run(t, fakeTools{source: good, sinkMsgs: 3, sourceFails: 1}, "3")
	fail := "wirespeed smtp-source: exit status 2: smtp-source: run 1 failed"
	if r := rep.Rows[0]; r.Runs != 2 || r.FailedRuns != 1 || r.Err != fail || r.MsgPerS <= 0 {
		t.Errorf("row %+v; want 2 runs measured, 1 failed", r)
	}
	if !strings.Contains(table, "median of 3 run(s) a row (of fewer where said below);") ||
		!strings.Contains(table, "\n4KiB wirespeed source into wirespeed sink: median of 2 run(s), not 3 (1 failed); "+fail+"\n") {
		t.Errorf("table does not say the row is the median of 2:\n%s", table)
	}

	// Every run failed: no figures in -json.
	rep, table, js := run(t, fakeTools{source: good, sinkMsgs: 3, sourceFails: 9}, "2")
	if r := rep.Rows[0]; r.Runs != 0 || r.FailedRuns != 2 || r.Err != fail {
		t.Errorf("row %+v; want none measured, 2 failed", r)
	}
	if !strings.Contains(table, "median of 2 run(s) a row;") || !strings.Contains(table, "\n4KiB wirespeed source into wirespeed sink: "+fail+"\n") {
		t.Errorf("table:\n%s", table)
	}
	var raw struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal([]byte(js), &raw); err != nil || len(raw.Rows) != 1 {
		t.Fatalf("%v:\n%s", err, js)
	}
	for k := range raw.Rows[0] {
		if !slices.Contains([]string{"size", "length", "sink", "source", "sessions", "messages", "runs", "failed_runs", "error"}, k) {
			t.Errorf("a row with no run measured has %q in -json:\n%s", k, js)
		}
	}
}

// A run of Postfix's smtp-source counts as delivering all of its -m
// messages when it exits 0. That holds because, without -A (which bench
// does not give), it exits 1 at the first reply other than the one it
// expects, end of data's included, or at a lost connection or a timeout:
// a sink (played here) refusing the second of three messages fails the
// run, with what smtp-source said. (Its output says no more: it prints
// nothing on success, and -c counts DATA commands sent, not accepted.)
func TestPostfixSourceRefused(t *testing.T) {
	pf := postfixTool("smtp-source")
	if pf == "" {
		tooltest.Unavailable(t, "Postfix's smtp-source is not installed (apt-get install postfix)")
	}
	for _, refuse := range []int{0, 2} { // 0: none refused
		dir := t.TempDir()
		cfg := smtpConfig{sessions: 1, count: 1, sizes: []smtpSize{{"4KiB", 4096, 3}}, serverCPU: -1, clientCPU: -1,
			sinks: []string{engPostfix}, sources: []string{engPostfix}, pfSink: fakePostfixSink(t, dir, false), pfSource: pf}
		n := 0 // messages ended, over the sessions
		playSinkWith(t, dir, func(c net.Conn, host string) {
			defer c.Close()
			c.SetDeadline(time.Now().Add(time.Minute))
			c.Write([]byte("220 " + host + " ESMTP\r\n"))
			r := bufio.NewReader(c)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				reply := "250 ok"
				switch cmd := strings.ToUpper(strings.Fields(line + " x")[0]); cmd {
				case "QUIT":
					c.Write([]byte("221 bye\r\n"))
					return
				case "DATA":
					c.Write([]byte("354 go on\r\n"))
					for line != ".\r\n" {
						if line, err = r.ReadString('\n'); err != nil {
							return
						}
					}
					if n++; n == refuse {
						reply = "451 4.3.0 try again later"
					}
				}
				c.Write([]byte(reply + "\r\n"))
			}
		})
		rows := benchSMTP(context.Background(), cfg, io.Discard)
		if len(rows) != 1 {
			t.Fatalf("rows %+v", rows)
		}
		r := rows[0]
		if refuse == 0 && (r.Runs != 1 || r.Err != "" || r.Delivered != 3) {
			t.Errorf("none refused: row %+v; want 1 run measured, 3 delivered", r)
		}
		if refuse > 0 && (r.Runs != 0 || r.FailedRuns != 1 || !strings.Contains(r.Err, "Postfix smtp-source: exit status 1: ") || !strings.Contains(r.Err, "451 4.3.0 try again later")) {
			t.Errorf("message %d refused: row %+v; want a failed run saying so", refuse, r)
		}
	}
}

// A latency-honesty check or a TLS ceiling that failed has no figures in
// -json: its p50s, difference and ratio (the ceiling's ratios, AES rates
// and runs) read 0 beside its error, as if measured.
func TestSMTPFailedChecksNoFigures(t *testing.T) {
	// The source's result has no phases (no end-of-data latencies); bench
	// tlspipe's writer prints no result.
	dir := fakeTools{source: `{"delivered":3,"errors":0}`, sinkMsgs: 3}.write(t)
	exe := filepath.Join(dir, "wirespeed")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("\nesac\n"), []byte("\nbench) echo 'listening on 127.0.0.1:9';;\nesac\n"), 1)
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	err = RunSMTP(context.Background(), []string{"-exe", exe, "-postfix=false", "-sinks", "wirespeed,wirespeed-tls", "-sources", "wirespeed,wirespeed-tls",
		"-m4k", "0", "-m1m", "3", "-lat-m", "3", "-server-cpu", "-1", "-client-cpu", "-1", "-json"}, &out, &errOut)
	if err == nil {
		t.Errorf("failed checks, exit status 0")
	}
	var rep struct {
		Honesty map[string]any `json:"latency_honesty"`
		TLS     map[string]any `json:"tls_ceiling"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	for name, c := range map[string]struct {
		got  map[string]any
		keys []string
	}{
		"latency_honesty": {rep.Honesty, []string{"delay_us", "sessions", "messages", "error"}},
		"tls_ceiling":     {rep.TLS, []string{"sessions", "mib", "error"}},
	} {
		if c.got["error"] == nil {
			t.Errorf("%s did not fail: %v", name, c.got)
		}
		for k := range c.got {
			if !slices.Contains(c.keys, k) {
				t.Errorf("failed %s has %q in -json: %v", name, k, c.got)
			}
		}
	}
}

// A tlspipe reader that exits before it listens (a bad flag, a port in
// use) fails the run at once, with what it said: bench waited 20 s for
// its "listening on".
func TestTLSPipeReaderExits(t *testing.T) {
	dir := fakeTools{source: `{"delivered":3,"errors":0}`, sinkMsgs: 3}.write(t)
	exe := filepath.Join(dir, "wirespeed")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("\nesac\n"), []byte("\nbench) echo 'tlspipe: -listen: address in use' >&2; exit 2;;\nesac\n"), 1)
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := smtpConfig{exe: exe, sessions: 1, serverCPU: -1, clientCPU: -1}
	_, err = runTLSPipe(context.Background(), cfg, "plain", 1)
	if want := "reader exited before it listened: exit status 2: tlspipe: -listen: address in use"; err == nil || err.Error() != want {
		t.Errorf("runTLSPipe: %v, want %q", err, want)
	}
}

// A TLS ceiling that bench's interruption cut short says so, not what
// the killed reader or writer said ("signal: killed").
func TestTLSCeilingInterrupted(t *testing.T) {
	dir := fakeTools{source: `{"delivered":3,"errors":0}`, sinkMsgs: 3}.write(t)
	exe := filepath.Join(dir, "wirespeed")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("\nesac\n"), []byte("\nbench) exec sleep 600;;\nesac\n"), 1)
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// Interrupted as its first run starts (its progress line).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := writerFunc(func(p []byte) (int, error) { cancel(); return len(p), nil })
	cfg := smtpConfig{exe: exe, sessions: 1, count: 1, serverCPU: -1, clientCPU: -1}
	c := smtpTLSCeilingRuns(ctx, cfg, 1, progress)
	if want := "plain: interrupted"; c.Err != want {
		t.Errorf("interrupted ceiling: error %q, want %q", c.Err, want)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

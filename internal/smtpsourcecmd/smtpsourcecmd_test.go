package smtpsourcecmd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/tooltest"
	"github.com/wirespeed/wirespeed/smtpsource"
	"github.com/wirespeed/wirespeed/textproto"
)

// sink is a minimal SMTP server on 127.0.0.1:0 that offers PIPELINING,
// takes every message and, before it answers, logs the digest of each to
// log as a sink does: "<hex md5> <bytes> <n>". It does not offer SIZE:
// ours would send SIZE= (Postfix's smtp-source never does), and
// TestSameAsPostfix compares the two clients' commands.
type sink struct {
	mu   sync.Mutex
	log  io.Writer
	n    int
	cmds []string // the command lines, over all connections
	// holdQuit, if set, is called at QUIT, which then gets no reply.
	holdQuit func()
}

func (s *sink) start(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); defer c.Close(); s.serve(c) }()
		}
	}()
	return ln.Addr().String()
}

func (s *sink) serve(c net.Conn) {
	tr := textproto.NewReader(bufio.NewReader(c))
	w := bufio.NewWriter(c)
	say := func(line string) {
		w.WriteString(line + "\r\n")
		if tr.R.Buffered() == 0 {
			w.Flush()
		}
	}
	say("220 sink ESMTP")
	for {
		line, err := tr.ReadLine()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.cmds = append(s.cmds, line)
		s.mu.Unlock()
		switch verb, _, _ := strings.Cut(strings.ToUpper(line), " "); verb {
		case "EHLO":
			say("250-sink\r\n250 PIPELINING")
		case "DATA":
			say("354 go ahead")
			data, err := io.ReadAll(tr.DotReaderMode(dot.Raw))
			if err != nil {
				return
			}
			s.mu.Lock()
			if s.log != nil {
				fmt.Fprintf(s.log, "%x %d %d\n", md5.Sum(data), len(data), s.n)
			}
			s.n++
			s.mu.Unlock()
			say("250 2.0.0 queued")
		case "QUIT":
			if s.holdQuit != nil {
				s.holdQuit()
				io.Copy(io.Discard, c) // until the client closes
				return
			}
			say("221 bye")
			return
		default:
			say("250 ok")
		}
	}
}

// The flags reach smtpsource.Config, -json prints the Result, -hdr-log
// writes a log. Counts are asserted, not rates.
func TestRunJSON(t *testing.T) {
	var s sink
	addr := s.start(t)
	dir := t.TempDir()
	hdr := filepath.Join(dir, "hdr.log")
	var out, errb bytes.Buffer
	args := []string{"-s", "2", "-m", "10", "-l", "500", "-d", "-r", "2", "-pipelining", "-body", "mail", "-json", "-q", "-hdr-log", hdr, addr}
	if err := Run(context.Background(), args, &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var res smtpsource.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	if res.Sessions != 2 || res.Messages != 10 || res.Length != 500 || res.Recipients != 2 || !res.Pipelining || res.Connections != 2 || res.Delivered != 10 || res.Errors != 0 {
		t.Errorf("flags not passed on: %+v", res)
	}
	if res.Phases.Message == nil || res.Phases.Message.Count != 10 || res.Replies["rcpt"][250] != 20 {
		t.Errorf("phases %+v, replies %v", res.Phases, res.Replies)
	}
	if errb.Len() != 0 {
		t.Errorf("-q printed progress: %q", errb.String())
	}
	if fi, err := os.Stat(hdr); err != nil || fi.Size() == 0 {
		t.Errorf("hdr log: %v, %v", fi, err)
	}

	// Open loop: every message of the schedule starts, and its lateness is
	// recorded.
	out.Reset()
	args = []string{"-s", "2", "-m", "20", "-qps", "2000", "-d", "-json", "-q", addr}
	if err := Run(context.Background(), args, &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	res = smtpsource.Result{}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	if res.TargetQPS != 2000 || res.Delivered != 20 || res.Lateness == nil || res.Lateness.Count != 20 || res.Errors != 0 {
		t.Errorf("open loop: %+v", res)
	}
}

// Without -q the run's progress lines go to standard error, through the
// whole path from the flags: a line a second, and one at the end, which
// a run shorter than a second has alone; the end's has every message.
// Their content at each second is TestProgressLastStretch's (smtpsource,
// on a fake clock); here the format and the end's counts.
func TestRunProgress(t *testing.T) {
	var s sink
	addr := s.start(t)
	var out, errb bytes.Buffer
	if err := Run(context.Background(), []string{"-m", "4", "-d", "-l", "100", addr}, &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	line := regexp.MustCompile(`^ *[0-9]+\.[0-9]s  delivered +([0-9]+) +([0-9]+|-) msg/s  p50 [^ ]+  p99 [^ ]+  max [^ ]+  failed ([0-9]+)  errors ([0-9]+)$`)
	lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
	for _, l := range lines {
		if !line.MatchString(l) {
			t.Errorf("not a progress line: %q", l)
		}
	}
	last := line.FindStringSubmatch(lines[len(lines)-1])
	if last == nil || last[1] != "4" || last[3] != "0" || last[4] != "0" {
		t.Errorf("the last progress line %q: want 4 delivered, 0 failed, 0 errors", lines[len(lines)-1])
	}
	if !strings.Contains(out.String(), "delivered") {
		t.Errorf("no result on standard output: %q", out.String())
	}
}

// -v shows the conversations on standard error, as smtp-source -v: each
// connection's commands and replies, numbered by connection.
func TestRunVerbose(t *testing.T) {
	var s sink
	addr := s.start(t)
	var out, errb bytes.Buffer
	if err := Run(context.Background(), []string{"-v", "-q", "-s", "1", "-m", "2", "-l", "100", addr}, &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	for _, want := range []string{"1 < \"220 ", "1 > \"MAIL FROM:<", "2 > \"DATA\\r\\n\"", "2 < \"221 ", "2 > \"QUIT\\r\\n\""} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("-v: no %q in %q", want, errb.String())
		}
	}
}

// -verify compares the messages a run delivered with the digest log the
// sink wrote meanwhile: all match; the messages of another run in the log
// are reported. -c prints smtp-source's counter before the result.
func TestVerifyAndCounter(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "digests")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := sink{log: f}
	addr := s.start(t)
	ctx := context.Background()
	var out, errb bytes.Buffer
	args := []string{"-s", "3", "-m", "12", "-l", "3000", "-d", "-body", "mail", "-pipelining", "-c", "-q", "-M", "client.test", "-verify", logPath, addr}
	if err := Run(ctx, args, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	o := out.String()
	if !strings.HasPrefix(o, "1\r2\r3\r4\r5\r6\r7\r8\r9\r10\r11\r12\r\nSMTP, 3 sessions, closed loop, pipelining, 12 messages, -l 3000") {
		t.Errorf("-c output:\n%q", o)
	}
	if !strings.Contains(o, "errors 0 ") || !strings.Contains(o, "verify: ok: 12 matched, 0 delivered but not logged, 0 logged but not delivered") {
		t.Errorf("output:\n%s", o)
	}
	// The log now holds the 12 messages of the last run and the 2 of this
	// one: the 12 are not this run's (their Message-Ids differ).
	out.Reset()
	args = []string{"-m", "2", "-l", "3000", "-d", "-body", "mail", "-json", "-q", "-M", "client.test", "-verify", logPath, addr}
	err = Run(ctx, args, &out, &errb)
	if status, print := cli.Status(err); status != 1 || print {
		t.Errorf("mismatch: %v", err)
	}
	var v struct {
		Delivered int64                   `json:"delivered"`
		Verify    smtpsource.Verification `json:"verify"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Delivered != 2 || v.Verify.Matched != 2 || v.Verify.Missing != 0 || v.Verify.Unexpected != 12 {
		t.Errorf("verify against a log of other messages: %+v %v", v, err)
	}
	// A log in a directory that is not there is refused before the run;
	// one missing after the run is an error, after the result.
	if err := Run(ctx, []string{"-m", "1", "-q", "-verify", filepath.Join(dir, "nodir", "log"), addr}, &out, &errb); !errors.Is(err, cli.ErrUsage) {
		t.Errorf("-verify in no directory: %v, want a usage error", err)
	}
	out.Reset()
	err = Run(ctx, []string{"-m", "1", "-q", "-verify", filepath.Join(dir, "nolog"), addr}, &out, &errb)
	if status, _ := cli.Status(err); status != 1 || !errors.Is(err, os.ErrNotExist) || !strings.Contains(out.String(), "delivered 1 of 1") {
		t.Errorf("-verify with no log: %v; output %q", err, out.String())
	}
}

// A run that a fatal refusal stops (here STARTTLS, which the server does
// not offer) prints its result so far before the error; it printed
// nothing, so what had been delivered was lost.
func TestFatalStopPrintsResult(t *testing.T) {
	var s sink
	addr := s.start(t)
	var out, errb bytes.Buffer
	err := Run(context.Background(), []string{"-m", "2", "-q", "-tls", addr}, &out, &errb)
	if status, print := cli.Status(err); !errors.Is(err, smtpsource.ErrStartTLS) || status != 1 || !print {
		t.Errorf("%v (status %d), want ErrStartTLS", err, status)
	}
	if !strings.Contains(out.String(), "delivered 0 of ") {
		t.Errorf("no result before the error:\n%s", out.String())
	}
}

func TestRunErrors(t *testing.T) {
	var out, errb bytes.Buffer
	ctx := context.Background()
	err := Run(ctx, []string{"-nosuchflag"}, &out, &errb)
	if status, print := cli.Status(err); status != 2 || print {
		t.Errorf("bad flag: %v (status %d)", err, status)
	}
	for _, args := range [][]string{{}, {"-q"}} {
		if status, print := cli.Status(Run(ctx, args, &out, &errb)); status != 2 || !print {
			t.Errorf("%q: no address: status %d", args, status)
		}
	}
	err = Run(ctx, []string{"a:1", "b:2"}, &out, &errb)
	if status, print := cli.Status(err); status != 2 || !print {
		t.Errorf("two addresses: %v (status %d)", err, status)
	}
	for _, bad := range []string{"-m", "-s", "-r"} {
		if err := Run(ctx, []string{bad, "0", "-q", "127.0.0.1:1"}, &out, &errb); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("%s 0: %v, want a usage error, as Postfix's smtp-source", bad, err)
		}
	}
	for _, bad := range [][]string{{"-chunk-size", "0"}, {"-chunk-size", "-1"}, {"-C", "0"}, {"-C", "-1"}, {"-T", "-1"}, {"-T", "2147483648"}} {
		err := Run(ctx, append(bad, "-chunking", "-q", "127.0.0.1:1"), &out, &errb)
		if status, _ := cli.Status(err); status != 2 || !strings.Contains(err.Error(), bad[0]+" ") {
			t.Errorf("%q: %v (status %d), want a usage error naming the flag", bad, err, status)
		}
	}
	for _, bad := range []string{"-timeout", "-dial-timeout"} {
		if err := Run(ctx, []string{bad, "0s", "-q", "127.0.0.1:1"}, &out, &errb); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("%s 0: %v, want a usage error, not the default", bad, err)
		}
	}
	// -s past MaxSessions (a billion goroutines with -duration) names -s
	// (old: ran).
	err = Run(ctx, []string{"-s", "100001", "-m", "1", "-dial-timeout", "1s", "-q", "127.0.0.1:1"}, &out, &errb)
	if status, _ := cli.Status(err); status != 2 || !strings.Contains(err.Error(), "-s ") {
		t.Errorf("-s 100001: %v (status %d), want a usage error naming -s", err, status)
	}
	// A server address or -metrics address no dial or listen could use
	// is a usage error (it was the dial's or listen's error, exit 1):
	// port 0 too (it dialled it, "connection refused").
	for _, bad := range [][]string{{"127.0.0.1:99999"}, {"127.0.0.1:nosuchservice"}, {"127.0.0.1:"}, {"127.0.0.1:0"}, {"inet:[::1]:00"}, {"unix:"}, {"inet:"}, {""}, {"-metrics", "127.0.0.1:99999", "127.0.0.1:1"}} {
		err := Run(ctx, append([]string{"-q", "-dial-timeout", "1s"}, bad...), &out, &errb)
		name := "server address"
		if bad[0] == "-metrics" {
			name = "-metrics"
		}
		if status, _ := cli.Status(err); status != 2 || !strings.Contains(err.Error(), name) {
			t.Errorf("%q: %v (status %d), want a usage error naming the %s", bad, err, status, name)
		}
	}
	for _, good := range []string{"::1", "[::1]", "[::1]:25", "mx.example", "mx.example:smtp", "inet:127.0.0.1:1", "unix:/nonexistent/s"} {
		if err := checkServerAddr(good); err != nil {
			t.Errorf("%q: %v, want no error", good, err)
		}
	}
	// -verify of a directory is a usage error before the run (it ran,
	// then could not read the log); -hdr-log's error names it.
	dir := t.TempDir()
	if err := Run(ctx, []string{"-q", "-verify", dir, "127.0.0.1:1"}, &out, &errb); !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), "-verify") {
		t.Errorf("-verify DIR: %v, want a usage error naming -verify", err)
	}
	if err := Run(ctx, []string{"-q", "-hdr-log", filepath.Join(dir, "none", "h.log"), "127.0.0.1:1"}, &out, &errb); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "-hdr-log") {
		t.Errorf("-hdr-log in no directory: %v, want ErrNotExist naming -hdr-log", err)
	}
	// A negative time names its flag (-duration's was Config.Check's
	// "negative rate or time"), and so does a -spin of 0, which Config
	// took for its default, 30µs (it spun with -spin 0).
	for _, bad := range [][]string{{"-timeout", "-1s"}, {"-dial-timeout", "-1s"}, {"-duration", "-1s"}, {"-qps", "5", "-spin", "-1us"}, {"-qps", "5", "-spin", "0"}, {"-qps", "5/1s", "-spin", "0s"}} {
		err := Run(ctx, append(bad, "-q", "127.0.0.1:1"), &out, &errb)
		if status, _ := cli.Status(err); status != 2 || !strings.Contains(err.Error(), bad[len(bad)-2]+" ") {
			t.Errorf("%q: %v (status %d), want a usage error naming the flag", bad, err, status)
		}
	}
	err = Run(ctx, []string{"-body", "html", "-q", "127.0.0.1:1"}, &out, &errb)
	if !errors.Is(err, smtpsource.ErrConfig) {
		t.Errorf("bad body: %v, want smtpsource.ErrConfig", err)
	}
	err = Run(ctx, []string{"-body", "file:/nonexistent/x", "-q", "127.0.0.1:1"}, &out, &errb)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing body file: %v", err)
	}
	err = Run(ctx, []string{"-q", tooltest.RefusingAddr(t)}, &out, &errb)
	if status, print := cli.Status(err); !errors.Is(err, smtpsource.ErrConnect) || status != 1 || !print {
		t.Errorf("refused: %v (status %d)", err, status)
	}
}

func TestPrint(t *testing.T) {
	l := func(n int64, p50 float64) *smtpsource.Latency {
		return &smtpsource.Latency{Count: n, P50: p50, P90: 2 * p50, P99: 3 * p50, P999: 4 * p50, Max: 5 * p50, Mean: 1.5 * p50}
	}
	r := &smtpsource.Result{Proto: "smtp", Sessions: 10, Messages: 100, Length: 4096, Recipients: 1, TargetQPS: 50, Pipelining: true, DurationS: 2,
		TLSMode: "starttls", AuthMech: "PLAIN", TLS: &smtpsource.TLSStats{Handshakes: 10, Resumed: 9,
			Versions: map[string]int64{"TLS 1.3": 9, "TLS 1.2": 1}, CipherSuites: map[string]int64{"TLS_AES_128_GCM_SHA256": 9, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": 1}},
		Started: 100, Delivered: 99, Failed: 1, Connections: 10, MsgPerS: 49.5, MBPerS: 0.21,
		Replies: map[string]map[int]int64{"mail": {250: 99, 451: 1}, "banner": {220: 10}, "xclient": {250: 1}},
		Phases:  smtpsource.Phases{Connect: l(10, 50), TLS: l(10, 800), Auth: l(10, 100), Mail: l(100, 20), Message: l(99, 300), Failed: l(1, 20)}, Lateness: l(100, 1),
		Errors: 3, ConnectRefusals: 2, Rejections: 1, FirstError: "mail: 451 try later"}
	var b bytes.Buffer
	if err := Print(&b, r, &smtpsource.Verification{Matched: 98, Missing: 1}); err != nil {
		t.Fatal(err)
	}
	want := `SMTP, 10 sessions, open loop at 50 msg/s, pipelining, STARTTLS, AUTH PLAIN, 100 messages, -l 4096, 1 recipients each, 2.000s
delivered 99 of 100 started (failed 1), 50 msg/s, 0.21 MB/s, 10 connections
        µs  count    p50     p90     p99   p99.9     max    mean
   connect     10   50.0   100.0   150.0   200.0   250.0    75.0
       tls     10  800.0  1600.0  2400.0  3200.0  4000.0  1200.0
      auth     10  100.0   200.0   300.0   400.0   500.0   150.0
      mail    100   20.0    40.0    60.0    80.0   100.0    30.0
   message     99  300.0   600.0   900.0  1200.0  1500.0   450.0
    failed      1   20.0    40.0    60.0    80.0   100.0    30.0
  lateness    100    1.0     2.0     3.0     4.0     5.0     1.5
(lateness: start minus intended start, the tool's own floor when sessions are free; message latency counts from the intended start)
replies: banner 220×10; mail 250×99 451×1; xclient 250×1
tls: TLS 1.2×1 TLS 1.3×9; TLS_AES_128_GCM_SHA256×9 TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256×1; 10 handshakes, 9 resumed
errors 3 (connect 0, connect refusals 2, i/o 0, protocol 0, rejections 1)
first error: mail: 451 try later
verify: MISMATCH: 98 matched, 1 delivered but not logged, 0 logged but not delivered
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// -F FILE (and -body file:FILE) sends the file as the whole message, its
// lines ended with CRLF.
func TestMessageFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "msg")
	os.WriteFile(path, []byte("Subject: x\n\n.hello\n"), 0o644)
	want := fmt.Sprintf("%x %d", md5.Sum([]byte("Subject: x\r\n\r\n.hello\r\n")), len("Subject: x\r\n\r\n.hello\r\n"))
	for _, flag := range [][]string{{"-F", path}, {"-body", "file:" + path}} {
		var log bytes.Buffer
		s := sink{log: &log}
		addr := s.start(t)
		var out, errb bytes.Buffer
		if err := Run(context.Background(), append(flag, "-q", addr), &out, &errb); err != nil {
			t.Fatalf("%q: %v\n%s", flag, err, out.String())
		}
		s.mu.Lock()
		got := log.String()
		s.mu.Unlock()
		if !strings.HasPrefix(got, want+" ") {
			t.Errorf("%q: the sink logged %q, want %q", flag, got, want)
		}
	}
}

// smtp-source's other flags reach smtpsource.Config: -N numbers the
// recipients, -o sends no EHLO and no header, -4, -C, -T and -w are
// taken; -4 with -6 and a bad -w are usage errors.
func TestPostfixFlags(t *testing.T) {
	var log bytes.Buffer
	s := sink{log: &log}
	addr := s.start(t)
	var out, errb bytes.Buffer
	args := []string{"-N", "-o", "-r", "2", "-m", "3", "-l", "100", "-d", "-4", "-C", "2", "-T", "16384", "-w", "0.001", "-json", "-q", addr}
	if err := Run(context.Background(), args, &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var res smtpsource.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Delivered != 3 || res.RcptOK != 6 || res.Errors != 0 || res.Replies["ehlo"] != nil {
		t.Fatalf("%+v, %v", res, err)
	}
	s.mu.Lock()
	cmds := strings.Join(s.cmds, "|")
	s.mu.Unlock()
	for n := 1; n <= 6; n++ {
		if !strings.Contains(cmds, fmt.Sprintf("RCPT TO:<%dfoo@", n)) {
			t.Errorf("no recipient %d: %s", n, cmds)
		}
	}
	if strings.Contains(cmds, "EHLO") || !strings.HasPrefix(cmds, "MAIL FROM:") {
		t.Errorf("-o: commands %s", cmds)
	}
	// -f '' is the null sender, as with Postfix's smtp-source; it was
	// foo@<host>.
	s.mu.Lock()
	s.cmds = nil
	s.mu.Unlock()
	if err := Run(context.Background(), []string{"-f", "", "-m", "1", "-q", addr}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	cmds = strings.Join(s.cmds, "|")
	s.mu.Unlock()
	if !strings.Contains(cmds, "|MAIL FROM:<>|") && !strings.Contains(cmds, "|MAIL FROM:<> ") {
		t.Errorf("-f '': commands %s", cmds)
	}
	// -o: the body alone, as smtp-source -l 100 makes it.
	body := "1" + strings.Repeat("X", 77) + "\r\n" + strings.Repeat("X", 20) + "\r\n"
	want := fmt.Sprintf("%x %d ", md5.Sum([]byte(body)), len(body))
	if !strings.HasPrefix(log.String(), want) {
		t.Errorf("the sink logged %q, want %q...", log.String(), want)
	}
	for _, bad := range [][]string{{"-4", "-6", addr}, {"-w", "soon", addr}, {"-R", "-1", addr}, {"-w", "NaN", addr}} {
		errb.Reset()
		if status, _ := cli.Status(Run(context.Background(), bad, &out, &errb)); status != 2 {
			t.Errorf("%q: status %d, want 2", bad, status)
		}
		if bad[0] == "-w" && bad[1] == "NaN" && !strings.Contains(errb.String(), `"NaN": want 0 to 1e9 seconds`) {
			t.Errorf("%q: %q", bad, errb.String())
		}
	}
}

// -tls against a server that does not offer STARTTLS ends the run with an
// error that says so (status 1); the TLS and AUTH flags that cannot work
// together are usage errors, a CA file without a certificate an error.
func TestTLSFlags(t *testing.T) {
	var s sink
	addr := s.start(t)
	ctx := context.Background()
	var out, errb bytes.Buffer
	err := Run(ctx, []string{"-tls", "-q", "-m", "3", addr}, &out, &errb)
	if status, print := cli.Status(err); !errors.Is(err, smtpsource.ErrStartTLS) || status != 1 || !print || !strings.Contains(err.Error(), "does not offer it") {
		t.Errorf("-tls without STARTTLS: %v (status %d)", err, status)
	}
	s.mu.Lock()
	cmds := strings.Join(s.cmds, "|")
	s.mu.Unlock()
	if strings.Contains(cmds, "MAIL") || !strings.HasSuffix(cmds, "QUIT") {
		t.Errorf("commands %s", cmds)
	}
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(notPEM, []byte("not a certificate\n"), 0o644)
	for _, c := range []struct {
		args  []string
		usage bool
	}{
		{[]string{"-tls-insecure", addr}, true},
		{[]string{"-tls-resume", addr}, true},
		{[]string{"-tls", "-tls-implicit", addr}, true},
		{[]string{"-tls", "-tls-insecure", "-tls-ca", notPEM, addr}, true},
		{[]string{"-tls", "-tls-ca", notPEM, addr}, false},
		{[]string{"-tls", "-tls-ca", "/nonexistent/ca.pem", addr}, false},
		{[]string{"-auth", "nocolon", addr}, true},
		{[]string{"-auth", "u:p", "-auth-mech", "DIGEST-MD5", addr}, true},
		{[]string{"-auth-mech", "LOGIN", addr}, true},
	} {
		err := Run(ctx, append([]string{"-q"}, c.args...), &out, &errb)
		status, _ := cli.Status(err)
		if err == nil || (status == 2) != c.usage {
			t.Errorf("%q: %v (status %d), usage error %v", c.args, err, status, c.usage)
		}
	}
}

// A run cancelled with messages under way (here, against a server that
// never greets) abandons them, and is no success: the exit status is 1,
// as the docs say ("1 if anything failed"), even with no error counted.
func TestCancelledExitStatus(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// run runs the command with args, cancelled once the server has
	// accepted its connection, whose session waits for a greeting that
	// never comes.
	run := func(args ...string) (string, int) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			cancel()
			io.Copy(io.Discard, c)
		}()
		var out, errb bytes.Buffer
		status, _ := cli.Status(Run(ctx, append(args, ln.Addr().String()), &out, &errb))
		return out.String(), status
	}
	if out, status := run("-q", "-m", "1"); status != 1 || !strings.Contains(out, "\nabandoned 1: ") || !strings.Contains(out, "\ninterrupted: ") {
		t.Fatalf("cancelled: status %d\n%s", status, out)
	}
	// With -d the sessions connect first: stopped waiting for a
	// greeting, the run has started nothing and failed nothing, and is
	// still no success (it exited 0, "delivered 0 of 0 started").
	if out, status := run("-q", "-d", "-m", "5", "-json"); status != 1 || !strings.Contains(out, `"interrupted":true`) {
		t.Fatalf("cancelled while connecting: status %d\n%s", status, out)
	}
}

// A run interrupted (SIGINT is a cancelled context here) while its
// sessions wait for QUIT's reply, every message delivered, says so and
// exits 1, as any other interrupted run: it exited 0, though QUIT's
// reply counts (a server that closes instead is an error) and was never
// read.
func TestInterruptedAtQuit(t *testing.T) {
	for _, c := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"-m", "1"}, []string{"delivered 1 of 1 started (failed 0)", "\ninterrupted: "}, []string{"abandoned"}},
		{[]string{"-d", "-m", "2", "-json"}, []string{`"delivered":2,`, `"interrupted":true`}, []string{`"abandoned"`, `"error"`}},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		s := sink{holdQuit: cancel}
		addr := s.start(t)
		var out, errb bytes.Buffer
		err := Run(ctx, append(append([]string{"-q"}, c.args...), addr), &out, &errb)
		cancel()
		if status, _ := cli.Status(err); status != 1 {
			t.Errorf("%q: %v (status %d), want status 1", c.args, err, status)
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%q: no %q in\n%s", c.args, w, out.String())
			}
		}
		for _, w := range c.not {
			if strings.Contains(out.String(), w) {
				t.Errorf("%q: %q in\n%s", c.args, w, out.String())
			}
		}
	}
}

// A rate below 1 a second is printed as given, not rounded to 0, and
// missed messages get a line.
func TestPrintSlowRate(t *testing.T) {
	var b bytes.Buffer
	r := &smtpsource.Result{Proto: "smtp", Sessions: 1, Recipients: 1, TargetQPS: 0.5, DurationS: 4, Started: 2, Delivered: 2, Missed: 3}
	if err := Print(&b, r, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"open loop at 0.5 msg/s", "\nmissed 3: "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

// -json prints one JSON object on every run past the flags: a run that
// opens no connection (ErrConnect comes without a result) and one whose
// -F file cannot be sent printed nothing; they print {"error": ...}. A
// fatal stop's result carries its error. Usage errors print no JSON.
func TestJSONOnError(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// An empty message in an mbox is as an empty file (it was
	// Config.Check's ErrConfig, a usage error without the file's name).
	mbox := filepath.Join(t.TempDir(), "mbox")
	if err := os.WriteFile(mbox, []byte("From a\nFrom b\nSubject: b\n\nB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name        string
		ctx         context.Context
		args        []string
		is          error
		interrupted bool
	}{
		{"refused", context.Background(), []string{"127.0.0.1:1"}, smtpsource.ErrConnect, false},
		{"empty -F", context.Background(), []string{"-F", empty, "127.0.0.1:1"}, smtpsource.ErrMessages, false},
		{"-F mbox with an empty message", context.Background(), []string{"-F", mbox, "127.0.0.1:1"}, smtpsource.ErrMessages, false},
	} {
		var out, errb bytes.Buffer
		err := Run(c.ctx, append([]string{"-json", "-q"}, c.args...), &out, &errb)
		var got struct {
			Error       string `json:"error"`
			Interrupted bool   `json:"interrupted"`
		}
		dec := json.NewDecoder(&out)
		if jerr := dec.Decode(&got); jerr != nil || dec.More() || !errors.Is(err, c.is) || got.Error != err.Error() || got.Interrupted != c.interrupted {
			t.Errorf("%s: %v; output %q (%v); want one object with the error, interrupted %v", c.name, err, out.String(), jerr, c.interrupted)
		}
	}
	// Interrupted (SIGINT is a cancelled context here) once a connection
	// has failed and before any opened: no result, ErrConnect; the
	// progress line that counts the failure is the cue to cancel.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	progress := cueWriter{cue: regexp.MustCompile(`errors [1-9]`), then: cancel}
	err := Run(ctx, []string{"-json", "-duration", "1h", "127.0.0.1:1"}, &out, &progress)
	var got struct {
		Error       string `json:"error"`
		Interrupted bool   `json:"interrupted"`
	}
	if jerr := json.Unmarshal(out.Bytes(), &got); jerr != nil || !errors.Is(err, smtpsource.ErrConnect) || got.Error != err.Error() || !got.Interrupted {
		t.Errorf("interrupted: %v; output %q; want the error, interrupted", err, out.String())
	}
	var s sink
	addr := s.start(t)
	var errb bytes.Buffer
	out.Reset()
	err = Run(context.Background(), []string{"-json", "-q", "-m", "2", "-tls", addr}, &out, &errb)
	var res struct {
		Error   string `json:"error"`
		Started *int64 `json:"started"`
	}
	if jerr := json.Unmarshal(out.Bytes(), &res); jerr != nil || !errors.Is(err, smtpsource.ErrStartTLS) || res.Started == nil || res.Error != err.Error() {
		t.Errorf("fatal stop: %v; output %q; want the result with the error", err, out.String())
	}
	out.Reset()
	if err := Run(context.Background(), []string{"-json", "-q", "-f", "a@example.com", "-from-file", empty, "127.0.0.1:1"}, &out, &errb); !errors.Is(err, cli.ErrUsage) || out.Len() != 0 {
		t.Errorf("usage error: %v; output %q, want none", err, out.String())
	}
}

// cueWriter calls then once what is written matches cue.
type cueWriter struct {
	mu   sync.Mutex
	buf  []byte
	cue  *regexp.Regexp
	then func()
}

func (w *cueWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if w.then != nil && w.cue.Match(w.buf) {
		w.then()
		w.then = nil
	}
	return len(p), nil
}

// A -hdr-log that cannot be written (a full disk) fails the command,
// status 1, with an error naming -hdr-log, after the result: it exited 0
// with the log lost. With -json the error is in the object too.
func TestHdrLogWriteError(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	var s sink
	addr := s.start(t)
	for _, json := range []bool{false, true} {
		args := []string{"-m", "3", "-q", "-hdr-log", "/dev/full", addr}
		if json {
			args = append([]string{"-json"}, args...)
		}
		var out, errb bytes.Buffer
		err := Run(context.Background(), args, &out, &errb)
		if status, print := cli.Status(err); status != 1 || !print || !errors.Is(err, smtpsource.ErrHdrLog) ||
			!strings.Contains(err.Error(), "-hdr-log") || !strings.Contains(err.Error(), "write /dev/full") {
			t.Errorf("%q: %v (status %d), want status 1 and ErrHdrLog naming -hdr-log", args, err, status)
		}
		want := "delivered 3 of 3"
		if json {
			want = `"delivered":3`
		}
		if !strings.Contains(out.String(), want) || json && !strings.Contains(out.String(), `"error":"smtp-source: -hdr-log`) {
			t.Errorf("%q: the result is not printed whole:\n%s", args, out.String())
		}
	}
	// A fatal stop (no STARTTLS offered) keeps its own words; the log's
	// error, joined to it, names -hdr-log.
	var out, errb bytes.Buffer
	err := Run(context.Background(), []string{"-m", "2", "-q", "-tls", "-hdr-log", "/dev/full", addr}, &out, &errb)
	if status, _ := cli.Status(err); status != 1 || !errors.Is(err, smtpsource.ErrStartTLS) || !errors.Is(err, smtpsource.ErrHdrLog) ||
		!strings.HasPrefix(err.Error(), "smtpsource: STARTTLS") || !strings.Contains(err.Error(), "\nsmtp-source: -hdr-log: ") {
		t.Errorf("-tls to a server without STARTTLS, -hdr-log /dev/full: %q (status %d), want both errors, the log's naming -hdr-log", err, status)
	}
	// A -verify that fails too is said as well: it was dropped behind
	// Run's error.
	for _, json := range []bool{false, true} {
		args := []string{"-m", "2", "-q", "-hdr-log", "/dev/full", "-verify", filepath.Join(t.TempDir(), "none"), addr}
		if json {
			args = append([]string{"-json"}, args...)
		}
		out.Reset()
		err = Run(context.Background(), args, &out, &errb)
		got := fmt.Sprint(err)
		if json {
			got = out.String()
		}
		if !errors.Is(err, smtpsource.ErrHdrLog) || !strings.Contains(got, "-hdr-log: ") || !strings.Contains(got, "-verify: ") {
			t.Errorf("%q: %v, output %s; want both the log's error and -verify's", args, err, out.String())
		}
	}
}

// The counts and sizes are read in decimal, as Postfix's smtp-source
// reads them (atoi): flag.Int's base 0 took -m 010 for 8 messages, and
// -m 08 for a mistake. Hexadecimal (0x10) is a usage error naming the
// flag.
func TestDecimalFlags(t *testing.T) {
	var s sink
	addr := s.start(t)
	var out, errb bytes.Buffer
	if err := Run(context.Background(), []string{"-m", "010", "-s", "010", "-r", "010", "-json", "-q", addr}, &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var res smtpsource.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Messages != 10 || res.Delivered != 10 || res.Sessions != 10 || res.Recipients != 10 || res.RcptOK != 100 {
		t.Errorf("-m 010 -s 010 -r 010: %+v, %v; want 10 messages, 10 sessions, 10 recipients each", res, err)
	}
	out.Reset()
	if err := Run(context.Background(), []string{"-m", "08", "-C", "09", "-T", "08", "-json", "-q", addr}, &out, &errb); err != nil {
		t.Fatalf("-m 08 -C 09 -T 08: %v: %s", err, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Delivered != 8 {
		t.Errorf("-m 08: %+v, %v; want 8 delivered", res, err)
	}
	// Each flag's value, as its usage error repeats it: -010 is -10.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-s", "-010"}, "bad session count: -10"},
		{[]string{"-m", "-010"}, "bad message count: -10"},
		{[]string{"-r", "-010"}, "bad recipient count: -10"},
		{[]string{"-C", "-010"}, "-C -10: "},
		{[]string{"-T", "-010"}, "-T -10: "},
		{[]string{"-chunking", "-chunk-size", "-010"}, "-chunk-size -10: "},
	} {
		err := Run(context.Background(), append(c.args, addr), &out, &errb)
		if status, _ := cli.Status(err); status != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v (status %d), want a usage error with %q", c.args, err, status, c.want)
		}
	}
	for _, f := range []string{"s", "m", "r", "C", "T", "chunk-size"} {
		errb.Reset()
		args := []string{"-" + f, "0x10", addr}
		if f == "chunk-size" {
			args = append([]string{"-chunking"}, args...)
		}
		err := Run(context.Background(), args, &out, &errb)
		if status, _ := cli.Status(err); status != 2 || !strings.Contains(errb.String(), `invalid value "0x10" for flag -`+f+": want a decimal number") {
			t.Errorf("-%s 0x10: %v (status %d), stderr %q; want a usage error naming -%s", f, err, status, errb.String(), f)
		}
	}
}

// closeFailing is a -hdr-log file whose writes succeed and whose Close
// fails, as a file system that writes back at close (NFS, a quota) fails
// the log's last bytes.
type closeFailing struct{ io.WriteCloser }

var errLogClose = errors.New("close: input/output error")

func (c closeFailing) Close() error {
	c.WriteCloser.Close()
	return errLogClose
}

// A -hdr-log whose Close fails fails the command, status 1, with an error
// naming -hdr-log, after the whole result, as a failed write does: the
// error was dropped and the command exited 0.
func TestHdrLogCloseError(t *testing.T) {
	createLog := func(path string) (io.WriteCloser, error) {
		f, err := cli.CreateOutput(path)
		if err != nil {
			return nil, err
		}
		return closeFailing{f}, nil
	}
	var s sink
	addr := s.start(t)
	path := filepath.Join(t.TempDir(), "h.log")
	for _, json := range []bool{false, true} {
		args := []string{"-m", "3", "-q", "-hdr-log", path, addr}
		if json {
			args = append([]string{"-json"}, args...)
		}
		var out, errb bytes.Buffer
		err := run(context.Background(), args, &out, &errb, createLog)
		if status, print := cli.Status(err); status != 1 || !print || !errors.Is(err, errLogClose) || !strings.HasPrefix(err.Error(), "smtp-source: -hdr-log: ") {
			t.Errorf("%q: %v (status %d), want status 1 and the close's error naming -hdr-log", args, err, status)
		}
		want := "delivered 3 of 3"
		if json {
			want = `"error":"smtp-source: -hdr-log: close: input/output error"`
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("%q: no %s in\n%s", args, want, out.String())
		}
		if b, err := os.ReadFile(path); err != nil || !bytes.Contains(b, []byte("#[StartTime: ")) {
			t.Errorf("%q: the log %q, %v; want it written", args, b, err)
		}
	}
}

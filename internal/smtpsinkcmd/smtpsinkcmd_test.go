package smtpsinkcmd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/smtp"
	"net/textproto"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/tooltest"
	"github.com/wirespeed/wirespeed/smtpsink"
)

// run starts the command with args on 127.0.0.1:0 and returns the address
// from its first line, and a function that cancels its context (as SIGINT
// does) and returns what it printed after that line, and its error.
func run(t *testing.T, args ...string) (addr string, stop func() (string, error)) {
	t.Helper()
	addr, stop2 := start(t, args...)
	return addr, func() (string, error) {
		out, _, err := stop2()
		return out, err
	}
}

// start is run whose stop also returns what the command wrote on its
// standard error.
func start(t *testing.T, args ...string) (addr string, stop func() (stdout, stderr string, err error)) {
	t.Helper()
	addr, _, stop = startErr(t, args...)
	return addr, stop
}

// startErr is start that also returns the command's standard error as it
// is written.
func startErr(t *testing.T, args ...string) (addr string, stderr *syncBuffer, stop func() (stdout, stderr string, err error)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	stderr = &syncBuffer{changed: make(chan struct{}, 1)}
	go func() {
		pre := []string{"-addr", "127.0.0.1:0"}
		if e := os.Getenv("SMTPSINK_TEST_ENGINE"); e != "" {
			// CI runs the tests on each engine; a test's own -engine,
			// later, wins.
			pre = append(pre, "-engine", e)
		}
		err := Run(ctx, append(pre, args...), pw, stderr)
		pw.Close()
		done <- err
	}()
	br := bufio.NewReader(pr)
	first, err := br.ReadString('\n')
	if !strings.HasPrefix(first, "listening on ") {
		cancel()
		t.Fatalf("first line %q (%v); stderr %s", first, err, stderr.String())
	}
	rest := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(br)
		rest <- string(b)
	}()
	return strings.TrimSpace(strings.TrimPrefix(first, "listening on ")), stderr, func() (string, string, error) {
		cancel()
		err := <-done
		return <-rest, stderr.String(), err
	}
}

// syncBuffer is the command's standard error, which a test may read
// while the command writes it.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case b.changed <- struct{}{}:
	default:
	}
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitFor waits until s has been written.
func (b *syncBuffer) waitFor(s string) {
	for !strings.Contains(b.String(), s) {
		<-b.changed
	}
}

func send(t *testing.T, addr, body string) {
	t.Helper()
	if err := smtp.SendMail(addr, nil, "a@x.test", []string{"b@y.test"}, []byte(body)); err != nil {
		t.Fatal(err)
	}
}

// The summary counts sessions, messages, bytes and error replies by
// code; -digest logs one line per message with the digest of its data.
func TestRunSummaryDigest(t *testing.T) {
	addr, stop := run(t, "-digest", "md5", "-size", "100")
	body := "Subject: x\r\n\r\nhello\r\n"
	send(t, addr, body)
	send(t, addr, body)
	if err := smtp.SendMail(addr, nil, "a@x.test", []string{"b@y.test"}, []byte(strings.Repeat("z", 200))); err == nil ||
		!strings.Contains(err.Error(), "552") {
		t.Errorf("too large: %v", err)
	}
	out, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum([]byte(body))
	h := hex.EncodeToString(sum[:])
	// net/smtp hangs up without QUIT after the 552: one aborted session.
	want := fmt.Sprintf("%s %d 1-1\n%s %d 2-1\nsessions 3 (aborted 1), messages 2, recipients 2, bytes %d\nerror replies 1 (552: 1)\n",
		h, len(body), h, len(body), 2*len(body))
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// -w and -W delay replies (here by a millisecond; the waits themselves
// are tested in package smtpsink with its clock).
func TestRunDelay(t *testing.T) {
	addr, stop := run(t, "-w", "0.001", "-W", "rcpt:1ms", "-W", ".:1ms")
	send(t, addr, "x\r\n")
	out, err := stop()
	if err != nil || !strings.Contains(out, "messages 1,") {
		t.Errorf("%v: %s", err, out)
	}
}

// -json prints one object; -digest-log writes the lines to a file.
func TestRunJSON(t *testing.T) {
	logf := filepath.Join(t.TempDir(), "digests")
	addr, stop := run(t, "-json", "-digest", "sha256", "-digest-log", logf, "-f", "rcpt")
	if err := smtp.SendMail(addr, nil, "a@x.test", []string{"b@y.test"}, []byte("x\r\n")); err == nil {
		t.Error("RCPT was not refused")
	}
	out, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Addr     string            `json:"addr"`
		Sessions int               `json:"sessions"`
		Messages int               `json:"messages"`
		Errors   map[string]uint64 `json:"errors"`
		Total    uint64            `json:"error_replies"`
		Engine   string            `json:"engine"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("%v: %q", err, out)
	}
	if res.Addr != addr || res.Sessions != 1 || res.Messages != 0 || res.Errors["500"] != 1 || res.Total != 1 {
		t.Errorf("result %+v", res)
	}
	// The engine that ran, so that bench smtp can name it: the default
	// one (as documented: loops on Linux, goroutine elsewhere), or the
	// one the test run asks for.
	want := map[bool]string{true: "loops", false: "goroutine"}[runtime.GOOS == "linux"]
	if e := os.Getenv("SMTPSINK_TEST_ENGINE"); e != "" {
		want = e
	}
	if res.Engine != want {
		t.Errorf("engine %q, want %q", res.Engine, want)
	}
	if b, err := os.ReadFile(logf); err != nil || len(b) != 0 {
		t.Errorf("digest log %q %v", b, err)
	}
}

// A -digest-log that cannot be written stops the sink at its first lost
// line, with an error that names the flag (exit status 1), where it went
// on taking messages whose lines it lost and said so only at its end; one
// that cannot be created names the flag too. The message whose line is
// lost is refused with 451 4.3.0, as one whose dump failed, where it was
// answered 250, acknowledged though not recorded.
func TestRunDigestLogFails(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	dumps := t.TempDir()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), []string{"-addr", "127.0.0.1:0", "-digest", "md5", "-digest-log", "/dev/full", "-d", dumps + "/"}, pw, io.Discard)
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	first, _ := br.ReadString('\n')
	sendRefused(t, strings.TrimSpace(strings.TrimPrefix(first, "listening on ")), "x\r\n", 451)
	rest, _ := io.ReadAll(br)
	err := <-done // the sink stopped by itself
	if !errors.Is(err, errNoSpace) || !strings.Contains(err.Error(), "-digest-log") {
		t.Errorf("Run: %v; want ENOSPC, naming -digest-log", err)
	}
	if !strings.Contains(string(rest), "messages 0,") || !strings.Contains(string(rest), "(451: 1)") {
		t.Errorf("summary %q", rest)
	}
	// The dump is written first, and stays, as a refused message's does.
	if files, _ := os.ReadDir(dumps); len(files) != 1 {
		t.Errorf("dumps %v, want one", files)
	}
	err = Run(context.Background(), []string{"-addr", "127.0.0.1:0", "-digest", "md5", "-digest-log", filepath.Join(t.TempDir(), "no", "log")}, io.Discard, io.Discard)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "-digest-log") {
		t.Errorf("Run with the log's directory missing: %v; want ErrNotExist, naming -digest-log", err)
	}
}

// runUntilDone runs the command with args until it stops by itself; it
// returns the address it listens on and a function that waits for its
// end and returns the rest of its output (the summary).
func runUntilDone(t *testing.T, args ...string) (addr string, summary func() string) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), args, pw, io.Discard)
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	first, _ := br.ReadString('\n')
	return strings.TrimSpace(strings.TrimPrefix(first, "listening on ")), func() string {
		rest, _ := io.ReadAll(br)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		return string(rest)
	}
}

// -M stops after that many messages, once their replies are out.
func TestRunMaxMessages(t *testing.T) {
	addr, summary := runUntilDone(t, "-addr", "127.0.0.1:0", "-M", "2")
	send(t, addr, "one\r\n")
	send(t, addr, "two\r\n")
	if rest := summary(); !strings.Contains(rest, "messages 2,") {
		t.Errorf("summary %q", rest)
	}
}

// A session that goes on while -M stops the sink has its next message
// refused (421), not delivered beyond -M.
func TestRunMaxMessagesOneSession(t *testing.T) {
	addr, summary := runUntilDone(t, "-addr", "127.0.0.1:0", "-M", "2")
	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var errs []error
	for range 3 {
		err := c.Mail("a@x.test")
		if err == nil {
			err = c.Rcpt("b@y.test")
		}
		var w io.WriteCloser
		if err == nil {
			w, err = c.Data()
		}
		if err == nil {
			io.WriteString(w, "x\r\n")
			err = w.Close()
		}
		errs = append(errs, err)
		if err != nil {
			break
		}
	}
	if len(errs) != 3 || errs[0] != nil || errs[1] != nil || errs[2] == nil || !strings.Contains(errs[2].Error(), "421") {
		t.Errorf("replies to 3 messages with -M 2: %v; want 2 accepted, then 421", errs)
	}
	if rest := summary(); !strings.Contains(rest, "messages 2,") {
		t.Errorf("summary %q", rest)
	}
}

// A sink that cannot start leaves its -digest-log as it was: the file
// is opened once the sink listens (it was truncated first, so a second
// sink started by mistake on a busy port emptied the first one's log).
func TestRunDigestLogKeptOnFailedStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dl := filepath.Join(t.TempDir(), "digests.txt")
	const lines = "d41d8cd98f00b204e9800998ecf8427e 0 1-1\n"
	os.WriteFile(dl, []byte(lines), 0o644)
	for _, args := range [][]string{
		{"-addr", ln.Addr().String()},                           // the port taken
		{"-addr", "127.0.0.1:0", "-d", filepath.Join(dl, "x/")}, // no dump there
	} {
		err := Run(context.Background(), append(args, "-digest", "md5", "-digest-log", dl), io.Discard, io.Discard)
		if b, _ := os.ReadFile(dl); err == nil || string(b) != lines {
			t.Errorf("%q: %v; the log now %q", args, err, b)
		}
	}
}

// A value the library refuses is a usage error naming its flag, and
// still smtpsink.ErrConfig: it read "smtp-sink: smtpsink: bad
// configuration: ...", naming the Config field, not the flag.
func TestRunConfigFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"-h", "evil\r\n250 x"}, "-h"},
		{[]string{"-reply", "RCPT=550:a\r\nb"}, "-reply"},
		{[]string{"-r", "RCPT", "-reply", "CONNECT=554:a\nb"}, "-reply"},
	} {
		err := Run(context.Background(), append(c.args, "-addr", "127.0.0.1:0"), io.Discard, io.Discard)
		want := "smtp-sink: " + c.flag + ": bad configuration: "
		if status, _ := cli.Status(err); status != 2 || !errors.Is(err, smtpsink.ErrConfig) || !strings.HasPrefix(fmt.Sprint(err), want) {
			t.Errorf("%q: %v (status %d), want a usage error starting %q, matching smtpsink.ErrConfig", c.args, err, status, want)
		}
	}
}

// Command-line mistakes are usage errors (exit status 2).
func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-bare", "maybe"}, {"-f", "FROB"}, {"-digest", "crc32"}, {"127.0.0.1:0", "5", "extra"}, {"", "5"}, {"inet:unix:/tmp/x.sock"}, {"-cmd-line", "0"},
		{"-reply", "RCPT=250"}, {"-reply", "nope"}, {"-w", "-1"}, {"-W", "FROB:1"}, {"-W", "RCPT"}, {"-W", "RCPT:x"}, {"-nosuchflag"}, {"-n", "-1"}, {"-c=maybe"}, {"-A", "-1"}, {"-A", "soon"},
		{"-tls-cert", "c.pem"}, {"-auth"}, {"-auth-file", "f"}, {"-tls-implicit", "-tls-required"}, {"-m", "-1"}, {"-min-rate", "-5"},
		{"-d", "a", "-D", "b"}, {"-rule", "rcpt:x=250"}, {"-rule", "nope"}, {"-auth-mechs", "PLAIN,NTLM"},
		{"-tls-client-required"}, {"-tls-client-ca", "ca.pem"}, {"-tls", "-tls-client-ca", "/nonexistent/ca.pem", "-tls-client-required=maybe"},
		{"-tls", "-tls-implicit"}, {"-addr", "unix:"}, {"-w", "1e10"}, {"-digest-log", "files.log"},
		{"-addr", ""}, {"-addr", "inet:"}, {"inet:"}, // an empty address listened on every one, port chosen
		{"-T", "-1"}, {"-T", "2147483648"}, {"-T", "4294975488"}, // over a C int: 2^32 + 8192 was set as 8192
		{"-auth-plaintext"}, {"-auth-mechs", "PLAIN"}, // AUTH's flags without -auth
		{"-addr", "127.0.0.1:0", "-h", "evil\r\n250 x"}, {"-addr", "127.0.0.1:0", "-reply", "RCPT=550:a\r\nb"}, // the library's ErrConfig
	} {
		err := Run(context.Background(), args, io.Discard, io.Discard)
		if status, _ := cli.Status(err); status != 2 {
			t.Errorf("%q: %v (status %d), want a usage error", args, err, status)
		}
	}
	// A NaN of seconds passed the range checks and became whatever
	// converting NaN to an integer gives: -t NaN ran with no time limit.
	// (The context is done, so that a run that starts ends at once.)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{{"-t", "NaN"}, {"-w", "nan"}, {"-A", "NaN"}, {"-W", "RCPT:NaN"}} {
		err := Run(done, append(args, "-addr", "127.0.0.1:0"), io.Discard, io.Discard)
		if status, _ := cli.Status(err); status != 2 {
			t.Errorf("%q: %v (status %d), want a usage error", args, err, status)
		}
	}
	// -a (no AUTH) contradicts -auth, which alone runs.
	auth := []string{"-auth", "-tls", "-addr", "127.0.0.1:0"}
	if err := Run(done, auth, io.Discard, io.Discard); err != nil {
		t.Errorf("%q: %v", auth, err)
	}
	if status, _ := cli.Status(Run(done, append([]string{"-a"}, auth...), io.Discard, io.Discard)); status != 2 {
		t.Errorf("-a %q: status %d, want a usage error", auth, status)
	}
	var se cli.StatusError
	if err := Run(context.Background(), []string{"-addr", "256.0.0.1:x"}, io.Discard, io.Discard); err == nil || errors.As(err, &se) {
		t.Errorf("bad address: %v", err)
	}
	// Postfix's inet: prefix is taken.
	if addr, stop := run(t, "-addr", "inet:127.0.0.1:0"); !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Errorf("-addr inet:127.0.0.1:0 listens on %q", addr)
	} else {
		stop()
	}
}

// An address the sink cannot listen on names its flag, or the address
// argument, with serve's rule (cli.ListenError): a usage error, exit 2,
// where no run could listen there (a host that does not exist: it said
// "listen tcp: lookup HOST: no such host", exit 1, the argument unsaid;
// an address not this host's; link-local IPv6 without its zone; -4 with
// an IPv6 address), exit 1 where the environment must change (a port in
// use, a socket's directory missing). -metrics likewise.
func TestRunListenErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	b := busy.Addr().String()
	missing := "unix:" + filepath.Join(t.TempDir(), "missing", "s")
	type tc struct {
		args   []string
		want   string
		status int
	}
	cases := []tc{
		{[]string{"no such host.invalid:2525"}, `address "no such host.invalid:2525": lookup `, 2},
		{[]string{"-addr", "no such host.invalid:0"}, `-addr "no such host.invalid:0": lookup `, 2},
		{[]string{"-4", "[::1]:0"}, `address "[::1]:0": address ::1: no suitable address`, 2},
		{[]string{b}, fmt.Sprintf("address %q: bind: address already in use", b), 1},
		{[]string{"-addr", missing}, fmt.Sprintf("-addr %q: ", missing), 1},
		{[]string{"-addr", "127.0.0.1:0", "-metrics", "no such host.invalid:0"}, `-metrics "no such host.invalid:0": lookup `, 2},
		{[]string{"-addr", "127.0.0.1:0", "-metrics", b}, fmt.Sprintf("-metrics %q: bind: address already in use", b), 1},
	}
	if ln, err := net.Listen("tcp", "192.0.2.1:0"); err == nil {
		ln.Close()
		t.Log("192.0.2.1 is this host's: not tried")
	} else {
		cases = append(cases, tc{[]string{"192.0.2.1:2525"}, `address "192.0.2.1:2525": bind: cannot assign requested address`, 2})
	}
	if tooltest.IPv6(t) {
		cases = append(cases, tc{[]string{"-addr", "[fe80::1]:0"}, `-addr "[fe80::1]:0": bind: `, 2})
	}
	for _, c := range cases {
		// Not a ctx done already: it would cancel the lookups.
		err := Run(t.Context(), c.args, io.Discard, io.Discard)
		want := "smtp-sink: " + c.want
		if status, _ := cli.Status(err); status != c.status || !strings.HasPrefix(fmt.Sprint(err), want) {
			t.Errorf("%q: %v (status %d), want %q in front, exit status %d", c.args, err, status, want, c.status)
		}
	}
}

// An address net cannot use, whatever the network holds (a port out of
// range, a port that is not a number nor a known service, no port), is a
// usage error naming its flag, or the address argument, before anything
// listens: a -metrics address included.
func TestRunBadAddress(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-addr", ":99999"}, `-addr ":99999": port 99999 out of range`},
		{[]string{"-addr", "127.0.0.1:-1"}, `-addr "127.0.0.1:-1": port -1 out of range`},
		{[]string{"-addr", "127.0.0.1:no-such-service-wirespeed"}, `-addr "127.0.0.1:no-such-service-wirespeed": unknown port`},
		{[]string{"-addr", "127.0.0.1"}, `-addr "127.0.0.1": want HOST:PORT`},
		{[]string{"127.0.0.1:65536"}, `address "127.0.0.1:65536": port 65536 out of range`},
		{[]string{"-metrics", "127.0.0.1:99999"}, `-metrics "127.0.0.1:99999": port 99999 out of range`},
		{[]string{"-metrics", "localhost"}, `-metrics "localhost": want HOST:PORT`},
	} {
		err := Run(t.Context(), tc.args, io.Discard, io.Discard)
		if status, _ := cli.Status(err); status != 2 || !strings.Contains(fmt.Sprint(err), tc.want) {
			t.Errorf("%q: %v (status %d), want a usage error saying %s", tc.args, err, status, tc.want)
		}
	}
}

// A bad -M or -n is a usage error whose message names the flag and says
// what is wrong with the value, not the flag package's "parse error".
func TestRunBadCount(t *testing.T) {
	for _, tc := range []struct{ flag, v, want string }{
		{"-M", "-1", `invalid value "-1" for flag -M: negative: want 0 or more`},
		{"-n", "-1", `invalid value "-1" for flag -n: negative: want 0 or more`},
		{"-n", "-99999999999999999999", `for flag -n: negative: want 0 or more`},
		{"-M", "many", `invalid value "many" for flag -M: want a whole number, 0 or more`},
		{"-M", "1.5", `for flag -M: want a whole number, 0 or more`},
		{"-n", "99999999999999999999", `invalid value "99999999999999999999" for flag -n: too large (at most 18446744073709551615)`},
	} {
		var stderr strings.Builder
		err := Run(t.Context(), []string{tc.flag, tc.v}, io.Discard, &stderr)
		if status, _ := cli.Status(err); status != 2 || !strings.Contains(stderr.String(), tc.want) || strings.Contains(stderr.String(), "parse error") {
			t.Errorf("%s %s: %v (status %d), stderr %q, want a usage error saying %s", tc.flag, tc.v, err, status, stderr.String(), tc.want)
		}
	}
}

// An empty -d or -D template names no file: a usage error naming the
// flag, where the sink ran and dumped nothing. (The context is done, so
// that a run that starts ends at once.)
func TestRunEmptyDumpTemplate(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, f := range []string{"-d", "-D"} {
		err := Run(done, []string{"-addr", "127.0.0.1:0", f, ""}, io.Discard, io.Discard)
		if status, _ := cli.Status(err); status != 2 || !strings.Contains(fmt.Sprint(err), f+" '': an empty template") {
			t.Errorf("%s '': %v (status %d), want a usage error naming %s", f, err, status, f)
		}
	}
}

// -n stops after that many sessions have ended with QUIT; a session that
// ends without QUIT does not count.
func TestRunMaxQuits(t *testing.T) {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), []string{"-addr", "127.0.0.1:0", "-n", "2"}, pw, io.Discard)
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	first, _ := br.ReadString('\n')
	addr := strings.TrimSpace(strings.TrimPrefix(first, "listening on "))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if greeting, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.HasPrefix(greeting, "220 ") {
		t.Fatalf("greeting %q %v", greeting, err)
	}
	c.Close() // no QUIT
	send(t, addr, "one\r\n")
	send(t, addr, "two\r\n") // served: the first QUIT did not stop the sink
	rest, _ := io.ReadAll(br)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(rest), "sessions 3 (aborted 1), messages 2,") {
		t.Errorf("summary %q", rest)
	}
}

// Once -n sessions have ended, a session that goes on while the sink
// stops has its next message refused (421), not delivered.
func TestRunMaxQuitsOtherSession(t *testing.T) {
	addr, stderr, stop := startErr(t, "-n", "1", "-c")
	a := dialRaw(t, addr)
	a.send("EHLO a.test\r\n")
	if got := a.codes(2); got != "220 250" {
		t.Fatalf("greeting, EHLO: %s", got)
	}
	send(t, addr, "one\r\n") // another session, ended with QUIT
	stderr.waitFor("quit=1")
	a.send("MAIL FROM:<a@x.test>\r\nRCPT TO:<b@y.test>\r\nDATA\r\n")
	if got := a.codes(3); got != "250 250 354" {
		t.Fatalf("envelope: %s", got)
	}
	a.send("two\r\n.\r\n")
	if got := a.codes(1); got != "421" {
		t.Errorf("the message after -n: %s, want 421", got)
	}
	out, _, err := stop()
	if err != nil || !strings.HasPrefix(out, "sessions 2 (aborted 1), messages 1,") {
		t.Errorf("%v: summary %q", err, out)
	}
}

// -c shows the counters on standard error at each message and each
// session's end, each line ended by a carriage return, and leaves the
// last on the screen.
func TestRunCounters(t *testing.T) {
	addr, stop := start(t, "-c")
	send(t, addr, "one\r\n")
	send(t, addr, "two\r\n")
	out, errOut, err := stop()
	if err != nil || !strings.Contains(out, "messages 2,") {
		t.Fatalf("%v: %s", err, out)
	}
	// One update per message and per session's end, in an order that
	// depends on when each session's end is seen, and the last again.
	lines, ok := strings.CutSuffix(errOut, "\r\n")
	shown := strings.Split(lines, "\r")
	if !ok || len(shown) != 5 || shown[3] != "sess=2 quit=2 mesg=2" || shown[4] != shown[3] {
		t.Fatalf("stderr %q", errOut)
	}
	var last [3]int
	for _, l := range shown {
		var c [3]int
		if _, err := fmt.Sscanf(l, "sess=%d quit=%d mesg=%d", &c[0], &c[1], &c[2]); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if c[0] < last[0] || c[1] < last[1] || c[2] < last[2] || c[0]+c[2] > last[0]+last[2]+1 {
			t.Errorf("counters %q after %v", l, last)
		}
		last = c
	}
}

// -A answers DATA with 354 and then 550, and disconnects.
func TestRunAbortData(t *testing.T) {
	addr, stop := run(t, "-A", "0")
	c, err := textproto.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, step := range []struct {
		cmd  string
		code int
	}{{"", 220}, {"HELO c", 250}, {"MAIL FROM:<a@b>", 250}, {"RCPT TO:<c@d>", 250}, {"DATA", 354}} {
		if step.cmd != "" {
			if err := c.PrintfLine("%s", step.cmd); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := c.ReadResponse(step.code); err != nil {
			t.Fatalf("%s: %v", step.cmd, err)
		}
	}
	if code, _, err := c.ReadResponse(550); err != nil || code != 550 {
		t.Fatalf("after 354: %d %v", code, err)
	}
	if _, err := c.ReadLine(); err != io.EOF {
		t.Errorf("after the 550: %v, want EOF", err)
	}
	out, err := stop()
	if err != nil || !strings.HasPrefix(out, "sessions 1 (aborted 1), messages 0,") || !strings.Contains(out, "550: 1") {
		t.Errorf("%v: %s", err, out)
	}
}

// -tls-cert and -tls-key: the sink serves that certificate (a client
// that trusts only it verifies the sink) and reports its fingerprint; a
// malformed -auth-file is an error.
func TestRunTLSCertFiles(t *testing.T) {
	cert, err := smtpsink.SelfSigned("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600)
	addr, stop := start(t, "-tls", "-tls-cert", certFile, "-tls-key", keyFile)
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartTLS(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	c.Quit()
	_, errOut, err := stop()
	sum := sha256.Sum256(cert.Certificate[0])
	if err != nil || !strings.Contains(strings.ReplaceAll(errOut, ":", ""), strings.ToUpper(hex.EncodeToString(sum[:]))) {
		t.Errorf("%v: stderr %q, want fingerprint %X", err, errOut, sum)
	}
	bad := filepath.Join(dir, "users")
	os.WriteFile(bad, []byte("u:p\nnocolon\n"), 0o600)
	if err := Run(context.Background(), []string{"-addr", "127.0.0.1:0", "-tls", "-auth", "-auth-file", bad}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Errorf("bad -auth-file: %v", err)
	}
}

// One-letter flags group in one word, as Postfix's smtp-sink (getopt)
// takes them: -cv is -c -v.
func TestRunGroupedFlags(t *testing.T) {
	addr, stop := start(t, "-cv")
	send(t, addr, "one\r\n")
	_, errOut, err := stop()
	if err != nil || !strings.Contains(errOut, "sess=1 quit=1 mesg=1") || !strings.Contains(errOut, "MAIL FROM:") {
		t.Fatalf("%v: stderr %q, want the counters (-c) and the conversation (-v)", err, errOut)
	}
}

// -f and -r imply -p, as Postfix's smtp-sink has them: no PIPELINING.
func TestRunRefuseImpliesNoPipelining(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{{nil, true}, {[]string{"-f", "VRFY"}, false}, {[]string{"-r", "VRFY"}, false}, {[]string{"-q", "VRFY"}, true}} {
		addr, stop := run(t, c.args...)
		cl, err := smtp.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.Hello("client.test"); err != nil {
			t.Fatal(err)
		}
		if got, _ := cl.Extension("PIPELINING"); got != c.want {
			t.Errorf("%q: PIPELINING offered %v, want %v", c.args, got, c.want)
		}
		cl.Quit()
		stop()
	}
}

// -Q . in LMTP answers a message's data as Postfix's smtp-sink -L -Q .
// does: one 421, with its text, for all the recipients, then the end of
// the connection (it sent one 421 a recipient, and another text).
func TestRunShutLMTPData(t *testing.T) {
	addr, stop := run(t, "-L", "-Q", ".")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute)) // not to hang if it stays open
	c.Write([]byte("LHLO c\r\nMAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\nRCPT TO:<e@f>\r\nDATA\r\nhi\r\n.\r\n"))
	all, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(all), "354 End data with <CR><LF>.<CR><LF>\r\n")
	if want := "421 4.0.0 Server closing connection\r\n"; after != want {
		t.Errorf("after 354: %q, want %q (all: %q)", after, want, all)
	}
	if out, err := stop(); err != nil || !strings.Contains(out, "421: 1") {
		t.Errorf("%v: %s", err, out)
	}
}

// A command named by more than one of -f, -r, -q and -Q gets the reply
// Postfix's smtp-sink gives it, whatever the order of the flags: -q (a
// close without a reply) before -Q (421), -Q before -f (500), -f before
// -r (450). Each reply is checked as the bytes after the greeting, with
// whether the connection then ends.
func TestRunForcePrecedence(t *testing.T) {
	const (
		hard  = "500 5.3.0 Error: command failed\r\n"
		shut  = "421 4.0.0 Server closing connection\r\n"
		after = "250 2.0.0 Ok\r\n" // the NOOP sent after, if the connection is still open
	)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", "VRFY", "-r", "VRFY"}, hard + after},
		{[]string{"-r", "VRFY", "-f", "VRFY"}, hard + after},
		{[]string{"-Q", "VRFY", "-f", "VRFY"}, shut},
		{[]string{"-f", "VRFY", "-Q", "VRFY"}, shut},
		{[]string{"-q", "VRFY", "-Q", "VRFY"}, ""},
		{[]string{"-Q", "VRFY", "-q", "VRFY"}, ""},
		{[]string{"-r", "VRFY", "-q", "VRFY"}, ""},
	} {
		addr, stop := run(t, c.args...)
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(time.Minute)) // not to hang if it stays open
		br := bufio.NewReader(conn)
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		// Not pipelined: -f and -r turn PIPELINING off. After a reply
		// other than 421, NOOP's shows the session went on; QUIT then
		// ends it.
		conn.Write([]byte("VRFY a@b\r\n"))
		got, err := br.ReadString('\n')
		if err == nil && got != shut {
			conn.Write([]byte("NOOP\r\n"))
			line, _ := br.ReadString('\n')
			got += line
			conn.Write([]byte("QUIT\r\n"))
		}
		if rest, err := io.ReadAll(br); err != nil || len(rest) > 0 && !strings.HasPrefix(string(rest), "221 ") {
			t.Errorf("%q: after the reply %q, %v", c.args, rest, err)
		}
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.args, got, c.want)
		}
		conn.Close()
		stop()
	}
}

// -f, -r, -q and -Q take XCLIENT and XFORWARD, as Postfix's smtp-sink's
// do (it was a usage error).
func TestRunForceXCommands(t *testing.T) {
	addr, stop := run(t, "-f", "XCLIENT", "-Q", "XFORWARD")
	defer stop()
	c, err := textproto.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, err := c.ReadResponse(220); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		line string
		code int
		text string
	}{
		{"HELO c", 250, "smtp-sink"},
		{"XCLIENT NAME=foo", 500, "5.3.0 Error: command failed"},
		{"XFORWARD NAME=foo", 421, "4.0.0 Server closing connection"},
	} {
		if err := c.PrintfLine("%s", s.line); err != nil {
			t.Fatal(err)
		}
		if code, msg, err := c.ReadResponse(s.code); err != nil || msg != s.text {
			t.Fatalf("%s: %d %q, %v; want %d %q", s.line, code, msg, err, s.code, s.text)
		}
	}
	if _, err := c.R.ReadByte(); err != io.EOF {
		t.Errorf("after 421: %v, want EOF", err)
	}
}

// A session that -Q QUIT (or -q QUIT) closes has not ended with QUIT: as
// with Postfix's smtp-sink, -c shows "quit=0" and -n does not count it
// (the sink stopped at -n 1 after it).
func TestRunShutQuitNotCounted(t *testing.T) {
	for _, flag := range []string{"-Q", "-q"} {
		addr, stderr, stop := startErr(t, "-n", "1", "-c", flag, "QUIT")
		a := dialRaw(t, addr)
		a.send("HELO a.test\r\n")
		if got := a.codes(2); got != "220 250" {
			t.Fatalf("%s: greeting, HELO: %s", flag, got)
		}
		a.send("QUIT\r\n")
		rest, err := io.ReadAll(a.r)
		if want := map[string]string{"-Q": "421 4.0.0 Server closing connection\r\n"}[flag]; err != nil || string(rest) != want {
			t.Errorf("%s: after QUIT %q, %v; want %q", flag, rest, err, want)
		}
		stderr.waitFor("sess=1 ")
		if s := stderr.String(); !strings.Contains(s, "sess=1 quit=0 mesg=0") {
			t.Errorf("%s: counters %q, want quit=0", flag, s)
		}
		out, _, err := stop()
		if err != nil || !strings.HasPrefix(out, "sessions 1 (aborted 1), messages 0,") {
			t.Errorf("%s: %v: summary %q", flag, err, out)
		}
	}
}

// A message a -rule refuses at its end takes no place of -M's: -M 1
// takes the next good message, then stops by itself, where the refused
// one used to use up the place, and every later message got 421 while
// the sink never stopped.
func TestRunMaxMessagesRuleRefused(t *testing.T) {
	addr, summary := runUntilDone(t, "-addr", "127.0.0.1:0", "-M", "1", "-rule", "dot:^bad@=550 5.7.1 no")
	err := smtp.SendMail(addr, nil, "a@x.test", []string{"bad@y.test"}, []byte("refused\r\n"))
	var te *textproto.Error
	if !errors.As(err, &te) || te.Code != 550 {
		t.Fatalf("the message the rule refuses: %v, want 550", err)
	}
	send(t, addr, "one\r\n")
	if rest := summary(); !strings.Contains(rest, "), messages 1,") || !strings.Contains(rest, "(550: 1)") {
		t.Errorf("summary %q", rest)
	}
}

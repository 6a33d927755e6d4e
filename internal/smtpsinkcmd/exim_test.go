package smtpsinkcmd

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/smtpsourcecmd"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// exim is an Exim instance of a test's own: its configuration, spool and
// logs in a directory of their own, its one router sending every message
// to the sink at relay with its smtp transport, which uses BDAT (RFC
// 3030) when the sink offers CHUNKING.
type exim struct {
	path, dir, conf string
}

// eximPath returns the Exim binary: $WIRESPEED_EXIM (.ci/run unpacks
// Debian's, which cannot be installed beside Postfix), else exim4 or exim
// on the PATH or in /usr/sbin. It ends the test if there is none, or if
// the test cannot run it (not root, or no user for Exim's processes).
func eximPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("WIRESPEED_EXIM")
	if path == "" {
		for _, p := range []string{"exim4", "exim", "/usr/sbin/exim4", "/usr/sbin/exim"} {
			if p, err := exec.LookPath(p); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		tooltest.Unavailable(t, "Exim not found (set WIRESPEED_EXIM, or see .ci/run)")
	}
	if os.Geteuid() != 0 {
		tooltest.Unavailable(t, "running Exim with a configuration of the test's own needs root")
	}
	return path
}

// startExim writes an Exim configuration relaying to relay (host:port)
// and, with port not "", starts Exim's daemon on 127.0.0.1:port until the
// test ends. received_header_text is empty: Exim adds no Received line,
// so a message with From, Date and Message-ID reaches the sink as it was
// given.
func startExim(t *testing.T, relay, port string) *exim {
	t.Helper()
	path := eximPath(t)
	host, rport, _ := strings.Cut(relay, ":")
	// With a configuration not its own, Exim runs as its user: the
	// directories must be that user's.
	dir, err := os.MkdirTemp("", "wirespeed-exim-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	e := &exim{path: path, dir: dir, conf: filepath.Join(dir, "exim.conf")}
	conf := fmt.Sprintf(`exim_path = %s
primary_hostname = exim.test
spool_directory = %s
log_file_path = %s/%%slog
keep_environment =
received_header_text =
acl_smtp_rcpt = acl_rcpt
begin acl
acl_rcpt:
  accept
begin routers
sink:
  driver = manualroute
  route_list = * %s::%s
  self = send
  transport = sink_smtp
begin transports
sink_smtp:
  driver = smtp
  allow_localhost
  hosts_avoid_tls = *
begin retry
* * F,1m,1m
`, path, filepath.Join(dir, "spool"), filepath.Join(dir, "log"), host, rport)
	if err := os.WriteFile(e.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "-C", e.conf, "-bP", "exim_user").CombinedOutput()
	name := strings.TrimSpace(strings.TrimPrefix(string(out), "exim_user = "))
	if err != nil {
		tooltest.Unavailable(t, "%s -bP exim_user: %v %s", path, err, out)
	}
	if _, err := user.Lookup(name); err != nil {
		tooltest.Unavailable(t, "Exim's user %q: %v (see .ci/run)", name, err)
	}
	for _, d := range []string{"spool", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("chown", "-R", name, filepath.Join(dir, d)).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	if port == "" {
		return e
	}
	d := exec.Command(path, "-C", e.conf, "-bdf", "-oX", port)
	var dout bytes.Buffer
	d.Stdout, d.Stderr = &dout, &dout
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Process.Kill(); d.Wait() })
	for end := time.Now().Add(10 * time.Second); !bytes.Contains(e.log(), []byte("daemon started")); {
		if time.Now().After(end) {
			t.Fatalf("Exim's daemon did not start:\n%s\n%s", dout.Bytes(), e.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return e
}

// log returns Exim's main log.
func (e *exim) log() []byte {
	b, _ := os.ReadFile(filepath.Join(e.dir, "log", "mainlog"))
	return b
}

// waitLog returns Exim's log once re matches n of its lines, or after a
// minute. A delivery's line is written by Exim after the sink's reply,
// so the sink may have a message before the log says so.
func (e *exim) waitLog(re *regexp.Regexp, n int) []byte {
	for end := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		b := e.log()
		if len(re.FindAll(b, -1)) >= n || time.Now().After(end) {
			return b
		}
	}
}

// md5Lines returns the "HEX BYTES" of each message, sorted.
func md5Lines(msgs [][]byte) []string {
	var want []string
	for _, m := range msgs {
		sum := md5.Sum(m)
		want = append(want, hex.EncodeToString(sum[:])+" "+strconv.Itoa(len(m)))
	}
	slices.Sort(want)
	return want
}

// waitDigests waits until the sink's digest log file holds n lines (or
// a bound far past Exim's pace) and returns their "HEX BYTES", sorted.
func waitDigests(t *testing.T, file string, n int) []string {
	t.Helper()
	var got []string
	for end := time.Now().Add(time.Minute); ; {
		b, _ := os.ReadFile(file)
		got = got[:0]
		for l := range strings.Lines(string(b)) {
			if f := strings.Fields(l); len(f) == 3 {
				got = append(got, f[0]+" "+f[1])
			}
		}
		if len(got) >= n || time.Now().After(end) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	slices.Sort(got)
	return got
}

// eximMessages returns messages that Exim passes on unchanged (each has
// From, To, Date and Message-ID), with CRLF lines: one with lines that
// start with dots, one of a 998-byte line, one of 300 KB, more than a
// BDAT chunk of many clients.
func eximMessages() [][]byte {
	var msgs [][]byte
	for i, body := range []string{
		"a short one\r\n",
		".\r\n..two dots\r\n.dot\r\n. \r\nlast\r\n",
		strings.Repeat("x", 998) + "\r\n", // Exim refuses longer (message_linelength_limit)
		strings.Repeat("line of a long message, 40 bytes long\r\n", 7500),
	} {
		msgs = append(msgs, fmt.Appendf(nil, "From: <from@client.test>\r\nTo: <to@server.test>\r\nDate: Thu, 03 Dec 2026 12:00:00 +0000\r\nMessage-ID: <%d@client.test>\r\nSubject: message %d\r\n\r\n%s", i, i, body))
	}
	return msgs
}

// Exim delivers into the sink with BDAT: its queue runner sends the
// queued messages over one connection, each in BDAT chunks (Exim's log
// marks each delivery K, CHUNKING used), and the sink's digests and
// dumps are exactly the messages.
func TestRunEximBDAT(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Exim")
	}
	dumps := t.TempDir()
	digests := filepath.Join(t.TempDir(), "digests")
	addr, stop := start(t, "-digest", "md5", "-digest-log", digests, "-d", dumps+"/", "-v")
	e := startExim(t, addr, "")
	msgs := eximMessages()
	for _, m := range msgs {
		// -odq: queued; the queue run below delivers them all.
		cmd := exec.Command(e.path, "-C", e.conf, "-odq", "-oi", "-f", "from@client.test", "to@server.test")
		cmd.Stdin = bytes.NewReader(bytes.ReplaceAll(m, []byte("\r\n"), []byte("\n")))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("exim: %v\n%s", err, out)
		}
	}
	if out, err := exec.Command(e.path, "-C", e.conf, "-qf").CombinedOutput(); err != nil {
		t.Fatalf("exim -qf: %v\n%s", err, out)
	}
	got := waitDigests(t, digests, len(msgs))
	_, stderr, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	log := e.log()
	if want := md5Lines(msgs); !slices.Equal(got, want) {
		t.Errorf("digests %q, want %q\nExim's log:\n%s", got, want, log)
	}
	if k := regexp.MustCompile(`(?m) => to@server\.test .* K C="250 `).FindAll(log, -1); len(k) != len(msgs) {
		t.Errorf("%d deliveries with CHUNKING in Exim's log, want %d:\n%s", len(k), len(msgs), log)
	}
	if !strings.Contains(stderr, `LAST\r\n`) || strings.Contains(stderr, `\r\nDATA\r\n`) || strings.Contains(stderr, `"DATA\r\n`) {
		t.Errorf("not BDAT alone in the conversation:\n%.3000s", stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dumps, "*"))
	found := 0
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, m := range msgs {
			// the dump: the transaction's lines, the message, an empty line
			if bytes.HasSuffix(b, append(append([]byte("\r\n"), m...), "\r\n"...)) {
				found++
			}
		}
	}
	if len(files) != len(msgs) || found != len(msgs) {
		t.Errorf("%d dumps, %d holding a message, want %d", len(files), found, len(msgs))
	}
}

// smtp-source sends BDAT to Exim's daemon (Exim's log marks each message
// received K), which relays each with BDAT into the sink: the sink's
// digests are the messages smtp-source sent.
func TestRunSourceEximBDAT(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Exim")
	}
	digests := filepath.Join(t.TempDir(), "digests")
	addr, stop := start(t, "-digest", "md5", "-digest-log", digests)
	port := freePort(t)
	e := startExim(t, addr, port)
	msgs := eximMessages()
	dir := t.TempDir()
	for i, m := range msgs {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), m, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	args := []string{"-q", "-F", dir, "-m", fmt.Sprint(2 * len(msgs)), "-d", "-chunking", "-chunk-size", "65536", "-pipelining", "-json", "127.0.0.1:" + port}
	if err := smtpsourcecmd.Run(context.Background(), args, &out, &errb); err != nil {
		t.Fatalf("smtp-source: %v\n%s%s", err, out.Bytes(), errb.Bytes())
	}
	if !strings.Contains(out.String(), fmt.Sprintf(`"delivered":%d,`, 2*len(msgs))) {
		t.Errorf("smtp-source: %s", out.Bytes())
	}
	got := waitDigests(t, digests, 2*len(msgs))
	delivered := regexp.MustCompile(`(?m) => \S+ .* K C="250 `)
	log := e.waitLog(delivered, 2*len(msgs))
	if _, _, err := stop(); err != nil {
		t.Fatal(err)
	}
	if want := md5Lines(append(slices.Clone(msgs), msgs...)); !slices.Equal(got, want) {
		t.Errorf("digests %q, want %q\nExim's log:\n%s", got, want, log)
	}
	if k := regexp.MustCompile(`(?m) <= \S+ H=.* P=esmtp K `).FindAll(log, -1); len(k) != 2*len(msgs) {
		t.Errorf("%d messages received with CHUNKING in Exim's log, want %d:\n%s", len(k), 2*len(msgs), log)
	}
	if k := delivered.FindAll(log, -1); len(k) != 2*len(msgs) {
		t.Errorf("%d deliveries with CHUNKING in Exim's log, want %d:\n%s", len(k), 2*len(msgs), log)
	}
}

// freePort returns a port of 127.0.0.1 for a server told its number
// (tooltest.FreePort).
func freePort(t *testing.T) string {
	t.Helper()
	port, err := tooltest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(port)
}

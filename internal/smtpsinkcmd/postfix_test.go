package smtpsinkcmd

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// Postfix, the MTA, delivers into the sink through -rule and -d: its
// smtp client relays to the sink (relayhost), and what the rules say is
// what Postfix does: the ordinary recipients' messages are delivered and
// dumped, a 550 recipient's message bounces (Postfix's bounce to the
// sender comes back through the sink from <>), a 451 recipient's is
// deferred and stays in Postfix's queue.
func TestRunPostfixThroughRules(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Postfix instance")
	}
	sendmail := tooltest.Path(t, "/usr/sbin/sendmail")
	postqueue := tooltest.Path(t, "/usr/sbin/postqueue")
	dumps := t.TempDir()
	addr, stop := run(t, "-digest", "md5", "-d", dumps+"/",
		"-rule", "rcpt:^bounce@=550 5.1.1 no such user",
		"-rule", "rcpt:^later@=451 4.2.0 try later")
	_, port, _ := strings.Cut(addr, ":")

	etc, maillog := startPostfix(t, port, "master_service_disable = inet\n", nil)

	const n = 5
	for i := range n {
		for _, to := range []string{"ok", "bounce", "later"} {
			cmd := exec.Command(sendmail, "-C", etc, "-f", "sender@example.com", fmt.Sprintf("%s@x.test", to))
			cmd.Stdin = strings.NewReader(fmt.Sprintf("Subject: %s %d\n\nmessage %d to %s\n.dot\n", to, i, i, to))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("sendmail: %v\n%s", err, out)
			}
		}
	}
	// Postfix delivers at its pace: wait until its log shows every
	// message sent, bounced or deferred at least once (or, if the sink
	// does not do as its rules say, until a bound far past that pace,
	// and fail).
	var log []byte
	count := func(status string) int { return len(regexp.MustCompile(`status=`+status).FindAll(log, -1)) }
	deferred := regexp.MustCompile(`([0-9A-F]+): to=<later@x\.test>.*status=deferred`)
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); {
		log, _ = os.ReadFile(maillog)
		ids := map[string]bool{} // a deferred message is tried again: count it once
		for _, m := range deferred.FindAllSubmatch(log, -1) {
			ids[string(m[1])] = true
		}
		// Each bounce's notice is sent too: n to ok, n notices.
		if count("sent") >= 2*n && count("bounced") >= n && len(ids) >= n {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The queue is read while the sink runs: Postfix tries deferred
	// messages again every second or two, and one tried after the sink
	// stopped is deferred for a refused connection instead.
	q, _ := exec.Command(postqueue, "-c", etc, "-p").CombinedOutput()
	out, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	if got := count("bounced"); got != n {
		t.Errorf("%d bounced, want %d:\n%s", got, n, log)
	}
	if !strings.Contains(out, fmt.Sprintf("messages %d,", 2*n)) {
		t.Errorf("sink summary:\n%s", out)
	}
	if !strings.Contains(out, "550: ") || !strings.Contains(out, "451: ") {
		t.Errorf("sink summary without the rules' replies:\n%s", out)
	}
	if c := strings.Count(string(q), "451 4.2.0 try later"); c != n {
		t.Errorf("%d deferred by the 451 rule in Postfix's queue, want %d:\n%s", c, n, q)
	}
	files, _ := filepath.Glob(filepath.Join(dumps, "*"))
	notices, oks := 0, 0
	for _, f := range files {
		b, _ := os.ReadFile(f)
		switch {
		case bytes.Contains(b, []byte("X-Mail-Args: <>")):
			notices++ // a bounce: from the null sender
		case bytes.Contains(b, []byte("X-Rcpt-Args: <ok@x.test>")) && bytes.Contains(b, []byte("\r\n.dot\r\n")):
			oks++
		}
	}
	if len(files) != 2*n || notices != n || oks != n {
		t.Errorf("%d dumps, %d bounce notices, %d to ok@; want %d, %d, %d", len(files), notices, oks, 2*n, n, n)
	}
}

// startPostfix starts a Postfix instance of the test's own, relaying all
// mail to 127.0.0.1:relayPort, with extra lines for its main.cf and, if
// master is set, its master.cf rewritten by master, until the test ends.
// It returns the instance's configuration directory and log file.
func startPostfix(t *testing.T, relayPort, extra string, master func([]byte) []byte) (etc, maillog string) {
	t.Helper()
	postfix := tooltest.Path(t, "/usr/sbin/postfix")
	if os.Geteuid() != 0 {
		tooltest.Unavailable(t, "starting Postfix needs root")
	}
	// Postfix's daemons run as its user: its directories must be theirs
	// to reach, which a test's temporary directory (0700) is not.
	dir, err := os.MkdirTemp("", "wirespeed-postfix-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	etc = filepath.Join(dir, "etc")
	queue, data := filepath.Join(dir, "queue"), filepath.Join(dir, "data")
	for _, d := range []string{etc, queue, data} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("chown", "postfix", data).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
	// Postfix's own master.cf; Debian's pristine copy where the package
	// was installed unconfigured.
	masterCF, err := os.ReadFile("/etc/postfix/master.cf")
	if err != nil {
		if masterCF, err = os.ReadFile("/usr/share/postfix/master.cf.dist"); err != nil {
			t.Fatal(err)
		}
	}
	if master != nil {
		masterCF = master(masterCF)
	}
	maillog = filepath.Join(dir, "maillog")
	mainCF := fmt.Sprintf(`compatibility_level = 3.6
queue_directory = %s
data_directory = %s
mail_owner = postfix
setgid_group = postdrop
inet_interfaces = loopback-only
inet_protocols = ipv4
myhostname = mta.test
mydestination =
relayhost = [127.0.0.1]:%s
smtp_tls_security_level = none
maillog_file = %s
maillog_file_prefixes = %s
alias_maps =
alias_database =
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 2s
`, queue, data, relayPort, maillog, dir) + extra
	if err := os.WriteFile(filepath.Join(etc, "main.cf"), []byte(mainCF), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(etc, "master.cf"), masterCF, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(postfix, "-c", etc, "start").CombinedOutput(); err != nil {
		t.Fatalf("postfix start: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command(postfix, "-c", etc, "stop").Run() })
	return etc, maillog
}

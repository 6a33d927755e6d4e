package smtpsinkcmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/smtpsourcecmd"
)

// smtp-source into Postfix's smtpd, which relays into the sink: Postfix
// takes the source's XCLIENT (its Received line names the client XCLIENT
// gave), XFORWARD (which its smtp client forwards to the sink, which
// offers it) and DSN parameters (which it relays: the sink's dump shows
// RET, ENVID, NOTIFY and the ORCPT Postfix adds), pipelined, on a kept
// connection.
func TestRunSourcePostfixSmtpd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Postfix instance")
	}
	dumps := t.TempDir()
	addr, stop := start(t, "-d", dumps+"/", "-v")
	_, port, _ := strings.Cut(addr, ":")
	smtpd := freePort(t)
	// Postfix's smtpd on smtpd, its only inet service, not chrooted; the
	// client's address XCLIENT gives may relay.
	master := func(b []byte) []byte {
		b = regexp.MustCompile(`(?m)^smtp\s+inet\s.*$`).ReplaceAll(b, nil)
		return fmt.Appendf(b, "127.0.0.1:%s inet n - n - - smtpd\n", smtpd)
	}
	_, maillog := startPostfix(t, port, `smtpd_authorized_xclient_hosts = 127.0.0.0/8
smtpd_authorized_xforward_hosts = 127.0.0.0/8
smtp_send_xforward_command = yes
mynetworks = 127.0.0.0/8 192.0.2.0/24
`, master)

	const n = 3
	var out, errb bytes.Buffer
	args := []string{"-q", "-json", "-timeout", "20s", "-m", fmt.Sprint(n), "-d", "-pipelining", "-M", "client.test", "-f", "from@client.test", "-t", "to@x.test",
		"-xclient", "NAME=c.example ADDR=192.0.2.1", "-xforward", "NAME=f.example ADDR=192.0.2.2",
		"-dsn-notify", "SUCCESS,FAILURE", "-dsn-ret", "HDRS", "-dsn-envid", "run1", "127.0.0.1:" + smtpd}
	if err := smtpsourcecmd.Run(context.Background(), args, &out, &errb); err != nil {
		log, _ := os.ReadFile(maillog)
		t.Fatalf("smtp-source: %v\n%s%s\nPostfix's log:\n%s", err, out.Bytes(), errb.Bytes(), log)
	}
	res := out.String()
	for _, want := range []string{fmt.Sprintf(`"delivered":%d,`, n), `"xclient":{"220":1}`, fmt.Sprintf(`"xforward":{"250":%d}`, n)} {
		if !strings.Contains(res, want) {
			t.Errorf("smtp-source's result without %s: %s", want, res)
		}
	}
	var files []string
	for end := time.Now().Add(time.Minute); len(files) < n && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
		files, _ = filepath.Glob(filepath.Join(dumps, "[^.]*")) // not a dump under way
	}
	_, stderr, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(maillog)
	if len(files) != n {
		t.Fatalf("%d dumps, want %d; Postfix's log:\n%s", len(files), n, log)
	}
	envid := regexp.MustCompile(`(?m)^X-Mail-Args: <from@client\.test> SIZE=\d+ ENVID=run1\.(\d) RET=HDRS\r$`)
	seen := map[string]bool{}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		m := envid.FindSubmatch(b)
		if m == nil || !bytes.Contains(b, []byte("\r\nX-Rcpt-Args: <to@x.test> ORCPT=rfc822;to@x.test NOTIFY=SUCCESS,FAILURE\r\n")) ||
			!bytes.Contains(b, []byte("\r\nReceived: from client.test (c.example [192.0.2.1])\r\n")) {
			t.Errorf("dump %s:\n%s", f, b)
			continue
		}
		seen[string(m[1])] = true
	}
	if len(seen) != n {
		t.Errorf("ENVIDs %v, want %d of them", seen, n)
	}
	if c := strings.Count(stderr, `XFORWARD NAME=f.example ADDR=192.0.2.2`); c < n {
		t.Errorf("%d XFORWARDs from Postfix with the source's attributes, want %d:\n%.4000s", c, n, stderr)
	}
}

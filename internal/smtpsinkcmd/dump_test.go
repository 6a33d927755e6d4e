package smtpsinkcmd

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"net"
	"net/smtp"
	nettextproto "net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/tooltest"
	"github.com/wirespeed/wirespeed/smtpsink"
)

// dumpRecord is a transaction as -d and -D write it: the header lines
// smtp-sink makes, then the message's bytes, then an empty line.
var dumpRecord = regexp.MustCompile(`(?s)X-Client-Addr: 127\.0\.0\.1\r\nX-Client-Proto: (E?SMTP)\r\n(?:X-Helo-Args: [^\r]*\r\n)?X-Mail-Args: ([^\r]*)\r\n((?:X-Rcpt-Args: [^\r]*\r\n)+)Received: from [^\r]* \(\[127\.0\.0\.1\]\)\r\n\tby dump\.test \(smtp-sink\) with E?SMTP id ([0-9a-f]{8});\r\n\t[^\r]*\r\n`)

// -d writes a file for each message, named by the strftime template and
// the transaction's id, holding its transaction and its bytes exactly,
// as the digest of the message sees them; -D appends them all to one
// file. Postfix's smtp-source and net/smtp send.
func TestRunDump(t *testing.T) {
	source := tooltest.Path(t, "smtp-source")
	dir := t.TempDir()
	addr, stop := run(t, "-h", "dump.test", "-digest", "md5", "-d", filepath.Join(dir, "%Y%m%d")+"/")
	if out, err := exec.Command(source, "-m", "5", "-l", "3000", "-f", "from@x.test", "-t", "to@y.test", addr).CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("smtp-source: %v\n%s", err, out)
	}
	body := "Subject: x\r\n\r\n.dot\r\nline\r\n"
	send(t, addr, body)
	out, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	day := filepath.Join(dir, time.Now().Format("20060102"))
	files, _ := filepath.Glob(filepath.Join(day, "*"))
	if len(files) != 6 {
		t.Fatalf("%d files in %s, want 6: %v", len(files), day, files)
	}
	var sums []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := dumpRecord.FindSubmatchIndex(b)
		if m == nil || m[0] != 0 || !bytes.HasSuffix(b, []byte("\r\n\r\n")) {
			t.Fatalf("%s: not a dump record:\n%q", f, b)
		}
		if id := string(b[m[8]:m[9]]); filepath.Base(f) != id {
			t.Errorf("%s: id %s", f, id)
		}
		data := b[m[1] : len(b)-2]
		s := md5.Sum(data)
		sums = append(sums, hex.EncodeToString(s[:]))
		if strings.Contains(string(b), "a@x.test") && !bytes.Equal(data, []byte(body)) {
			t.Errorf("%s: data %q, want %q", f, data, body)
		}
	}
	// Each dumped message is one the digest log names.
	for _, s := range sums {
		if !strings.Contains(out, s+" ") {
			t.Errorf("dump with digest %s: no such message in the log:\n%s", s, out)
		}
	}

	all := filepath.Join(dir, "all", "sink-%Y.dump")
	addr, stop = run(t, "-h", "dump.test", "-D", all)
	send(t, addr, body)
	send(t, addr, body)
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "all", "sink-"+time.Now().Format("2006")+".dump"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(dumpRecord.FindAll(b, -1)); n != 2 || bytes.Count(b, []byte(body+"\r\n")) != 2 {
		t.Errorf("-D: %d records:\n%q", n, b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "all", ".smtp-sink-dump-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A dump that cannot be written is reported and counted; the message is
// still taken.
func TestRunDumpError(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	addr, stop := run(t, "-json", "-d", filepath.Join(f, "x")) // a directory under a file
	send(t, addr, "x\r\n")
	out, err := stop()
	if err != nil || !strings.Contains(out, `"messages":1,`) || !strings.Contains(out, `"dump_errors":1`) {
		t.Errorf("%v: %s", err, out)
	}
}

// A transaction's dump is written aside and appears, whole, when its
// message's data ends: while the data comes, -d's directory shows no
// dump, and a message cut short leaves none (-d) and appends nothing
// (-D), as in Postfix's smtp-sink.
func TestRunDumpCutShort(t *testing.T) {
	for _, flag := range []string{"-d", "-D"} {
		t.Run(flag, func(t *testing.T) {
			dir := t.TempDir()
			addr, stop := run(t, flag, filepath.Join(dir, "dump"))
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := smtp.NewClient(c, "localhost")
			if err != nil {
				t.Fatal(err)
			}
			if err := cl.Mail("a@x.test"); err != nil {
				t.Fatal(err)
			}
			if err := cl.Rcpt("b@y.test"); err != nil {
				t.Fatal(err)
			}
			w, err := cl.Data()
			if err != nil {
				t.Fatal(err)
			}
			w.Write(bytes.Repeat([]byte("0123456789abcdef\r\n"), 4096)) // past the dump's buffer
			for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
				tmp, _ := filepath.Glob(filepath.Join(dir, ".smtp-sink-dump-*"))
				if len(tmp) == 1 {
					if fi, err := os.Stat(tmp[0]); err == nil && fi.Size() > 0 {
						break
					}
				}
				if time.Now().After(end) {
					t.Fatalf("no dump under way: %v", tmp)
				}
			}
			if shown, _ := filepath.Glob(filepath.Join(dir, "dump*")); len(shown) > 0 {
				t.Errorf("a dump shown before its message's end: %v", shown)
			}
			c.Close()
			if _, err := stop(); err != nil {
				t.Fatal(err)
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Errorf("left by the message cut short: %v", left)
			}
		})
	}
}

// Only whole messages taken are dumped: one whose data was refused (too
// large, a bare LF) or that came past -M leaves no dump. Dumps are
// readable by others (0644), as Postfix's are.
func TestRunDumpNotWhole(t *testing.T) {
	dir := t.TempDir()
	addr, stop := run(t, "-h", "dump.test", "-size", "300", "-M", "2", "-d", dir+"/")
	c := dialRaw(t, addr)
	msg := func(body string) string {
		c.send("MAIL FROM:<a@x.test>\r\nRCPT TO:<b@y.test>\r\nDATA\r\n")
		if got := c.codes(3); got != "250 250 354" {
			t.Fatalf("envelope: %s", got)
		}
		c.send(body + ".\r\n")
		return c.codes(1)
	}
	if c.codes(1) != "220" {
		t.Fatal("no greeting")
	}
	c.send("EHLO client.test\r\n")
	c.codes(1)
	for _, m := range []struct{ body, code string }{
		{"first\r\n", "250"},
		{strings.Repeat("too large\r\n", 40), "552"},
		{"bare\nLF\r\n", "550"},
		{"second\r\n", "250"}, // the -M count
		{"third\r\n", "421"},
	} {
		if code := msg(m.body); code != m.code {
			t.Errorf("%.20q: %s, want %s", m.body, code, m.code)
		}
	}
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var bodies []string
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		m := dumpRecord.FindIndex(b)
		if m == nil {
			t.Fatalf("%s: not a dump:\n%q", e.Name(), b)
		}
		bodies = append(bodies, string(b[m[1]:]))
		if fi, err := e.Info(); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", e.Name(), fi.Mode())
		}
	}
	slices.Sort(bodies)
	if want := []string{"first\r\n\r\n", "second\r\n\r\n"}; !slices.Equal(bodies, want) {
		t.Errorf("dumps of %q, want %q", bodies, want)
	}
}

// A session without HELO is dumped as Postfix's smtp-sink dumps it: the
// Received line names the client's address in brackets.
func TestRunDumpNoHelo(t *testing.T) {
	b := dumpOf(t, []step{{220, ""}, {250, "MAIL FROM:<a@x.test>"}, {250, "RCPT TO:<b@y.test>"}, {354, "DATA"}, {250, "x\r\n."}, {221, "QUIT"}})
	if !bytes.Contains(b, []byte("\r\nReceived: from [127.0.0.1] ([127.0.0.1])\r\n")) {
		t.Fatalf("dump %q, want Received: from [127.0.0.1] ([127.0.0.1])", b)
	}
}

// A message sent with BDAT need not end in CRLF: its dump gets one before
// the empty line that ends it, so the next message's dump (-D) starts on
// a line of its own after an empty one.
func TestRunDumpNoLineEnd(t *testing.T) {
	b := dumpOf(t, []step{{220, ""}, {250, "EHLO c"}, {250, "MAIL FROM:<a@x.test>"}, {250, "RCPT TO:<b@y.test>"}, {250, "BDAT 5 LAST\r\nhello"},
		{250, "MAIL FROM:<a@x.test>"}, {250, "RCPT TO:<b@y.test>"}, {250, "BDAT 8 LAST\r\nsecond\r\n"}, {221, "QUIT"}})
	if !bytes.Contains(b, []byte("\r\nhello\r\n\r\nX-Client-Addr: ")) || !bytes.HasSuffix(b, []byte("\r\nsecond\r\n\r\n")) {
		t.Fatalf("dump %q", b)
	}
}

// A step of a conversation: a line sent (none if empty; a BDAT command
// with its chunk, as it is) and the reply's code.
type step struct {
	code int
	cmd  string
}

// dumpOf has one session go through steps with smtp-sink -D and returns
// the dump.
func dumpOf(t *testing.T, steps []step) []byte {
	t.Helper()
	dir := t.TempDir()
	addr, stop := run(t, "-D", filepath.Join(dir, "all"))
	c, err := nettextproto.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if strings.HasPrefix(s.cmd, "BDAT") {
			c.W.WriteString(s.cmd)
			c.W.Flush()
		} else if s.cmd != "" {
			c.PrintfLine("%s", s.cmd)
		}
		if _, _, err := c.ReadResponse(s.code); err != nil {
			t.Fatalf("%s: %v", s.cmd, err)
		}
	}
	c.Close()
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "all"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The Received line's date is Postfix's (mail_date: strftime's "%a, %e
// %b %Y %H:%M:%S", the offset, the zone's name): a day of the month
// under 10 is padded with a space, as Postfix's smtp-sink dumps it.
func TestDumpReceivedDate(t *testing.T) {
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 12, 5, 19, 55, 54, 0, time.UTC), "\tSat,  5 Dec 2026 19:55:54 +0000 (UTC)\r\n"},
		{time.Date(2026, 12, 15, 9, 5, 4, 0, time.FixedZone("CET", 3600)), "\tTue, 15 Dec 2026 09:05:04 +0100 (CET)\r\n"},
	} {
		dir := t.TempDir()
		d := &dumper{tmpl: filepath.Join(dir, "all"), append: true, host: "dump.test", now: func() time.Time { return c.at }, logf: t.Errorf}
		w := d.capture(smtpsink.Transaction{Session: 1, RemoteAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 25}, Proto: "ESMTP", Helo: "c", MailArgs: "<a@x.test>", RcptArgs: []string{"<b@y.test>"}})
		w.Write([]byte("x\r\n"))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "all"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(" id ")) || !bytes.Contains(b, []byte(";\r\n"+c.want+"x\r\n")) {
			t.Errorf("dump %q, want the Received line's date %q", b, c.want)
		}
	}
}

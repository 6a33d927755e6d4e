package smtpsinkcmd

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/smtp"
	nettextproto "net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
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

	// -D makes missing directories as -d does, and as Postfix's makes
	// them for both: dir/all does not exist yet.
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

// A dump that cannot be written (its directory replaced by a file while
// the sink runs) is reported and counted, and its message is refused
// with 451: not acknowledged with a 250 that claims it stored. The sink
// goes on, and takes the next message once the directory is back.
func TestRunDumpError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dumps")
	addr, stop := run(t, "-json", "-d", filepath.Join(dir, "day")+"/")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sendRefused(t, addr, "x\r\n", 451)
	os.Remove(dir)
	send(t, addr, "y\r\n")
	out, err := stop()
	if err != nil || !strings.Contains(out, `"messages":1,`) || !strings.Contains(out, `"dump_errors":1`) || !strings.Contains(out, `"451":1`) {
		t.Errorf("%v: %s", err, out)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "day", "*")); len(files) != 1 {
		t.Errorf("dumps %v, want one", files)
	}
}

// A template that cannot be used fails at start, before the sink
// listens, not at each message: a directory that cannot be made (under
// a file, or not writable), a name too long, and for -D, a template
// that names a directory (ending in a slash, or one that exists: a usage
// error, status 2). The others are the
// file system's errors (*fs.PathError), status 1.
func TestRunDumpStartErrors(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	os.WriteFile(file, nil, 0o644)
	// The context is done: a run that starts ends at once.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		args   []string
		status int
		errno  error
	}{
		{[]string{"-d", filepath.Join(file, "x") + "/"}, 1, syscall.ENOTDIR},
		{[]string{"-D", filepath.Join(file, "all")}, 1, syscall.ENOTDIR},
		{[]string{"-d", filepath.Join(tmp, strings.Repeat("n", 250))}, 1, syscall.ENAMETOOLONG},
		{[]string{"-D", filepath.Join(tmp, strings.Repeat("n", 256))}, 1, syscall.ENAMETOOLONG},
		{[]string{"-D", tmp + "/"}, 2, nil},
		{[]string{"-D", tmp}, 2, nil}, // an existing directory
	} {
		err := Run(done, append([]string{"-addr", "127.0.0.1:0"}, c.args...), io.Discard, io.Discard)
		status, _ := cli.Status(err)
		var pe *fs.PathError
		var le *os.LinkError
		if status != c.status || c.errno != nil && (!errors.Is(err, c.errno) || !errors.As(err, &pe) && !errors.As(err, &le)) ||
			!strings.Contains(fmt.Sprint(err), c.args[0]) {
			t.Errorf("%q: %v (status %d), want status %d, %v", c.args, err, status, c.status, c.errno)
		}
	}
	if os.Geteuid() == 0 {
		return // root writes anywhere
	}
	ro := filepath.Join(tmp, "ro")
	os.Mkdir(ro, 0o555)
	err := Run(done, []string{"-addr", "127.0.0.1:0", "-d", filepath.Join(ro, "x") + "/"}, io.Discard, io.Discard)
	if status, _ := cli.Status(err); status != 1 || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("-d in a directory not writable: %v (status %d)", err, status)
	}
}

// The start-up probe of a template leaves nothing behind: not the
// directories it made (a %s or %Q names one that no message would
// use: each run left an empty one), nor its files, whether the probe
// passes or fails (a name too long, found once the directory is made).
func TestRunDumpProbeLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	done, cancel := context.WithCancel(context.Background())
	cancel() // a run that starts ends at once
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"-d", filepath.Join(tmp, "%s", "%Q") + "/"}, true},
		{[]string{"-d", filepath.Join(tmp, "a", "%Y%m%d", "%H.")}, true},
		{[]string{"-D", filepath.Join(tmp, "b", "%s", "all")}, true},
		{[]string{"-d", filepath.Join(tmp, "c", "%s", strings.Repeat("n", 250))}, false},
	} {
		err := Run(done, append([]string{"-addr", "127.0.0.1:0"}, c.args...), io.Discard, io.Discard)
		if (err == nil) != c.ok {
			t.Errorf("%q: %v", c.args, err)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("%q: left %v", c.args, left)
		}
	}
	// A directory that was there stays.
	there := filepath.Join(tmp, "there")
	os.Mkdir(there, 0o755)
	if err := Run(done, []string{"-addr", "127.0.0.1:0", "-d", there + "/%s/"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if left, err := os.ReadDir(there); err != nil || len(left) != 0 {
		t.Errorf("%s: %v %v", there, left, err)
	}
}

// Two messages whose dumps get the same name (the template and the
// random id: one in 2^32, but among a million messages a hundred or so)
// are both kept: the second takes another id, and never replaces the
// first nor is lost.
func TestDumpSameID(t *testing.T) {
	ids := make(chan string, 3)
	ids <- "00000001"
	ids <- "00000001"
	ids <- "00000002"
	dir := t.TempDir()
	d := &dumper{tmpl: dir + "/", host: "dump.test", now: time.Now, newID: func() string { return <-ids }, logf: t.Errorf}
	for i, body := range []string{"first\r\n", "second\r\n"} {
		w := d.capture(smtpsink.Transaction{Session: uint64(i + 1), RemoteAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 25}, Proto: "ESMTP", Helo: "c", MailArgs: "<a@x.test>", RcptArgs: []string{"<b@y.test>"}})
		w.Write([]byte(body))
		if err := w.Close(); err != nil {
			t.Fatalf("message %d: %v", i+1, err)
		}
	}
	var bodies []string
	for _, id := range []string{"00000001", "00000002"} {
		b, _ := os.ReadFile(filepath.Join(dir, id))
		bodies = append(bodies, string(b))
	}
	if !strings.HasSuffix(bodies[0], "\r\nfirst\r\n\r\n") || !strings.HasSuffix(bodies[1], "\r\nsecond\r\n\r\n") {
		t.Errorf("dumps %q", bodies)
	}
}

// On a full file system (a 64 KiB tmpfs), a message whose dump does not
// fit is refused with 451 (net/smtp hears it), counted as not dumped,
// and leaves nothing: no temporary file, and with -D no part of it
// appended to the shared file, which holds whole transactions only. The
// sink stays up and takes a message that fits. Needs root to mount.
func TestRunDumpFullFS(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	for _, flag := range []string{"-d", "-D"} {
		t.Run(flag, func(t *testing.T) {
			dir := t.TempDir()
			if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
				t.Skipf("cannot mount a tmpfs: %v %s", err, out)
			}
			t.Cleanup(func() { exec.Command("umount", dir).Run() })
			target := dir + "/"
			if flag == "-D" {
				target = filepath.Join(dir, "all")
			}
			addr, stop := run(t, "-json", "-h", "dump.test", flag, target)
			send(t, addr, "small\r\n")
			// 40 KiB: it fits once (-D's temporary file), not twice (its
			// append); -d's fits not at all after a 30 KiB filler.
			if flag == "-d" {
				os.WriteFile(filepath.Join(dir, ".filler"), make([]byte, 30<<10), 0o644)
			}
			big := strings.Repeat(strings.Repeat("x", 78)+"\r\n", 512)
			sendRefused(t, addr, big, 451)
			os.Remove(filepath.Join(dir, ".filler"))
			send(t, addr, "after\r\n")
			out, err := stop()
			if err != nil || !strings.Contains(out, `"messages":2,`) || !strings.Contains(out, `"dump_errors":1`) {
				t.Errorf("%v: %s", err, out)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".smtp-sink-dump-*")); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
			var all []byte
			files, _ := filepath.Glob(filepath.Join(dir, "*"))
			for _, f := range files {
				b, _ := os.ReadFile(f)
				all = append(all, b...)
			}
			if n := len(dumpRecord.FindAll(all, -1)); n != 2 || bytes.Contains(all, []byte("xxxx")) ||
				!bytes.Contains(all, []byte("\r\nsmall\r\n\r\n")) || !bytes.Contains(all, []byte("\r\nafter\r\n\r\n")) {
				t.Errorf("%d records (want 2, whole, the large one not among them) in %v:\n%.300q", n, files, all)
			}
		})
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
		d := &dumper{tmpl: filepath.Join(dir, "all"), append: true, host: "dump.test", now: func() time.Time { return c.at }, newID: randomID, logf: t.Errorf}
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

// A message refused because its dump failed does not count for -M: -M 2
// still takes two messages dumped, then stops by itself, where the
// failed one used to use up a place and the second good one got 421.
func TestRunDumpErrorMaxMessages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dumps")
	addr, summary := runUntilDone(t, "-addr", "127.0.0.1:0", "-M", "2", "-d", filepath.Join(dir, "day")+"/")
	os.RemoveAll(dir)
	os.WriteFile(dir, nil, 0o644)
	sendRefused(t, addr, "x\r\n", 451)
	os.Remove(dir)
	send(t, addr, "one\r\n")
	send(t, addr, "two\r\n")
	if rest := summary(); !strings.Contains(rest, "messages 2 (1 not dumped),") {
		t.Errorf("summary %q", rest)
	}
}

// sendRefused sends a message with net/smtp, which must hear code.
func sendRefused(t *testing.T, addr, body string, code int) {
	t.Helper()
	err := smtp.SendMail(addr, nil, "a@x.test", []string{"b@y.test"}, []byte(body))
	var te *nettextproto.Error
	if !errors.As(err, &te) || te.Code != code {
		t.Errorf("message %.20q: %v, want %d", body, err, code)
	}
}

// A dump is named and dated by its transaction's MAIL, as Postfix's
// smtp-sink's is, not by when its data came.
func TestDumpDatedAtMail(t *testing.T) {
	dir := t.TempDir()
	mail := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local) // the sessions' clock is local time
	d := &dumper{tmpl: dir + "/%H%M%S.", host: "dump.test", now: func() time.Time { return mail.Add(time.Hour) },
		newID: func() string { return "0000000a" }, logf: t.Errorf}
	w := d.capture(smtpsink.Transaction{Session: 1, RemoteAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 25}, Proto: "ESMTP",
		Helo: "c", MailArgs: "<a@x.test>", Mail: mail, RcptArgs: []string{"<b@y.test>"}})
	w.Write([]byte("hi\r\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "030405.0000000a"))
	if want := "\t" + mail.Format("Mon, _2 Jan 2006 15:04:05 -0700 (MST)") + "\r\n"; err != nil || !strings.Contains(string(b), want) {
		t.Errorf("dump %q, %v; want it dated %q", b, err, want)
	}
}

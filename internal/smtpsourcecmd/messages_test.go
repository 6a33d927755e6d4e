package smtpsourcecmd

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/smtpsource"
)

// -F DIR: 12 files (LF line ends, sent as CRLF) as 36 messages, each file
// 3 times; -F on an mbox; -l MIN:MAX, -header, -from-file and -to-file
// reach the run; bad values are usage errors.
func TestMessageSources(t *testing.T) {
	dir := t.TempDir()
	want := map[string]int{}
	for i := range 12 {
		body := fmt.Sprintf("Subject: %d\n\n%s\n.\n", i, strings.Repeat("a", i*100))
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d", i)), []byte(body), 0o644)
		crlf := strings.ReplaceAll(body, "\n", "\r\n")
		want[fmt.Sprintf("%x %d", md5.Sum([]byte(crlf)), len(crlf))] += 3
	}
	run := func(args ...string) (map[string]int, *sink, string, error) {
		var log bytes.Buffer
		s := &sink{log: &log}
		addr := s.start(t)
		var out, errb bytes.Buffer
		err := Run(context.Background(), append(args, "-q", addr), &out, &errb)
		s.mu.Lock()
		defer s.mu.Unlock()
		got := map[string]int{}
		for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				got[f[0]+" "+f[1]]++
			}
		}
		return got, s, out.String(), err
	}
	got, _, out, err := run("-F", dir, "-m", "36", "-s", "3", "-d", "-pipelining")
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("-F DIR: %v\n%v\nwant %v\n%s", err, got, want, out)
	}

	mbox := filepath.Join(t.TempDir(), "mbox")
	os.WriteFile(mbox, []byte("From x Thu Dec  3 10:00:00 2026\nSubject: 1\n\n>From y\n\nFrom x Thu Dec  3 10:00:00 2026\nSubject: 2\n\nz\n"), 0o644)
	got, _, out, err = run("-F", mbox, "-m", "4")
	m1, m2 := "Subject: 1\r\n\r\nFrom y\r\n", "Subject: 2\r\n\r\nz\r\n"
	wantMbox := map[string]int{fmt.Sprintf("%x %d", md5.Sum([]byte(m1)), len(m1)): 2, fmt.Sprintf("%x %d", md5.Sum([]byte(m2)), len(m2)): 2}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(wantMbox) {
		t.Errorf("-F mbox: %v\n%v\nwant %v\n%s", err, got, wantMbox, out)
	}

	lists := t.TempDir()
	os.WriteFile(filepath.Join(lists, "from"), []byte("# senders\na@example.com\n\nb@example.com\n"), 0o644)
	os.WriteFile(filepath.Join(lists, "to"), []byte("x@example.com\ny@example.com\n"), 0o644)
	_, s, out, err := run("-m", "2", "-l", "100:200", "-json", "-header", "X-A: 1", "-header", "X-B: 2",
		"-from-file", filepath.Join(lists, "from"), "-to-file", filepath.Join(lists, "to"))
	var res struct {
		Length    int `json:"length"`
		LengthMax int `json:"length_max"`
		Delivered int `json:"delivered"`
	}
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || res.Length != 100 || res.LengthMax != 200 || res.Delivered != 2 {
		t.Errorf("-l 100:200: %v %+v\n%s", err, res, out)
	}
	cmds := strings.Join(s.cmds, "|")
	for _, w := range []string{"MAIL FROM:<a@example.com>|RCPT TO:<x@example.com>", "MAIL FROM:<b@example.com>|RCPT TO:<y@example.com>"} {
		if !strings.Contains(cmds, w) {
			t.Errorf("commands %s, want %s", cmds, w)
		}
	}

	var o, e bytes.Buffer
	for _, args := range [][]string{{"-l", "5:4"}, {"-l", "x"}, {"-l", "1:"}, {"-to-file", filepath.Join(lists, "none")}, {"-from-file", os.DevNull}} {
		if st, _ := cli.Status(Run(context.Background(), append(args, "127.0.0.1:1"), &o, &e)); st == 0 {
			t.Errorf("%q: no error", args)
		}
	}
	// A body or a recipient list too large to make was made all the same:
	// -l 99999999999999 died out of memory, -r 100000000 took minutes and
	// gigabytes before the first connection. They are usage errors that
	// name the flag.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-l", strconv.Itoa(smtpsource.MaxLength + 1)}, "flag -l: "},
		{[]string{"-l", "1:" + strconv.Itoa(smtpsource.MaxLength+1)}, "flag -l: "},
		{[]string{"-r", strconv.Itoa(smtpsource.MaxRecipients + 1)}, "smtp-source: -r "},
	} {
		e.Reset()
		err := Run(context.Background(), append(c.args, "-q", "127.0.0.1:1"), &o, &e)
		msg := e.String()
		if err != nil {
			msg += err.Error()
		}
		if st, _ := cli.Status(err); st != 2 || !strings.Contains(msg, c.want) || !strings.Contains(msg, "want at most") {
			t.Errorf("%q: status %d, %q; want 2 and %q", c.args, st, msg, c.want)
		}
	}
	if st, print := cli.Status(Run(context.Background(), []string{"-from-file", os.DevNull, "127.0.0.1:1"}, &o, &e)); st != 2 || !print {
		t.Errorf("empty -from-file: status %d", st)
	}
	// -r past -to-file's addresses names both (it was Config.Check's
	// unnamed "2 recipients per message from a list of 1").
	one := filepath.Join(t.TempDir(), "one")
	if err := os.WriteFile(one, []byte("a@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), []string{"-r", "2", "-to-file", one, "-q", "127.0.0.1:1"}, &o, &e); !errors.Is(err, cli.ErrUsage) ||
		!strings.Contains(err.Error(), "-r 2") || !strings.Contains(err.Error(), "-to-file") {
		t.Errorf("-r 2 -to-file of 1: %v, want a usage error naming -r and -to-file", err)
	}
	// Values smtpsource refuses are its typed ErrConfig, as -body's are.
	for _, args := range [][]string{{"-header", "no colon"}, {"-dsn-ret", "BODY"}, {"-dsn-notify", "NEVER,SUCCESS"}} {
		if err := Run(context.Background(), append(args, "-q", "127.0.0.1:1"), &o, &e); !errors.Is(err, smtpsource.ErrConfig) {
			t.Errorf("%q: %v, want smtpsource.ErrConfig", args, err)
		}
	}
	// -M with a name EHLO cannot carry went out as a malformed EHLO; it
	// is a usage error that names the flag and the name.
	err = Run(context.Background(), []string{"-M", "my host", "-q", "127.0.0.1:1"}, &o, &e)
	if st, print := cli.Status(err); st != 2 || !print || !errors.Is(err, smtpsource.ErrConfig) ||
		!strings.Contains(err.Error(), "-M") || !strings.Contains(err.Error(), `"my host"`) {
		t.Errorf("-M 'my host': %v (status %d)", err, st)
	}
}

// Flags that contradict each other were taken silently, one of them
// winning (-f over -from-file lost, -S and -l dropped with -F...): each
// pair is a usage error, exit 2, naming both flags. Postfix's
// smtp-source refuses -l with -F as well. Given at their "off" values
// (-tls=false, -w 0, -qps 0) they are no contradiction.
func TestConflictingFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "m")
	if err := os.WriteFile(file, []byte("Subject: m\n\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "list")
	if err := os.WriteFile(list, []byte("a@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var o, e strings.Builder
	for _, c := range []struct {
		args        []string
		flag, flag2 string
	}{
		{[]string{"-f", "a@example.com", "-from-file", list}, "-f", "-from-file"},
		{[]string{"-f", "", "-from-file", list}, "-f", "-from-file"},
		{[]string{"-t", "a@example.com", "-to-file", list}, "-t", "-to-file"},
		{[]string{"-N", "-to-file", list}, "-N", "-to-file"},
		{[]string{"-F", file, "-l", "100"}, "-F", "-l"},
		{[]string{"-l", "0", "-F", file}, "-F", "-l"},
		{[]string{"-F", file, "-S", "subject"}, "-F", "-S"},
		{[]string{"-F", file, "-body", "mail"}, "-F", "-body"},
		{[]string{"-body", "file:" + file, "-l", "100"}, "-body", "-l"},
		{[]string{"-body", "file:" + file, "-S", "x"}, "-body", "-S"},
		{[]string{"-w", "1", "-R", "1"}, "-w", "-R"},
		{[]string{"-qps", "5", "-R", "1"}, "-R", "-qps"},
		{[]string{"-tls", "-tls-implicit"}, "-tls", "-tls-implicit"},
		{[]string{"-o", "-header", "X-A: b"}, "-o", "-header"},
		{[]string{"-o", "-S", "subject"}, "-o", "-S"},
		{[]string{"-o", "-pipelining"}, "-o", "-pipelining"},
		{[]string{"-chunking", "-o"}, "-o", "-chunking"},
		{[]string{"-o", "-xclient", "NAME=a"}, "-o", "-xclient"},
		{[]string{"-o", "-xforward", "NAME=a"}, "-o", "-xforward"},
		{[]string{"-o", "-dsn-notify", "NEVER"}, "-o", "-dsn-notify"},
		{[]string{"-o", "-dsn-ret", "FULL"}, "-o", "-dsn-ret"},
		{[]string{"-o", "-dsn-envid", "x"}, "-o", "-dsn-envid"},
	} {
		err := Run(context.Background(), append(c.args, "-q", "127.0.0.1:1"), &o, &e)
		if st, print := cli.Status(err); st != 2 || !print || !strings.Contains(err.Error(), c.flag+" ") || !strings.Contains(err.Error(), c.flag2+" ") {
			t.Errorf("%q: status %d, %v; want 2 naming %s and %s", c.args, st, err, c.flag, c.flag2)
		}
	}
	for _, args := range [][]string{{"-tls=false", "-tls-implicit", "-tls-insecure"}, {"-w", "0", "-R", "1"}, {"-qps", "0", "-w", "1"}} {
		err := Run(context.Background(), append(args, "-q", "-dial-timeout", "1s", "127.0.0.1:1"), &o, &e)
		if errors.Is(err, cli.ErrUsage) {
			t.Errorf("%q: %v, want no usage error", args, err)
		}
	}
}

// TestNeededFlags: a flag that means something only with another is a
// usage error without it, naming both, where it was ignored (-chunk-size,
// -spin) or refused by Config.Check without a name (-auth-mech).
func TestNeededFlags(t *testing.T) {
	var o, e strings.Builder
	for _, c := range []struct {
		args  []string
		named []string
	}{
		{[]string{"-auth-mech", "LOGIN"}, []string{"-auth-mech", "-auth"}},
		{[]string{"-auth", "", "-auth-mech", "LOGIN"}, []string{"-auth-mech", "-auth"}},
		{[]string{"-chunk-size", "100"}, []string{"-chunk-size", "-chunking"}},
		{[]string{"-chunking=false", "-chunk-size", "100"}, []string{"-chunk-size", "-chunking"}},
		{[]string{"-spin", "1ms"}, []string{"-spin", "-qps or -w or -R"}},
		{[]string{"-qps", "0", "-spin", "1ms"}, []string{"-spin", "-qps or -w or -R"}},
		{[]string{"-tls-insecure"}, []string{"-tls-insecure", "-tls or -tls-implicit"}},
		{[]string{"-tls-name", "mx.example"}, []string{"-tls-name", "-tls or -tls-implicit"}},
		{[]string{"-tls-resume"}, []string{"-tls-resume", "-tls or -tls-implicit"}},
		{[]string{"-tls-ca", "ca.pem"}, []string{"-tls-ca", "-tls or -tls-implicit"}},
		{[]string{"-tls", "-tls-cert", "c.pem"}, []string{"-tls-cert", "-tls-key"}},
		{[]string{"-tls-implicit", "-tls-key", "k.pem"}, []string{"-tls-key", "-tls-cert"}},
		{[]string{"-tls-cert", "c.pem", "-tls-key", "k.pem"}, []string{"-tls-cert", "-tls or -tls-implicit"}},
		{[]string{"-tls", "-tls-ca", "ca.pem", "-tls-insecure"}, []string{"-tls-ca", "-tls-insecure"}},
	} {
		err := Run(context.Background(), append(c.args, "-q", "127.0.0.1:1"), &o, &e)
		st, print := cli.Status(err)
		ok := st == 2 && print
		for _, n := range c.named {
			ok = ok && strings.Contains(err.Error(), n)
		}
		if !ok {
			t.Errorf("%q: status %d, %v; want 2 naming %q", c.args, st, err, c.named)
		}
	}
	// Values that need another flag's, named (they were Config.Check's
	// unnamed errors, or, TLS over unix: with no name, Run's, exit 1).
	for _, c := range []struct {
		args  []string
		named []string
	}{
		{[]string{"-tls", "-q", "unix:/nonexistent/s"}, []string{"-tls", "-tls-name"}},
		{[]string{"-tls-implicit", "-q", "unix:/nonexistent/s"}, []string{"-tls-implicit", "-tls-name"}},
		// An empty host (it dials the local system) has no name either
		// (Config.Check's error, which named no flag).
		{[]string{"-tls", "-q", ":1"}, []string{"-tls", "-tls-name"}},
		{[]string{"-tls-implicit", "-q", "inet::1"}, []string{"-tls-implicit", "-tls-name"}},
		{[]string{"-qps", "10", "-duration", "50ms", "-q", "127.0.0.1:1"}, []string{"-duration", "-qps"}},
		{[]string{"-body", "base64", "-q", "127.0.0.1:1"}, []string{"-body", "-l"}},
	} {
		err := Run(context.Background(), c.args, &o, &e)
		st, print := cli.Status(err)
		ok := st == 2 && print
		for _, n := range c.named {
			ok = ok && strings.Contains(err.Error(), n+" ")
		}
		if !ok {
			t.Errorf("%q: status %d, %v; want 2 naming %q", c.args, st, err, c.named)
		}
	}
	for _, args := range [][]string{
		{"-auth", "u:p", "-auth-mech", "LOGIN"},
		{"-chunking", "-chunk-size", "100"},
		{"-qps", "5", "-spin", "1ms"},
		{"-qps", "5/1s", "-spin", "1us"},
		{"-w", "1", "-spin", "1ms"},
		{"-R", "1", "-spin", "1ms"},
		{"-tls-implicit", "-tls-insecure", "-tls-resume", "-tls-name", "mx.example"},
		{"-tls-ca", "", "-tls-insecure=false"},
	} {
		err := Run(context.Background(), append(args, "-q", "-dial-timeout", "1s", "127.0.0.1:1"), &o, &e)
		if errors.Is(err, cli.ErrUsage) {
			t.Errorf("%q: %v, want no usage error", args, err)
		}
	}
}

// The flag values Config.Check refuses are usage errors naming the flag
// (they named none: "line break or NUL in an address, name or subject",
// "NOTIFY=X: ..."), and still smtpsource.ErrConfig.
func TestConfigErrorsNameFlag(t *testing.T) {
	toFile := filepath.Join(t.TempDir(), "to")
	if err := os.WriteFile(toFile, []byte("a@example\nb<c@example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var o, e strings.Builder
	for _, args := range [][]string{
		{"-f", "a\r\nRCPT TO:<b>"}, {"-f", "a>b"}, {"-f", "<<a>>"},
		{"-t", "a\nb"}, {"-t", "a<b"},
		{"-M", "a\nb"}, {"-S", "a\r\nBcc: x"},
		{"-xclient", "NAME=a\r\nQUIT"}, {"-xforward", "ADDR=1\n"},
		{"-dsn-notify", "SOMETIMES"}, {"-dsn-ret", "ALL"}, {"-dsn-envid", "a\tb"},
		{"-header", "no colon"}, {"-auth", "u:p", "-auth-mech", "NTLM"},
		{"-to-file", toFile},
	} {
		err := Run(context.Background(), append(args, "-q", "127.0.0.1:1"), &o, &e)
		st, print := cli.Status(err)
		if st != 2 || !print || !errors.Is(err, smtpsource.ErrConfig) || !strings.HasPrefix(err.Error(), "smtp-source: "+args[len(args)-2]+": ") {
			t.Errorf("%q: status %d, %v; want 2, smtpsource.ErrConfig, naming %s", args, st, err, args[len(args)-2])
		}
	}
}

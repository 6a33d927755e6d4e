package smtpsinkcmd

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// The command against clients nobody here wrote: swaks's messages are
// logged with the digest of the data it was given, and Postfix's
// smtp-source, in SMTP and LMTP, gets no error reply.
func TestRunInterop(t *testing.T) {
	swaks := tooltest.Path(t, "swaks")
	source := tooltest.Path(t, "smtp-source")
	for _, lmtp := range []bool{false, true} {
		var flags, swaksProto, sourceL []string
		if lmtp {
			flags, swaksProto, sourceL = []string{"-L"}, []string{"--protocol", "LMTP"}, []string{"-L"}
		}
		addr, stop := run(t, append(flags, "-digest", "md5")...)
		data := "Subject: cli\n\nbody\n.dot\n"
		for range 3 {
			args := append([]string{"--server", addr, "--to", "a@b.test", "--data", data, "--pipeline"}, swaksProto...)
			if out, err := exec.Command(swaks, args...).CombinedOutput(); err != nil {
				t.Fatalf("swaks: %v\n%s", err, out)
			}
		}
		args := append([]string{"-s", "2", "-m", "20", "-l", "4096", "-d"}, sourceL...)
		if out, err := exec.Command(source, append(args, addr)...).CombinedOutput(); err != nil || len(out) > 0 {
			t.Fatalf("smtp-source: %v\n%s", err, out)
		}
		out, err := stop()
		if err != nil {
			t.Fatal(err)
		}
		// swaks ends the data with CRLF "." CRLF after what it is given.
		want := strings.ReplaceAll(data, "\n", "\r\n") + "\r\n"
		sum := md5.Sum([]byte(want))
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3+20+2 {
			t.Fatalf("output:\n%s", out)
		}
		for i, l := range lines[:3] {
			f := strings.Fields(l)
			if len(f) != 3 || f[0] != hex.EncodeToString(sum[:]) || f[1] != "30" || f[2] != []string{"1-1", "2-1", "3-1"}[i] {
				t.Errorf("swaks message %d: %q, want digest %x of %q", i+1, l, sum, want)
			}
		}
		if !strings.HasPrefix(lines[23], "sessions 5 (aborted 0), messages 23, recipients 23,") || lines[24] != "error replies 0" {
			t.Errorf("summary:\n%s", strings.Join(lines[23:], "\n"))
		}
	}
}

// digestLines returns the -digest lines of the command's output and its
// summary, checking each line's digest and size against data's.
func checkDigests(t *testing.T, out string, n int, data string) (summary string) {
	t.Helper()
	sum := md5.Sum([]byte(data))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != n+2 {
		t.Fatalf("want %d digest lines; output:\n%s", n, out)
	}
	for i, l := range lines[:n] {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != hex.EncodeToString(sum[:]) || f[1] != strconv.Itoa(len(data)) {
			t.Errorf("message %d: %q, want digest %x and size %d of %q", i+1, l, sum, len(data), data)
		}
	}
	return strings.Join(lines[n:], "\n")
}

// writeAuthFile writes an -auth-file with user u, password "p:w".
func writeAuthFile(t *testing.T) string {
	f := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(f, []byte("# test users\nu:p:w\n\nother:x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// swaks, which nobody here wrote, over STARTTLS with AUTH PLAIN and
// LOGIN, pipelined, and over implicit TLS: every message arrives with the
// digest of the data swaks was given; a wrong password gets 535.
func TestRunSwaksTLSAuth(t *testing.T) {
	swaks := tooltest.Path(t, "swaks")
	users := writeAuthFile(t)
	data := "Subject: tls\n\nbody\n.dot\n"
	want := strings.ReplaceAll(data, "\n", "\r\n") + "\r\n"
	for _, tc := range []struct {
		name  string
		flags []string
		runs  [][]string
	}{
		{"starttls", []string{"-tls", "-tls-required"}, [][]string{
			{"--tls", "--auth", "PLAIN"},
			{"--tls", "--auth", "LOGIN"},
			{"--tls", "--auth", "PLAIN", "--pipeline"},
			{"--tls", "--auth", "LOGIN", "--pipeline"},
		}},
		{"implicit", []string{"-tls-implicit"}, [][]string{
			{"--tlsc", "--auth", "PLAIN"},
			{"--tlsc", "--auth", "LOGIN", "--pipeline"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, stop := run(t, append(tc.flags, "-auth", "-auth-file", users, "-digest", "md5")...)
			host, port, _ := net.SplitHostPort(addr)
			base := []string{"--server", host, "--port", port, "--from", "a@x.test", "--to", "b@y.test", "--data", data, "--timeout", "20"}
			for _, r := range tc.runs {
				args := append(append(base, r...), "--auth-user", "u", "--auth-password", "p:w")
				out, err := exec.Command(swaks, args...).CombinedOutput()
				if err != nil || strings.Contains(string(out), "<** ") || strings.Contains(string(out), "<~* ") { // swaks's error replies, plain and over TLS
					t.Fatalf("swaks %v: %v\n%s", r, err, out)
				}
				if !strings.Contains(string(out), "235 2.7.0") {
					t.Errorf("swaks %v did not authenticate:\n%s", r, out)
				}
				if slices.Contains(r, "--pipeline") && !regexp.MustCompile(`~> MAIL FROM:<a@x.test>\n *~> RCPT TO:<b@y.test>\n *~> DATA\n`).Match(out) {
					t.Errorf("swaks %v did not pipeline:\n%s", r, out)
				}
			}
			bad := append(append(base, tc.runs[0]...), "--auth-user", "u", "--auth-password", "wrong")
			if out, err := exec.Command(swaks, bad...).CombinedOutput(); err == nil || !strings.Contains(string(out), "<~* 535 5.7.8") {
				t.Errorf("wrong password: %v\n%s", err, out)
			}
			out, err := stop()
			if err != nil {
				t.Fatal(err)
			}
			n := len(tc.runs)
			summary := checkDigests(t, out, n, want)
			if !strings.HasPrefix(summary, fmt.Sprintf("sessions %d (aborted 0, tls %d), messages %d,", n+1, n+1, n)) || !strings.HasSuffix(summary, "error replies 1 (535: 1)") {
				t.Errorf("summary:\n%s", summary)
			}
		})
	}
}

// openssl s_client -starttls smtp, which nobody here wrote, fed the
// session on its standard input (it sends each line as it reads it, so
// this session is pipelined), with AUTH PLAIN's initial response.
func TestRunOpenSSLStartTLS(t *testing.T) {
	openssl := tooltest.Path(t, "openssl")
	addr, stop := run(t, "-tls", "-auth", "-auth-file", writeAuthFile(t), "-digest", "md5")
	body := "Subject: s_client\r\n\r\nfrom openssl\r\n..stuffed\r\n"
	session := "EHLO openssl.test\r\nAUTH PLAIN " + base64.StdEncoding.EncodeToString([]byte("\x00u\x00p:w")) +
		"\r\nMAIL FROM:<a@x.test>\r\nRCPT TO:<b@y.test>\r\nDATA\r\n" + body + ".\r\nQUIT\r\n"
	cmd := exec.Command(openssl, "s_client", "-starttls", "smtp", "-connect", addr, "-quiet")
	cmd.Stdin = strings.NewReader(session)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "235 2.7.0") || !strings.Contains(string(out), "221 2.0.0") {
		t.Fatalf("s_client: %v\n%s", err, out)
	}
	res, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	summary := checkDigests(t, res, 1, strings.Replace(body, "..", ".", 1))
	if !strings.HasPrefix(summary, "sessions 1 (aborted 0, tls 1), messages 1,") || !strings.HasSuffix(summary, "error replies 0") {
		t.Errorf("summary:\n%s\ns_client:\n%s", summary, out)
	}
}

// Python's smtplib, which nobody here wrote: starttls() and login()
// (AUTH PLAIN, as smtplib prefers), then AUTH LOGIN's challenges, and a
// wrong password that smtplib reports as 535 (after trying both).
func TestRunPythonSmtplib(t *testing.T) {
	python := tooltest.Path(t, "python3")
	addr, stop := run(t, "-tls", "-auth", "-auth-file", writeAuthFile(t), "-digest", "md5")
	host, port, _ := net.SplitHostPort(addr)
	script := `
import smtplib, sys
host, port = sys.argv[1], int(sys.argv[2])
msg = b"Subject: smtplib\r\n\r\nfrom python\r\n.dot\r\n"
for mech in ("login", "LOGIN"):
    s = smtplib.SMTP(host, port, timeout=20)
    s.ehlo("python.test")
    s.starttls()
    s.ehlo("python.test")
    if mech == "login":
        s.login("u", "p:w")
    else:
        s.user, s.password = "u", "p:w"
        code, _ = s.auth("LOGIN", s.auth_login, initial_response_ok=False)
        assert code == 235, code
    s.sendmail("a@x.test", ["b@y.test"], msg)
    s.quit()
s = smtplib.SMTP(host, port, timeout=20)
s.starttls()
try:
    s.login("u", "wrong")
    sys.exit("wrong password accepted")
except smtplib.SMTPAuthenticationError as e:
    assert e.smtp_code == 535, e
s.quit()
`
	out, err := exec.Command(python, "-c", script, host, port).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	res, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	summary := checkDigests(t, res, 2, "Subject: smtplib\r\n\r\nfrom python\r\n.dot\r\n")
	// login() tries PLAIN, then LOGIN: two 535s for the wrong password.
	if !strings.HasPrefix(summary, "sessions 3 (aborted 0, tls 3), messages 2,") || !strings.HasSuffix(summary, "error replies 2 (535: 2)") {
		t.Errorf("summary:\n%s", summary)
	}
}

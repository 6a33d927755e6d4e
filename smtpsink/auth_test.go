package smtpsink

import (
	"crypto/hmac"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// CRAM-MD5, XOAUTH2 and OAUTHBEARER, where AuthMechanisms offers them:
// CRAM-MD5's digest is checked against the password, a bearer token as
// the password; a failed bearer exchange ends with an error challenge the
// client answers before its 535.
func TestAuthMechanisms(t *testing.T) {
	if _, err := Listen(t.Context(), Config{Addr: "127.0.0.1:0", Auth: true, AuthPlaintext: true, AuthMechanisms: []string{"NTLM"}}); err == nil {
		t.Error("an unknown mechanism: no error")
	}
	s := startSink(t, Config{Auth: true, AuthPlaintext: true, AuthUsers: map[string]string{"alice": "s3cret"},
		AuthMechanisms: []string{"CRAM-MD5", "XOAUTH2", "OAUTHBEARER"}}, hooks{})
	c := dial(t, s)
	if ehlo := c.cmd(250, "EHLO c"); !strings.Contains(ehlo, "AUTH CRAM-MD5 XOAUTH2 OAUTHBEARER\n") {
		t.Errorf("EHLO:\n%s", ehlo)
	}
	c.cmd(504, "AUTH PLAIN "+b64("\x00alice\x00s3cret")) // not offered
	cram := func(user, pass string) string {
		ch, err := base64.StdEncoding.DecodeString(c.cmd(334, "AUTH CRAM-MD5"))
		if err != nil || !strings.HasPrefix(string(ch), "<") || !strings.HasSuffix(string(ch), "@smtp-sink>") {
			t.Fatalf("challenge %q, %v", ch, err)
		}
		mac := hmac.New(md5.New, []byte(pass))
		mac.Write(ch)
		return b64(user + " " + hex.EncodeToString(mac.Sum(nil)))
	}
	c.cmd(535, cram("alice", "wrong"))
	c.cmd(535, cram("bob", "s3cret"))
	c.cmd(535, "AUTH CRAM-MD5 "+b64("alice 00")) // no initial response in CRAM-MD5
	c.cmd(535, cram("alice", "s3cret")[:8])
	xo := func(user, token string) string { return b64("user=" + user + "\x01auth=Bearer " + token + "\x01\x01") }
	ob := func(user, token string) string {
		return b64("n,a=" + user + ",\x01host=mx\x01port=25\x01auth=Bearer " + token + "\x01\x01")
	}
	for _, step := range []struct {
		code int
		line string
	}{
		{334, "AUTH XOAUTH2 " + xo("alice", "wrong")},
		{535, ""},
		{334, "AUTH OAUTHBEARER " + ob("alice", "wrong")},
		{535, b64("\x01")},
		{334, "AUTH OAUTHBEARER " + b64("n,,\x01auth=Bearer s3cret\x01\x01")}, // no user
		{535, b64("\x01")},
		{334, "AUTH XOAUTH2 " + b64("user=alice\x01auth=Basic s3cret\x01\x01")},
		{535, ""},
		{334, "AUTH XOAUTH2"},
		{235, xo("alice", "s3cret")},
	} {
		c.cmd(step.code, step.line)
	}
	c = dial(t, s)
	c.cmd(250, "EHLO c")
	c.cmd(235, "AUTH OAUTHBEARER "+ob("alice", "s3cret"))
	c = dial(t, s)
	c.cmd(250, "EHLO c")
	c.cmd(235, cram("alice", "s3cret"))
	if st := s.Stats(); st.Errors[535] != 8 {
		t.Errorf("535s: %d, want 8", st.Errors[535])
	}
}

// Clients nobody here wrote: swaks with CRAM-MD5, Python's smtplib with
// CRAM-MD5 (its first choice) and XOAUTH2.
func TestAuthMechanismsPeers(t *testing.T) {
	var got messages
	s := startSink(t, Config{Auth: true, AuthPlaintext: true, AuthUsers: map[string]string{"alice": "s3cret"},
		AuthMechanisms: []string{"PLAIN", "CRAM-MD5", "XOAUTH2"}, OnMessage: got.add}, hooks{})
	host, port, _ := strings.Cut(s.Addr().String(), ":")
	swaks := tooltest.Path(t, "swaks")
	out, err := exec.Command(swaks, "--server", host, "--port", port, "--to", "a@b.test", "--auth", "CRAM-MD5",
		"--auth-user", "alice", "--auth-password", "s3cret").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "235 2.7.0") {
		t.Fatalf("swaks: %v\n%s", err, out)
	}
	script := `import smtplib, sys, base64
s = smtplib.SMTP(sys.argv[1], int(sys.argv[2]))
s.login("alice", "s3cret")  # CRAM-MD5, smtplib's first choice
s.sendmail("cram@x.test", ["a@b.test"], "x\r\n")
s.quit()
s = smtplib.SMTP(sys.argv[1], int(sys.argv[2]))
s.ehlo()
code, _ = s.docmd("AUTH", "XOAUTH2 " + base64.b64encode(b"user=alice\x01auth=Bearer s3cret\x01\x01").decode())
assert code == 235, code
s.sendmail("xoauth2@x.test", ["a@b.test"], "x\r\n")
s.quit()
`
	f := filepath.Join(t.TempDir(), "auth.py")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tooltest.Path(t, "python3"), f, host, port).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	ms := got.all()
	if len(ms) != 3 || !ms[1].Authenticated || ms[1].From != "cram@x.test" || ms[2].AuthUser != "alice" {
		t.Errorf("messages %+v", ms)
	}
}

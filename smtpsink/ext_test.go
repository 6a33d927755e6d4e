package smtpsink

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// DSN's parameters (RFC 3461), XCLIENT and XFORWARD are taken where well
// formed, refused with 501 where not, and with the Config's No* switches
// not offered at all; XCLIENT starts the session anew with a greeting,
// as Postfix's smtpd does.
func TestExtensions(t *testing.T) {
	c := dial(t, startSink(t, Config{}, hooks{}))
	for _, step := range []struct {
		code int
		line string
	}{
		{250, "EHLO c"},
		{250, "XFORWARD NAME=mx.example ADDR=192.0.2.1 PORT=25 PROTO=ESMTP HELO=mx.example"},
		{250, "XFORWARD IDENT=abc+2B SOURCE=REMOTE"},
		{501, "XFORWARD"},
		{501, "XFORWARD LOGIN=x"},
		{501, "XFORWARD NAME"},
		{501, "XFORWARD NAME=a=b"},
		{501, "XFORWARD NAME=a+2b"},
		{501, "MAIL FROM:<a@b> RET=PART"},
		{501, "MAIL FROM:<a@b> RET=FULL RET=HDRS"},
		{501, "MAIL FROM:<a@b> BODY=8BITMIME BODY=7BIT"},
		{501, "MAIL FROM:<a@b> SIZE=10 size=20"},
		{501, "MAIL FROM:<a@b> SMTPUTF8 SMTPUTF8"},
		{501, "MAIL FROM:<a@b> ENVID="},
		{501, "MAIL FROM:<a@b> ENVID=" + strings.Repeat("x", 101)},
		{501, "MAIL FROM:<a@b> ENVID=a+zz"},
		{250, "MAIL FROM:<a@b> RET=hdrs ENVID=QQ314159+2Bx"},
		{501, "RCPT TO:<c@d> NOTIFY=NEVER,SUCCESS"},
		{501, "RCPT TO:<c@d> NOTIFY=SUCCESS,SUCCESS"},
		{501, "RCPT TO:<c@d> NOTIFY=SOMETIMES"},
		{501, "RCPT TO:<c@d> ORCPT=c@d"},
		{501, "RCPT TO:<c@d> ORCPT=rfc822;"},
		{501, "RCPT TO:<c@d> ORCPT=rfc822;a ORCPT=rfc822;b"},
		{250, "RCPT TO:<c@d> NOTIFY=SUCCESS,FAILURE ORCPT=rfc822;c@d"},
		{250, "RCPT TO:<e@d> NOTIFY=never"},
		{250, "RCPT TO:<f@d> NOTIFY=DELAY ORCPT=utf-8;f@d"},
		{503, "XFORWARD NAME=x"},
		{503, "XCLIENT NAME=x"},
		{250, "RSET"},
		{501, "XCLIENT DESTPORT"},
		{501, "XCLIENT IDENT=x"},
		// values Postfix's smtpd refuses: "501 5.5.4 Bad ADDR syntax: ..."
		{501, "XCLIENT ADDR=999.1.1.1"},
		{501, "XCLIENT ADDR=mx.example"},
		{501, "XCLIENT ADDR=fe80::1%eth0"},
		{501, "XCLIENT DESTADDR=1.2.3"},
		{501, "XCLIENT PORT=1x"},
		{501, "XCLIENT PORT=-1"},
		{501, "XCLIENT DESTPORT=25x"},
		{501, "XCLIENT PROTO=HTTP"},
		{501, "XFORWARD ADDR=300.0.0.1"},
		{501, "XFORWARD PORT=+2D1"},
		{220, "XCLIENT ADDR=IPV6:2001:db8::1 DESTADDR=2001:db8::2 PORT=65535 DESTPORT=[TEMPUNAVAIL] PROTO=esmtp"},
		{503, "MAIL FROM:<a@b>"},
		{250, "EHLO again"},
		{250, "XFORWARD ADDR=[UNAVAILABLE] PORT=70000 PROTO=whatever"}, // Postfix's smtpd takes a port of any digits
		{220, "XCLIENT NAME=spike.porcupine.org ADDR=168.100.189.2 PORT=4242 LOGIN=[UNAVAILABLE]"},
		{503, "MAIL FROM:<a@b>"},
		{250, "EHLO again"},
		{250, "MAIL FROM:<a@b>"},
		{221, "QUIT"},
	} {
		c.cmd(step.code, step.line)
	}

	c = dial(t, startSink(t, Config{NoDSN: true, NoXCLIENT: true, NoXFORWARD: true}, hooks{}))
	c.cmd(250, "EHLO c")
	c.cmd(500, "XCLIENT NAME=x")
	c.cmd(500, "XFORWARD NAME=x")
	c.cmd(555, "MAIL FROM:<a@b> RET=FULL")
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(555, "RCPT TO:<c@d> NOTIFY=NEVER")

	c = dial(t, startSink(t, Config{}, hooks{}))
	c.cmd(250, "HELO c")
	c.cmd(555, "MAIL FROM:<a@b> RET=FULL") // parameters need EHLO
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(555, "RCPT TO:<c@d> NOTIFY=NEVER")
}

// ORCPT of addr-type utf-8 may hold UTF-8 as it is (RFC 6533's unitext)
// in a transaction that declared SMTPUTF8, and only there; other
// addr-types, and undeclared transactions, keep to xtext. It got 501 in
// a declared one, where a client that speaks both SMTPUTF8 and DSN sends
// it so.
func TestORCPTUnitext(t *testing.T) {
	c := dial(t, startSink(t, Config{}, hooks{}))
	for _, step := range []struct {
		code int
		line string
	}{
		{250, "EHLO c"},
		{250, "MAIL FROM:<a@b> SMTPUTF8"},
		{250, "RCPT TO:<jörg@d> ORCPT=utf-8;jörg@d"},
		{250, "RCPT TO:<c@d> ORCPT=UTF-8;j\\x{F6}rg@d"},
		{501, "RCPT TO:<c@d> ORCPT=rfc822;jörg@d"},
		{501, "RCPT TO:<c@d> ORCPT=utf-8;j\xf6rg@d"},
		{501, "RCPT TO:<c@d> ORCPT=utf-8;jörg=@d"},
		{250, "RSET"},
		{250, "MAIL FROM:<a@b>"},
		{501, "RCPT TO:<c@d> ORCPT=utf-8;jörg@d"},
		{250, "RCPT TO:<c@d> ORCPT=utf-8;j\\x{F6}rg@d"},
		{221, "QUIT"},
	} {
		c.cmd(step.code, step.line)
	}
}

// Real clients' DSN and XCLIENT: Go's net/smtp has no DSN, so Python's
// smtplib sends MAIL and RCPT options, and swaks sends XCLIENT; both get
// their message through.
func TestExtensionsPeers(t *testing.T) {
	var got messages
	s := startSink(t, Config{OnMessage: got.add}, hooks{})
	host, port, _ := strings.Cut(s.Addr().String(), ":")
	py := tooltest.Path(t, "python3")
	script := `import smtplib, sys
s = smtplib.SMTP(sys.argv[1], int(sys.argv[2]))
s.ehlo("py.test")
assert s.has_extn("dsn"), s.esmtp_features
s.sendmail("a@b.test", ["c@d.test"], "Subject: dsn\r\n\r\nhi\r\n",
           mail_options=["RET=HDRS", "ENVID=py+2B1"],
           rcpt_options=["NOTIFY=SUCCESS,FAILURE", "ORCPT=rfc822;c@d.test"])
s.quit()
`
	f := filepath.Join(t.TempDir(), "dsn.py")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, f, host, port).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	swaks := tooltest.Path(t, "swaks")
	out, err := exec.Command(swaks, "--server", host, "--port", port, "--from", "a@b.test", "--to", "e@f.test",
		"--xclient-name", "relay.example", "--xclient-addr", "192.0.2.7", "--body", "hi").CombinedOutput()
	if err != nil {
		t.Fatalf("swaks: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`-> XCLIENT [^\n]*\n\s*<-  220 `).Match(out) {
		t.Errorf("swaks did not send XCLIENT and get a greeting:\n%s", out)
	}
	ms := got.all()
	if len(ms) != 2 || ms[0].To[0] != "c@d.test" || ms[1].To[0] != "e@f.test" {
		t.Errorf("messages %+v", ms)
	}
}

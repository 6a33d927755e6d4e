package smtpsink

import (
	"crypto/tls"
	nettextproto "net/textproto"
	"strconv"
	"testing"
)

// reply sends line and returns its reply as "CODE TEXT" (the lines of a
// multiline reply joined by "\n").
func (c *client) reply(line string) string {
	c.t.Helper()
	if err := c.PrintfLine("%s", line); err != nil {
		c.t.Fatal(err)
	}
	code, msg, err := c.ReadResponse(0)
	if code == 0 {
		c.t.Fatalf("%q: %v", line, err)
	}
	return strconv.Itoa(code) + " " + msg
}

// Misordered commands get the replies of Postfix's smtp-sink, or, where
// that has no such command or answers anything with 250, of Postfix's
// smtpd (read in its source; its 554 to STARTTLS over TLS seen from
// 3.7.11): DATA or BDAT before MAIL "need RCPT command" (as both say, in
// SMTP and LMTP); STARTTLS over TLS 554, after STARTTLS
// or with implicit TLS (smtpd, and smtpd in wrapper mode), and with an
// argument 501 before anything else (smtpd's order).
func TestPostfixReplies(t *testing.T) {
	srv, cli := testTLS(t)
	const needRCPT = "503 5.5.1 Error: need RCPT command"
	check := func(c *client, line, want string) {
		t.Helper()
		if got := c.reply(line); got != want {
			t.Errorf("%q: got %q, want %q", line, got, want)
		}
	}

	c := dial(t, startSink(t, Config{}, hooks{}))
	check(c, "DATA", needRCPT) // before EHLO, as smtp-source -o sends
	c.cmd(250, "EHLO c")
	check(c, "DATA", needRCPT)
	check(c, "BDAT 0 LAST", needRCPT)
	check(c, "STARTTLS x", "501 5.5.4 Syntax: STARTTLS")
	check(c, "STARTTLS", "502 5.5.1 Error: command not implemented")

	c = dial(t, startSink(t, Config{LMTP: true}, hooks{}))
	c.cmd(250, "LHLO c")
	check(c, "DATA", needRCPT)
	c.send("BDAT 3\r\nabc")
	if code, msg, _ := c.ReadResponse(0); strconv.Itoa(code)+" "+msg != needRCPT {
		t.Errorf("BDAT 3: got %d %q, want %q", code, msg, needRCPT)
	}
	c.cmd(250, "NOOP") // in step after the chunk

	c = dial(t, startSink(t, Config{TLS: srv}, hooks{}))
	c.cmd(250, "EHLO c")
	c = c.startTLS(cli)
	c.cmd(250, "EHLO c")
	check(c, "STARTTLS", "554 5.5.1 Error: TLS already active")
	check(c, "STARTTLS x", "501 5.5.4 Syntax: STARTTLS")

	s := startSink(t, Config{TLS: srv, TLSImplicit: true}, hooks{})
	tc, err := tls.Dial("tcp", s.Addr().String(), cli)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tc.Close() })
	c = &client{t: t, Conn: nettextproto.NewConn(tc), raw: tc}
	c.expect(220)
	c.cmd(250, "EHLO c")
	check(c, "STARTTLS", "554 5.5.1 Error: TLS already active")
}

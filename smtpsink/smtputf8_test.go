package smtpsink

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// The SMTPUTF8 rule of RFC 6531 §3.5, as Postfix's smtpd keeps it: a
// MAIL or RCPT address that is not ASCII needs the SMTPUTF8 parameter on
// MAIL, and without it is refused with 553 5.6.7 (the command refused,
// the session going on); with it, the address must be UTF-8 (501). On
// both engines.
func TestSMTPUTF8Addresses(t *testing.T) {
	const (
		undeclared = "5.6.7 Error: sender address is not ASCII, and MAIL did not declare SMTPUTF8"
		rcptUndecl = "5.6.7 Error: recipient address is not ASCII, and MAIL did not declare SMTPUTF8"
		notOffered = "5.6.7 Error: sender address is not ASCII, and SMTPUTF8 is not offered"
		rcptNotOff = "5.6.7 Error: recipient address is not ASCII, and SMTPUTF8 is not offered"
		badSender  = "5.1.7 Error: sender address is not valid UTF-8"
		badRcpt    = "5.1.3 Error: recipient address is not valid UTF-8"
	)
	type step struct {
		code int
		line string
		text string // the reply's text, if checked
	}
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		for _, tc := range []struct {
			name  string
			cfg   Config
			steps []step
			from  []string // the senders of the messages accepted
			to    []string // their recipients, one line each
		}{
			{"undeclared", Config{}, []step{
				{250, "EHLO c", ""},
				{553, "MAIL FROM:<jörg@example.com>", undeclared},
				{503, "RCPT TO:<a@b>", ""}, // the refused MAIL began no transaction
				{553, "MAIL FROM:<a@exämple.com> BODY=8BITMIME", undeclared},
				{250, "MAIL FROM:<a@b>", ""},
				{553, "RCPT TO:<\"jörg\"@b>", rcptUndecl},
				{250, "RCPT TO:<c@d>", ""},
				{553, "RCPT TO:<@relais.example,@ré.example:c@d>", rcptUndecl},
				{354, "DATA", ""},
				{250, "x\r\n.", ""},
				// BDAT takes the same MAIL and RCPT.
				{553, "MAIL FROM:<\xff@b>", undeclared},
				{250, "MAIL FROM:<a@b>", ""},
				{553, "RCPT TO:<ü@b>", rcptUndecl},
				{250, "RCPT TO:<e@f>", ""},
				{250, "BDAT 5 LAST\r\nabc", ""}, // the chunk: "abc" and the CRLF cmd adds
			}, []string{"a@b", "a@b"}, []string{"c@d", "e@f"}},
			{"declared", Config{}, []step{
				{250, "EHLO c", ""},
				{250, "MAIL FROM:<jörg@exämple.com> SMTPUTF8", ""},
				{250, "RCPT TO:<用户@例子.广告>", ""},
				{250, "RCPT TO:<a@b>", ""},
				{354, "DATA", ""},
				{250, "x\r\n.", ""},
				// The next transaction declares nothing.
				{553, "MAIL FROM:<jörg@exämple.com>", undeclared},
				{250, "MAIL FROM:<a@b> smtputf8", ""},
				{250, "RCPT TO:<ü@b>", ""},
				{250, "RSET", ""},
				{250, "MAIL FROM:<a@b>", ""},
				{553, "RCPT TO:<ü@b>", rcptUndecl},
			}, []string{"jörg@exämple.com"}, []string{"用户@例子.广告 a@b"}},
			{"invalid UTF-8", Config{}, []step{
				{250, "EHLO c", ""},
				{501, "MAIL FROM:<j\xf6rg@b> SMTPUTF8", badSender},      // Latin-1
				{501, "MAIL FROM:<\xc3@b> SMTPUTF8", badSender},         // cut short
				{501, "MAIL FROM:<\xed\xa0\x80@b> SMTPUTF8", badSender}, // a surrogate
				{503, "RCPT TO:<a@b>", ""},
				{250, "MAIL FROM:<ü@b> SMTPUTF8", ""},
				{501, "RCPT TO:<j\xf6rg@b>", badRcpt},
				{250, "RCPT TO:<jörg@b>", ""},
				{354, "DATA", ""},
				{250, "x\r\n.", ""},
			}, []string{"ü@b"}, []string{"jörg@b"}},
			{"not offered", Config{NoSMTPUTF8: true}, []step{
				{250, "EHLO c", ""},
				{555, "MAIL FROM:<jörg@b> SMTPUTF8", ""}, // the parameter is unknown
				{553, "MAIL FROM:<jörg@b>", notOffered},
				{250, "MAIL FROM:<a@b>", ""},
				{553, "RCPT TO:<jörg@b>", rcptNotOff},
				{250, "RCPT TO:<c@d>", ""},
				{354, "DATA", ""},
				{250, "x\r\n.", ""},
			}, []string{"a@b"}, []string{"c@d"}},
			{"HELO", Config{}, []step{
				{250, "HELO c", ""},
				{553, "MAIL FROM:<jörg@b>", undeclared},
				{250, "MAIL FROM:<a@b>", ""},
				{553, "RCPT TO:<jörg@b>", rcptUndecl},
				{250, "RCPT TO:<c@d>", ""},
				{354, "DATA", ""},
				{250, "x\r\n.", ""},
			}, []string{"a@b"}, []string{"c@d"}},
			{"LMTP", Config{LMTP: true}, []step{
				{250, "LHLO c", ""},
				{553, "MAIL FROM:<jörg@b>", undeclared},
				{250, "MAIL FROM:<jörg@b> SMTPUTF8", ""},
				{250, "RCPT TO:<ü@b>", ""},
				{501, "RCPT TO:<\x80@b>", badRcpt},
				{354, "DATA", ""},
				{250, "x\r\n.", ""},
				{250, "MAIL FROM:<a@b>", ""},
				{553, "RCPT TO:<ü@b>", rcptUndecl},
				{250, "RCPT TO:<c@d>", ""},
				{354, "DATA", ""},
				{250, "x\r\n.", ""},
			}, []string{"jörg@b", "a@b"}, []string{"ü@b", "c@d"}},
			// The refusal comes before the rules: a rule matching the
			// address is not consulted.
			{"before rules", Config{Rules: []Rule{
				{Stage: StageMail, Match: regexp.MustCompile("^[^a]"), Reply: Reply{Code: 421, Text: "4.7.0 closing"}},
				{Stage: StageRcpt, Reply: Reply{Code: 550, Text: "5.1.1 no such user"}},
			}}, []step{
				{250, "EHLO c", ""},
				{553, "MAIL FROM:<jörg@b>", undeclared},
				{501, "MAIL FROM:<\xf6@b> SMTPUTF8", badSender},
				{250, "MAIL FROM:<a@b>", ""},
				{553, "RCPT TO:<ü@b>", rcptUndecl},
				{550, "RCPT TO:<c@d>", "5.1.1 no such user"},
			}, nil, nil},
			// XCLIENT and XFORWARD leave the rule as it was: XCLIENT
			// begins the session anew, and MAIL must declare again.
			{"XCLIENT", Config{}, []step{
				{250, "EHLO c", ""},
				{250, "XFORWARD NAME=x.example ADDR=192.0.2.1", ""},
				{553, "MAIL FROM:<jörg@b>", undeclared},
				{250, "MAIL FROM:<jörg@b> SMTPUTF8", ""},
				{250, "RCPT TO:<ü@b>", ""},
				{250, "RSET", ""},
				{220, "XCLIENT NAME=x.example ADDR=192.0.2.1", ""},
				{250, "EHLO c", ""},
				{553, "MAIL FROM:<jörg@b>", undeclared},
				{250, "MAIL FROM:<a@b>", ""},
				{553, "RCPT TO:<ü@b>", rcptUndecl},
			}, nil, nil},
		} {
			t.Run(string(e)+"/"+tc.name, func(t *testing.T) {
				var got messages
				tc.cfg.Engine, tc.cfg.OnMessage = e, got.add
				s := startSink(t, tc.cfg, hooks{})
				c := dial(t, s)
				for _, st := range tc.steps {
					if text := c.cmd(st.code, st.line); st.text != "" && text != st.text {
						t.Errorf("%q: %d %q, want %d %q", st.line, st.code, text, st.code, st.text)
					}
				}
				c.cmd(221, "QUIT")
				var from, to []string
				for _, m := range got.all() {
					from, to = append(from, m.From), append(to, strings.Join(m.To, " "))
				}
				if strings.Join(from, "|") != strings.Join(tc.from, "|") || strings.Join(to, "|") != strings.Join(tc.to, "|") {
					t.Errorf("messages from %q to %q, want from %q to %q", from, to, tc.from, tc.to)
				}
			})
		}
	}
}

// swaks (of 2020, which knows no SMTPUTF8) sends a UTF-8 sender without
// declaring it, as clients that forget the parameter do: it is told 553
// 5.6.7, and no message arrives.
func TestSwaksUndeclaredUTF8(t *testing.T) {
	swaks := tooltest.Path(t, "swaks")
	var got messages
	s := startSink(t, Config{OnMessage: got.add}, hooks{})
	out, err := exec.Command(swaks, "--server", s.Addr().String(), "--from", "jörg@exämple.test", "--to", "a@y.test",
		"--timeout", "20").CombinedOutput()
	if err == nil {
		t.Errorf("swaks succeeded\n%s", out)
	}
	if !strings.Contains(string(out), "<** 553 5.6.7 Error: sender address is not ASCII, and MAIL did not declare SMTPUTF8") {
		t.Errorf("no 553 5.6.7 for the undeclared UTF-8 sender:\n%s", out)
	}
	if ms := got.all(); len(ms) != 0 {
		t.Errorf("messages %+v", ms)
	}
}

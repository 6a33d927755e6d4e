package smtpsink

import (
	"crypto/md5"
	"encoding/hex"
	"net"
	nettextproto "net/textproto"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/dot"
)

// The EHLO reply announces the extensions the Config leaves on, SIZE with
// the limit; HELO gets a one-line reply; LMTP wants LHLO.
func TestEHLOKeywords(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		verb string
		want string
	}{
		{"default", Config{}, "EHLO", "smtp-sink\nPIPELINING\nSIZE\n8BITMIME\nCHUNKING\nBINARYMIME\nSMTPUTF8\nDSN\nXCLIENT NAME ADDR PORT PROTO HELO LOGIN DESTADDR DESTPORT\nXFORWARD NAME ADDR PORT PROTO HELO IDENT SOURCE\nENHANCEDSTATUSCODES"},
		{"size", Config{MaxSize: 1000, Hostname: "mx.test"}, "EHLO", "mx.test\nPIPELINING\nSIZE 1000\n8BITMIME\nCHUNKING\nBINARYMIME\nSMTPUTF8\nDSN\nXCLIENT NAME ADDR PORT PROTO HELO LOGIN DESTADDR DESTPORT\nXFORWARD NAME ADDR PORT PROTO HELO IDENT SOURCE\nENHANCEDSTATUSCODES"},
		{"off", Config{NoPipelining: true, No8BitMIME: true, NoChunking: true, NoSMTPUTF8: true, NoDSN: true, NoXCLIENT: true, NoXFORWARD: true}, "EHLO", "smtp-sink\nSIZE\nENHANCEDSTATUSCODES"},
		{"lmtp", Config{LMTP: true}, "LHLO", "smtp-sink\nPIPELINING\nSIZE\n8BITMIME\nCHUNKING\nBINARYMIME\nSMTPUTF8\nDSN\nXCLIENT NAME ADDR PORT PROTO HELO LOGIN DESTADDR DESTPORT\nXFORWARD NAME ADDR PORT PROTO HELO IDENT SOURCE\nENHANCEDSTATUSCODES"},
		{"helo", Config{}, "HELO", "smtp-sink"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, startSink(t, tc.cfg, hooks{}))
			if got := c.cmd(250, tc.verb+" client.test"); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			c.cmd(221, "QUIT")
		})
	}
	t.Run("wrong greeting verb", func(t *testing.T) {
		c := dial(t, startSink(t, Config{LMTP: true}, hooks{}))
		c.cmd(500, "EHLO x")
		c.cmd(500, "HELO x")
		c.cmd(503, "MAIL FROM:<a@b>")
		c = dial(t, startSink(t, Config{}, hooks{}))
		c.cmd(500, "LHLO x")
		c = dial(t, startSink(t, Config{NoESMTP: true}, hooks{}))
		c.cmd(502, "EHLO x")
		c.cmd(250, "HELO x")
		c.cmd(555, "MAIL FROM:<a@b> SIZE=10")
		c.cmd(250, "MAIL FROM:<a@b>")
	})
}

// A message goes through; OnMessage sees its envelope, its data as sent
// (CRLF kept, the stuffed dot removed) and the digest, before the client
// has the reply.
func TestMessage(t *testing.T) {
	var got messages
	s := startSink(t, Config{Digest: digest.MD5, OnMessage: got.add}, hooks{})
	c := dial(t, s)
	c.cmd(250, "EHLO client.test")
	c.cmd(250, "MAIL FROM:<> BODY=8BITMIME SMTPUTF8 SIZE=100")
	c.cmd(250, "RCPT TO:<a@b.test>")
	c.cmd(250, `rcpt to: <"odd>name"@b.test>`)
	c.cmd(354, "DATA")
	c.send("Subject: x\r\n\r\n..dot\r\nline\r\n.\r\n")
	if msg := c.expect(250); msg != "2.0.0 Ok: queued as 1-1" {
		t.Errorf("reply %q", msg)
	}
	data := "Subject: x\r\n\r\n.dot\r\nline\r\n"
	ms := got.all()
	if len(ms) != 1 {
		t.Fatalf("%d messages", len(ms))
	}
	m := ms[0]
	sum := md5.Sum([]byte(data))
	if m.Session != 1 || m.Seq != 1 || m.From != "" || strings.Join(m.To, ",") != `a@b.test,"odd>name"@b.test` ||
		m.Size != int64(len(data)) || m.Body != "8BITMIME" || !m.SMTPUTF8 || m.Chunks != 0 || m.Digest.String() != hex.EncodeToString(sum[:]) {
		t.Errorf("message %+v, digest %v", m, m.Digest)
	}
	// The next transaction on the same session.
	c.cmd(250, "MAIL FROM:<x@y>")
	c.cmd(250, "RCPT TO:<a@b>")
	c.cmd(354, "DATA")
	c.send(".\r\n")
	if msg := c.expect(250); msg != "2.0.0 Ok: queued as 1-2" {
		t.Errorf("reply %q", msg)
	}
	c.cmd(221, "QUIT")
	st := s.Stats()
	if st.Messages != 2 || st.Recipients != 3 || st.Bytes != uint64(len(data)) || st.ErrorCount() != 0 || st.Sessions != 1 {
		t.Errorf("stats %+v", st)
	}
}

// Commands out of sequence get 503 (554 for DATA with no recipient), bad
// syntax 501, unknown parameters 555, unknown commands 500, and the
// session goes on.
func TestBadCommands(t *testing.T) {
	c := dial(t, startSink(t, Config{MaxSize: 1000, MaxRecipients: 2, HeloRequired: true}, hooks{}))
	for _, step := range []struct {
		code int
		line string
	}{
		{503, "MAIL FROM:<a@b>"},
		{503, "RCPT TO:<a@b>"},
		{503, "DATA"},
		{501, "EHLO"},
		{501, "HELO  "},
		{250, "EHLO c"},
		{503, "RCPT TO:<a@b>"},
		{503, "DATA"},
		{501, "MAIL FROM:a@b"},
		{501, "MAIL TO:<a@b>"},
		{501, "MAIL FROM:<a@b"},
		{501, "MAIL FROM:<a@b>SIZE=1"},
		{501, "MAIL FROM:<a@b> SIZE=x"},
		{501, "MAIL FROM:<a@b> SIZE=-1"},
		{501, "MAIL FROM:<a@b> SIZE"},
		{552, "MAIL FROM:<a@b> SIZE=1001"},
		{501, "MAIL FROM:<a@b> BODY=9BIT"},
		{555, "MAIL FROM:<a@b> RET=FULL X=1"},
		{555, "MAIL FROM:<a@b> SMTPUTF8=yes"},
		{250, "MAIL FROM:<a@b> SIZE=1000"},
		{503, "MAIL FROM:<a@b>"},
		{554, "DATA"},
		{501, "RCPT TO:<>"},
		{501, "RCPT <a@b>"},
		{555, "RCPT TO:<a@b> NOTIFY=NEVER X=1"},
		{250, "RCPT TO:<a@b>"},
		{250, "RCPT TO:<c@d>"},
		{452, "RCPT TO:<e@f>"},
		{501, "DATA now"},
		{250, "NOOP"},
		{250, "NOOP anything"},
		{252, "VRFY someone"},
		{501, "VRFY"},
		{502, "EXPN list"},
		{214, "HELP"},
		{500, "FROB"},
		{500, ""},
		{502, "STARTTLS"},
		{501, "RSET now"},
		{250, "RSET"},
		{503, "RCPT TO:<a@b>"},
		{250, "mail from:<a@b>"},
		{250, "RSET"},
		{221, "QUIT"},
	} {
		c.cmd(step.code, step.line)
	}
}

// A command line longer than MaxCommandBytes gets 500 and is skipped to
// its end, in step, whatever is pipelined behind it; so does one of many
// MiB, with memory bounded by the limit.
func TestLongLine(t *testing.T) {
	s := startSink(t, Config{MaxCommandBytes: 100}, hooks{})
	c := dial(t, s)
	c.cmd(250, "EHLO c")
	c.cmd(250, "MAIL FROM:<"+strings.Repeat("a", 80)+">")
	c.send("RCPT TO:<" + strings.Repeat("b", 200) + ">\r\nRCPT TO:<a@b>\r\nNOOP\r\n")
	if got := c.codes(3); got != "500 250 250" {
		t.Errorf("got %s", got)
	}
	// 16 MiB with no line end at all, then a command.
	big := strings.Repeat("x", 64<<10)
	go func() {
		for range 256 {
			if _, err := c.raw.Write([]byte(big)); err != nil {
				return
			}
		}
		c.raw.Write([]byte("\r\nRSET\r\n"))
	}()
	if got := c.codes(2); got != "500 250" {
		t.Errorf("got %s", got)
	}
	c.cmd(221, "QUIT")
	if st := s.Stats(); st.Errors[500] != 2 || st.Aborted != 0 {
		t.Errorf("stats %+v", st)
	}
}

// Data errors are answered after the whole block has been read, and the
// session goes on: 552 for too much data, 500 for a data line too long,
// 550 for a bare LF or CR under BareReject; BareKeep and BareNormalize
// accept them. "\n.\n" never ends the data.
func TestDataErrors(t *testing.T) {
	body := func(n int) string { return strings.Repeat(strings.Repeat("y", 49)+"\r\n", n) }
	for _, tc := range []struct {
		name string
		cfg  Config
		data string
		code int
		size int64
	}{
		{"fits", Config{MaxSize: 522}, body(10) + "1234567890\r\n", 250, 522},
		{"too large", Config{MaxSize: 521}, body(10) + "1234567890\r\n", 552, 0},
		{"line fits", Config{MaxDataLineBytes: 49}, body(3), 250, 153},
		{"line too long", Config{MaxDataLineBytes: 48}, body(3), 500, 0},
		{"bare LF", Config{}, "a\nb\r\n", 550, 0},
		{"bare CR", Config{}, "a\rb\r\n", 550, 0},
		{"smuggled end", Config{}, "a\r\n\n.\nMAIL FROM:<evil>\r\n", 550, 0},
		{"keep", Config{Bare: dot.BareKeep}, "a\nb\r\n", 250, 5},
		{"normalize", Config{Bare: dot.BareNormalize}, "a\nb\r\n", 250, 6},
		{"too large and bare", Config{MaxSize: 3}, "a\nb\r\n", 552, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got messages
			tc.cfg.OnMessage = got.add
			s := startSink(t, tc.cfg, hooks{})
			c := dial(t, s)
			c.cmd(250, "EHLO c")
			for range 2 { // the session stays in step: twice
				c.cmd(250, "MAIL FROM:<a@b>")
				c.cmd(250, "RCPT TO:<a@b>")
				c.cmd(354, "DATA")
				c.send(tc.data + ".\r\nNOOP\r\n")
				if got := c.codes(2); got != itoa(tc.code)+" 250" {
					t.Fatalf("got %s, want %d 250", got, tc.code)
				}
			}
			c.cmd(221, "QUIT")
			ms := got.all()
			if tc.code != 250 {
				if len(ms) != 0 || s.Stats().Errors[tc.code] != 2 {
					t.Errorf("messages %v, stats %+v", ms, s.Stats())
				}
				return
			}
			if len(ms) != 2 || ms[0].Size != tc.size || ms[1].Size != tc.size {
				t.Errorf("messages %+v, want size %d", ms, tc.size)
			}
		})
	}
}

// By default a session may begin with MAIL, as with Postfix's smtp-sink
// (smtp-source -o sends no HELO); without EHLO, MAIL's parameters are
// refused. HeloRequired refuses MAIL before HELO or EHLO, and LMTP always
// does before LHLO.
func TestMailBeforeHelo(t *testing.T) {
	c := dial(t, startSink(t, Config{}, hooks{}))
	c.cmd(555, "MAIL FROM:<a@b> SIZE=10")
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(250, "RCPT TO:<c@d>")
	c.cmd(354, "DATA")
	c.cmd(250, "Subject: x\r\n\r\nbody\r\n.")
	c.cmd(221, "QUIT")
	for _, cfg := range []Config{{HeloRequired: true}, {LMTP: true}} {
		c := dial(t, startSink(t, cfg, hooks{}))
		c.cmd(503, "MAIL FROM:<a@b>")
		c.cmd(221, "QUIT")
	}
}

// The greeting says ESMTP unless EHLO is refused (NoESMTP, smtp-sink -e):
// clients take the word as the sign to try EHLO.
func TestGreetingESMTP(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{{Config{}, " ESMTP "}, {Config{NoESMTP: true}, ""}, {Config{LMTP: true}, " LMTP "}} {
		conn, err := net.Dial("tcp", startSink(t, c.cfg, hooks{}).Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, msg, err := nettextproto.NewConn(conn).ReadResponse(220)
		conn.Close()
		if err != nil || strings.Contains(msg, "ESMTP") != (c.want == " ESMTP ") || c.want != "" && !strings.Contains(msg, c.want) {
			t.Errorf("%+v: greeting %q (%v), want %q in it", c.cfg, msg, err, c.want)
		}
	}
}

package smtpsink

import (
	"bufio"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

func TestParseRule(t *testing.T) {
	for _, tc := range []struct {
		in    string
		stage Stage
		re    string
		odds  float64
		code  int
		text  string
	}{
		{"rcpt:^bounce@=550 5.1.1 no such user", StageRcpt, "^bounce@", 0, 550, "5.1.1 no such user"},
		{"mail:^flaky@@50%=451 4.3.0 try later", StageMail, "^flaky@", 50, 451, "4.3.0 try later"},
		{"dot:=554", StageDot, "", 0, 554, ""},
		{"connect:^192\\.0\\.2\\.@12.5%=421 4.7.0 go away", StageConnect, "^192\\.0\\.2\\.", 12.5, 421, "4.7.0 go away"},
		{"helo:a=b=450 x=y", StageHelo, "a=b", 0, 450, "x=y"},
		{"bdat:LAST$=552", StageBDAT, "LAST$", 0, 552, ""},
		{"rcpt:^x@50\\%=550", StageRcpt, "^x@50\\%", 0, 550, ""}, // a pattern that ends in @50%, escaped
		{"rcpt:a@b@5%=550", StageRcpt, "a@b", 5, 550, ""},
		{"rcpt:@relay%=550", StageRcpt, "@relay%", 0, 550, ""}, // no number there: a pattern
	} {
		r, err := ParseRule(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		re := ""
		if r.Match != nil {
			re = r.Match.String()
		}
		if r.Stage != tc.stage || re != tc.re || r.Odds != tc.odds || r.Reply.Code != tc.code || r.Reply.Text != tc.text {
			t.Errorf("%q: got %s %q %v %d %q", tc.in, r.Stage, re, r.Odds, r.Reply.Code, r.Reply.Text)
		}
	}
	for _, bad := range []string{"", "rcpt", "rcpt:x", "rcpt:x=55", "rcpt:x=250 ok", "rcpt:x=600", "quit:x=550", "rcpt:(=550", "rcpt:x@101%=550", "RCPT:x=550", "rcpt:x@0%=550", "rcpt:@0.0%=550",
		"rcpt:a@-1%=550", "rcpt:a@50 %=550", "rcpt:a@1e2%=550", "rcpt:@.5%=550", "rcpt:a@%=550"} { // mistyped odds, once taken into the pattern
		if _, err := ParseRule(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := Listen(t.Context(), Config{Addr: "127.0.0.1:0", Rules: []Rule{{Stage: "quit", Reply: Reply{Code: 550}}}}); err == nil {
		t.Error("Listen with a rule of an unknown stage: no error")
	}
}

// draws is a Rule's random source for tests: the draws given, in turn.
type draws struct {
	mu sync.Mutex
	v  []float64
}

func (d *draws) next() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := d.v[0]
	d.v = append(d.v[1:], v)
	return v
}

// Rules refuse what they match at their stage, the first that matches and
// wins its odds deciding; the session goes on, but after a 421.
func TestRules(t *testing.T) {
	must := func(s string) Rule {
		r, err := ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	d := &draws{v: []float64{10, 90}} // a 50% rule applies, then not, in turn
	var got messages
	s := startSink(t, Config{OnMessage: got.add, Rules: []Rule{
		must("helo:^bad\\.=550 5.7.1 go away"),
		must("rcpt:^bounce@=550 5.1.1 no such user"),
		must("rcpt:^bounce=551 never reached: the first rule decides"),
		must("mail:^flaky@@50%=451 4.3.0 try later"),
		must("data:^nodata@=554 5.7.1 no data for you"),
		must("dot:^spam@=550 5.7.1 spam"),
		must("bdat:LAST$=552 5.3.4 too big"),
		must("mail:^bye@=421 4.7.0 closing"),
	}}, hooks{percent: d.next})
	c := dial(t, s)
	for _, step := range []struct {
		code int
		line string
	}{
		{550, "EHLO bad.example"},
		{250, "EHLO good.example"},
		{451, "MAIL FROM:<flaky@x>"},
		{250, "MAIL FROM:<flaky@x>"},
		{550, "RCPT TO:<bounce@x>"},
		{250, "RCPT TO:<ok@x>"},
		{354, "DATA"},
		{250, "hi\r\n."},
		{250, "MAIL FROM:<a@x>"},
		{250, "RCPT TO:<ok@x>"},
		{250, "RCPT TO:<nodata@x>"},
		{554, "DATA"},
		{250, "RSET"},
		{250, "MAIL FROM:<a@x>"},
		{250, "RCPT TO:<spam@x>"},
		{354, "DATA"},
		{550, "hi\r\n."},
		{250, "MAIL FROM:<a@x>"},
		{250, "RCPT TO:<ok@x>"},
	} {
		c.cmd(step.code, step.line)
	}
	c.send("BDAT 2 LAST\r\nhi")
	c.expect(552)
	c.cmd(503, "RCPT TO:<ok@x>") // the refused chunk ended the transaction
	c.cmd(421, "MAIL FROM:<bye@x>")
	if _, err := c.R.ReadByte(); err != io.EOF {
		t.Errorf("after the 421: %v, want EOF", err)
	}
	if ms := got.all(); len(ms) != 1 || ms[0].From != "flaky@x" {
		t.Errorf("messages %+v", ms)
	}

	// connect: a refused client may only QUIT.
	s = startSink(t, Config{Rules: []Rule{must("connect:^127\\.=554 5.7.1 not from here")}}, hooks{})
	conn, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	io.WriteString(conn, "EHLO c\r\nQUIT\r\n")
	var lines []string
	for range 3 {
		l, _ := r.ReadString('\n')
		lines = append(lines, strings.TrimSpace(l))
	}
	if lines[0] != "554 5.7.1 not from here" || !strings.HasPrefix(lines[1], "503 ") || !strings.HasPrefix(lines[2], "221 ") {
		t.Errorf("connect rule: %q", lines)
	}
}

// In LMTP a dot rule gives each recipient its own reply; the message
// counts as accepted for the recipients that got 250.
func TestRulesLMTP(t *testing.T) {
	r, err := ParseRule("dot:^full@=452 4.2.2 mailbox full")
	if err != nil {
		t.Fatal(err)
	}
	s := startSink(t, Config{LMTP: true, Rules: []Rule{r}}, hooks{})
	c := dial(t, s)
	c.cmd(250, "LHLO c")
	c.cmd(250, "MAIL FROM:<a@x>")
	c.cmd(250, "RCPT TO:<one@x>")
	c.cmd(250, "RCPT TO:<full@x>")
	c.cmd(250, "RCPT TO:<two@x>")
	c.cmd(354, "DATA")
	c.send("hi\r\n.\r\n")
	if got := c.codes(3); got != "250 452 250" {
		t.Errorf("replies %s, want 250 452 250", got)
	}
	c.cmd(250, "MAIL FROM:<a@x>")
	c.cmd(250, "RCPT TO:<full@x>")
	c.cmd(354, "DATA")
	c.cmd(452, "hi\r\n.")
	c.cmd(221, "QUIT")
	s.Close()
	if st := s.Stats(); st.Messages != 1 || st.Recipients != 2 || st.Errors[452] != 2 {
		t.Errorf("stats %+v", st)
	}
}

// In LMTP a 421 to a message's data is the server closing: one reply,
// then the connection closes, and the recipients after it get none, as
// from Postfix's smtp-sink -L -Q . (a 421 for each recipient before).
func TestLMTPClosingReply(t *testing.T) {
	full, err := ParseRule("dot:^two@=421 4.3.0 going away")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		cfg     Config
		replies string
		rcpts   uint64
	}{
		{"Force", Config{Force: map[string]Reply{".": {Code: 421, Close: true}}}, "421", 0},
		{"Decide", Config{Decide: func(Message) Reply { return Reply{Code: 421} }}, "421", 0},
		{"Rules", Config{Rules: []Rule{full}}, "250 421", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.LMTP = true
			s := startSink(t, c.cfg, hooks{})
			cl := dial(t, s)
			cl.cmd(250, "LHLO c")
			cl.send("MAIL FROM:<a@x>\r\nRCPT TO:<one@x>\r\nRCPT TO:<two@x>\r\nRCPT TO:<three@x>\r\nDATA\r\n")
			if got := cl.codes(5); got != "250 250 250 250 354" {
				t.Fatalf("replies %s", got)
			}
			cl.send("hi\r\n.\r\n")
			if got := cl.codes(len(strings.Fields(c.replies))); got != c.replies {
				t.Errorf("replies %s, want %s", got, c.replies)
			}
			if line, err := cl.R.ReadString('\n'); err != io.EOF {
				t.Errorf("after the 421: %q, %v; want the end of the connection", line, err)
			}
			s.Close()
			if st := s.Stats(); st.Recipients != c.rcpts || st.Errors[421] != 1 {
				t.Errorf("stats %+v, want %d recipients and one 421", st, c.rcpts)
			}
		})
	}
}

// Decide learns whether the sink's dot Rules refuse the message
// (Message.Refused): in LMTP only if they refuse every recipient. Its
// zero Reply then leaves their refusal, its own reply replaces it.
func TestDecideRefused(t *testing.T) {
	bad, err := ParseRule("dot:^bad@=550 5.7.1 no")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		lmtp  bool
		rcpts []string
		want  bool   // Message.Refused
		reply string // with Decide's zero Reply
	}{
		{"SMTP accepted", false, []string{"good@x"}, false, "250"},
		{"SMTP refused", false, []string{"bad@x"}, true, "550"},
		{"LMTP one refused", true, []string{"bad@x", "good@x"}, false, "550 250"},
		{"LMTP all refused", true, []string{"bad@x", "bad@z"}, true, "550 550"},
	} {
		t.Run(c.name, func(t *testing.T) {
			refused := make(chan bool, 1)
			s := startSink(t, Config{LMTP: c.lmtp, Rules: []Rule{bad}, Decide: func(m Message) Reply {
				refused <- m.Refused
				return Reply{}
			}}, hooks{})
			cl := dial(t, s)
			cl.cmd(250, map[bool]string{false: "EHLO c", true: "LHLO c"}[c.lmtp])
			cl.cmd(250, "MAIL FROM:<a@x>")
			for _, r := range c.rcpts {
				cl.cmd(250, "RCPT TO:<"+r+">")
			}
			cl.cmd(354, "DATA")
			cl.send("hi\r\n.\r\n")
			if got := cl.codes(len(strings.Fields(c.reply))); got != c.reply {
				t.Errorf("replies %s, want %s", got, c.reply)
			}
			if got := <-refused; got != c.want {
				t.Errorf("Message.Refused %v, want %v", got, c.want)
			}
		})
	}
}

// In LMTP, OnMessage's Message.To is the recipients the data's replies
// accepted (as Stats.Recipients counts them): not those a dot rule
// refused, nor those after a 421, which get no reply. Decide, before
// those replies, has every recipient RCPT took. It listed them all.
func TestLMTPOnMessageTo(t *testing.T) {
	refuse, err := ParseRule("dot:^(full|busy)@=452 4.2.2 mailbox full")
	if err != nil {
		t.Fatal(err)
	}
	closing, err := ParseRule("dot:^bye@=421 4.3.0 going away")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		t.Run(string(e), func(t *testing.T) {
			var got messages
			var decided messages
			s := startSink(t, Config{Engine: e, LMTP: true, Rules: []Rule{refuse, closing}, OnMessage: got.add,
				Decide: func(m Message) Reply { decided.add(m); return Reply{} }}, hooks{})
			c := dial(t, s)
			c.cmd(250, "LHLO c")
			c.send("MAIL FROM:<a@x>\r\nRCPT TO:<one@x>\r\nRCPT TO:<full@x>\r\nRCPT TO:<two@x>\r\nRCPT TO:<busy@x>\r\nDATA\r\n")
			if codes := c.codes(6); codes != "250 250 250 250 250 354" {
				t.Fatalf("replies %s", codes)
			}
			c.send("hi\r\n.\r\n")
			if codes := c.codes(4); codes != "250 452 250 452" {
				t.Fatalf("replies to the data %s, want 250 452 250 452", codes)
			}
			c.send("MAIL FROM:<a@x>\r\nRCPT TO:<one@x>\r\nRCPT TO:<bye@x>\r\nRCPT TO:<two@x>\r\nDATA\r\n")
			if codes := c.codes(5); codes != "250 250 250 250 354" {
				t.Fatalf("replies %s", codes)
			}
			c.send("hi\r\n.\r\n")
			if codes := c.codes(2); codes != "250 421" {
				t.Fatalf("replies to the data %s, want 250 421", codes)
			}
			s.Close()
			ms := got.all()
			if len(ms) != 2 || strings.Join(ms[0].To, " ") != "one@x two@x" || strings.Join(ms[1].To, " ") != "one@x" {
				t.Errorf("OnMessage's recipients %q, want [one@x two@x] and [one@x]", tos(ms))
			}
			if ds := decided.all(); len(ds) != 2 || strings.Join(ds[0].To, " ") != "one@x full@x two@x busy@x" {
				t.Errorf("Decide's recipients %q, want every RCPT's", tos(ds))
			}
			var n int
			for _, m := range ms {
				n += len(m.To)
			}
			if st := s.Stats(); st.Recipients != uint64(n) {
				t.Errorf("Stats.Recipients %d, OnMessage's %d", st.Recipients, n)
			}
		})
	}
}

func tos(ms []Message) [][]string {
	var r [][]string
	for _, m := range ms {
		r = append(r, m.To)
	}
	return r
}

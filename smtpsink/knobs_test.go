package smtpsink

import (
	"context"
	"fmt"
	"io"
	"net"
	nettextproto "net/textproto"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"weak"
)

// LMTP answers the data once per accepted recipient (RFC 2033 §4.2),
// refusals included, and only those that were accepted.
func TestLMTP(t *testing.T) {
	var got messages
	s := startSink(t, Config{LMTP: true, MaxRecipients: 3, OnMessage: got.add}, hooks{})
	c := dial(t, s)
	c.cmd(250, "LHLO c")
	c.send("MAIL FROM:<a@b>\r\nRCPT TO:<>\r\nDATA\r\nBDAT 1 LAST\r\nxRSET\r\n")
	if got := c.codes(5); got != "250 501 503 503 250" { // RFC 2033 §4.2: no recipient, 503
		t.Fatalf("got %s", got)
	}
	c.send("MAIL FROM:<a@b>\r\nRCPT TO:<1@b>\r\nRCPT TO:<>\r\nRCPT TO:<2@b>\r\nRCPT TO:<3@b>\r\nRCPT TO:<4@b>\r\nDATA\r\n")
	if got := c.codes(7); got != "250 250 501 250 250 452 354" {
		t.Fatalf("got %s", got)
	}
	c.send("hi\r\n.\r\n")
	if got := c.codes(3); got != "250 250 250" {
		t.Fatalf("got %s", got)
	}
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(250, "RCPT TO:<1@b>")
	c.cmd(250, "RCPT TO:<2@b>")
	c.cmd(354, "DATA")
	c.send("bare\nLF\r\n.\r\n")
	if got := c.codes(2); got != "550 550" {
		t.Fatalf("got %s", got)
	}
	c.cmd(221, "QUIT")
	if ms := got.all(); len(ms) != 1 || len(ms[0].To) != 3 || ms[0].Size != 4 {
		t.Errorf("messages %+v", ms)
	}
	if st := s.Stats(); st.Messages != 1 || st.Recipients != 3 || st.Errors[550] != 2 || st.Errors[503] != 2 {
		t.Errorf("stats %+v", st)
	}
}

// Forced replies (Postfix smtp-sink's -f, -r, -q, -Q): the command has no
// effect, data is still read to its end, and Close ends the session.
func TestForce(t *testing.T) {
	t.Run("hard RCPT", func(t *testing.T) {
		c := dial(t, startSink(t, Config{Force: map[string]Reply{"RCPT": {Code: 550, Text: "5.1.1 no such user"}}}, hooks{}))
		c.cmd(250, "EHLO c")
		c.cmd(250, "MAIL FROM:<a@b>")
		if msg := c.cmd(550, "RCPT TO:<a@b>"); msg != "5.1.1 no such user" {
			t.Errorf("text %q", msg)
		}
		c.cmd(554, "DATA")
		c.cmd(221, "QUIT")
	})
	t.Run("pipelined", func(t *testing.T) {
		// A forced reply in the middle of a group leaves with the others.
		cli, br, wl := pipeSession(t, Config{Force: map[string]Reply{"RCPT": {Code: 450}}}, hooks{})
		cli.Write([]byte("EHLO c\r\n"))
		io.ReadFull(br, make([]byte, len(ehloReply(&Config{Hostname: "smtp-sink"}, false))))
		before := len(wl.log())
		cli.Write([]byte("MAIL FROM:<a@b>\r\nRCPT TO:<a@b>\r\nRCPT TO:<c@d>\r\nDATA\r\n"))
		want := "250 2.1.0 Ok\r\n450 4.3.0 Error: command failed\r\n450 4.3.0 Error: command failed\r\n554 5.5.1 Error: no valid recipients\r\n"
		got := make([]byte, len(want))
		if _, err := io.ReadFull(br, got); err != nil || string(got) != want {
			t.Fatalf("got %q, %v", got, err)
		}
		if w := wl.log()[before:]; len(w) != 1 {
			t.Errorf("%d writes: %q", len(w), w)
		}
	})
	t.Run("soft dot", func(t *testing.T) {
		s := startSink(t, Config{Force: map[string]Reply{".": {Code: 450}}}, hooks{})
		c := dial(t, s)
		c.cmd(250, "EHLO c")
		for range 2 {
			c.cmd(250, "MAIL FROM:<a@b>")
			c.cmd(250, "RCPT TO:<a@b>")
			c.cmd(354, "DATA")
			c.send("x\r\n.\r\n")
			if msg := c.expect(450); msg != "4.3.0 Error: command failed" {
				t.Errorf("text %q", msg)
			}
		}
		c.cmd(221, "QUIT")
		if st := s.Stats(); st.Messages != 0 || st.Errors[450] != 2 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("421 MAIL", func(t *testing.T) {
		s := startSink(t, Config{Force: map[string]Reply{"MAIL": {Code: 421, Close: true}}}, hooks{})
		c := dial(t, s)
		c.cmd(250, "EHLO c")
		c.cmd(421, "MAIL FROM:<a@b>")
		if _, err := c.R.ReadByte(); err != io.EOF {
			t.Errorf("after 421: %v, want EOF", err)
		}
	})
	t.Run("refused QUIT", func(t *testing.T) {
		// A forced QUIT reply without Close has no effect either: the
		// session goes on, as with Postfix smtp-sink's -f QUIT and -r
		// QUIT, and has not ended with QUIT.
		ends := make(chan SessionInfo, 1)
		s := startSink(t, Config{Force: map[string]Reply{"QUIT": {Code: 500}},
			OnSessionEnd: func(i SessionInfo) { ends <- i }}, hooks{})
		c := dial(t, s)
		c.cmd(250, "EHLO c")
		if msg := c.cmd(500, "QUIT"); msg != "5.3.0 Error: command failed" {
			t.Errorf("text %q", msg)
		}
		c.cmd(250, "NOOP")
		c.send("QUIT\r\nNOOP\r\n")
		if got := c.codes(2); got != "500 250" {
			t.Errorf("pipelined: got %s", got)
		}
		c.Close()
		if i := <-ends; i.Quit {
			t.Errorf("session end %+v, want Quit false", i)
		}
	})
	t.Run("XCLIENT XFORWARD", func(t *testing.T) {
		// Postfix smtp-sink's -f, -r, -q and -Q take XCLIENT and XFORWARD
		// too; a forced reply replaces the sink's own (a new greeting
		// for XCLIENT), and the session goes on.
		c := dial(t, startSink(t, Config{Force: map[string]Reply{"XCLIENT": {Code: 500}, "XFORWARD": {Code: 450}}}, hooks{}))
		c.cmd(250, "EHLO c")
		if msg := c.cmd(500, "XCLIENT NAME=foo"); msg != "5.3.0 Error: command failed" {
			t.Errorf("XCLIENT: text %q", msg)
		}
		if msg := c.cmd(450, "XFORWARD NAME=foo"); msg != "4.3.0 Error: command failed" {
			t.Errorf("XFORWARD: text %q", msg)
		}
		c.cmd(250, "NOOP")
		c.cmd(221, "QUIT")
	})
	t.Run("421 QUIT", func(t *testing.T) {
		// A session a forced reply to QUIT closes has not ended with
		// QUIT, as SessionInfo says: Postfix smtp-sink -Q QUIT and -q
		// QUIT count no quit (its -c "quit=0", and -n does not stop).
		for _, r := range []Reply{{Code: 421, Close: true}, {Close: true}} {
			ends := make(chan SessionInfo, 1)
			s := startSink(t, Config{Force: map[string]Reply{"QUIT": r},
				OnSessionEnd: func(i SessionInfo) { ends <- i }}, hooks{})
			c := dial(t, s)
			c.cmd(250, "HELO c")
			c.send("QUIT\r\n")
			rest, err := io.ReadAll(c.R)
			if want := map[int]string{421: "421 4.3.0 Error: command failed\r\n"}[r.Code]; err != nil || string(rest) != want {
				t.Errorf("%+v: after QUIT %q, %v; want %q", r, rest, err, want)
			}
			if i := <-ends; i.Quit {
				t.Errorf("%+v: session end %+v, want Quit false", r, i)
			}
		}
	})
	t.Run("drop DATA", func(t *testing.T) {
		c := dial(t, startSink(t, Config{Force: map[string]Reply{"DATA": {Close: true}}}, hooks{}))
		c.cmd(250, "EHLO c")
		c.cmd(250, "MAIL FROM:<a@b>")
		c.cmd(250, "RCPT TO:<a@b>")
		c.send("DATA\r\n")
		if _, err := c.R.ReadByte(); err != io.EOF {
			t.Errorf("after DATA: %v, want EOF", err)
		}
	})
	t.Run("CONNECT", func(t *testing.T) {
		s := startSink(t, Config{Force: map[string]Reply{"CONNECT": {Code: 554, Text: "5.3.2 go away"}}}, hooks{})
		c, err := nettextprotoDial(s)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if code, msg, err := c.ReadResponse(554); err != nil || msg != "5.3.2 go away" {
			t.Fatalf("greeting %d %q %v", code, msg, err)
		}
		cl := &client{t: t, Conn: c}
		cl.cmd(503, "EHLO c")
		cl.cmd(221, "QUIT")
	})
	t.Run("invalid", func(t *testing.T) {
		for _, f := range []map[string]Reply{{"FROB": {Code: 500}}, {"RCPT": {Code: 250}}, {"RCPT": {}}} {
			if _, err := Listen(t.Context(), Config{Addr: "127.0.0.1:0", Force: f}); err == nil {
				t.Errorf("Force %v accepted", f)
			}
		}
	})
}

// Delay waits before the replies to the commands named, through the
// clock the test gives it: DATA before the 354, "." before the reply to
// the data. No reply can leave while a wait has not returned.
func TestDelay(t *testing.T) {
	waits := make(chan time.Duration)
	release := make(chan struct{})
	s := startSink(t, Config{Delay: map[string]time.Duration{"DATA": 2 * time.Second, ".": 3 * time.Second}},
		hooks{sleep: func(d time.Duration) {
			waits <- d
			<-release
		}})
	c := dial(t, s)
	c.cmd(250, "EHLO c")
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(250, "RCPT TO:<a@b>")
	c.send("DATA\r\n")
	if d := <-waits; d != 2*time.Second {
		t.Errorf("DATA waited %v", d)
	}
	release <- struct{}{}
	c.expect(354)
	c.send("x\r\n.\r\n")
	if d := <-waits; d != 3*time.Second {
		t.Errorf(". waited %v", d)
	}
	if st := s.Stats(); st.Messages != 0 {
		t.Errorf("message counted before the wait ended: %+v", st)
	}
	release <- struct{}{}
	c.expect(250)
	c.cmd(221, "QUIT")
}

// DataReadDelay (smtp-sink -H) waits after the 354 and before the first
// read of the data: at the wait nothing after the DATA line has been
// read (a wait after reading the data would follow it), and once it
// ends the message is read and taken.
func TestDataReadDelay(t *testing.T) {
	waits := make(chan int64, 1)
	release := make(chan struct{})
	var read atomic.Int64
	s := startSink(t, Config{DataReadDelay: 7 * time.Second},
		hooks{
			sleep: func(d time.Duration) {
				if d != 7*time.Second {
					t.Errorf("waited %v, want 7s", d)
				}
				waits <- read.Load()
				<-release
			},
			read: func(n int) { read.Add(int64(n)) },
		})
	c := dial(t, s)
	c.cmd(250, "EHLO c")
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(250, "RCPT TO:<a@b>")
	c.cmd(354, "DATA")
	before := read.Load()
	c.send("x\r\n.\r\n")
	select {
	case at := <-waits:
		// The loops engine counts a read once the session has served
		// it, so the read with DATA may be counted after the wait began.
		if at > before {
			t.Errorf("%d bytes read before the wait, %d after the 354", at, at-before)
		}
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("no wait after the 354")
	}
	close(release)
	c.expect(250)
	c.cmd(221, "QUIT")
	if read.Load() <= before {
		t.Errorf("the data was not read")
	}
}

// Greeting replaces the greeting's text (smtp-sink -P's "********"), and
// NoEnhancedStatusCodes takes ENHANCEDSTATUSCODES out of the EHLO reply
// but not the codes out of the replies (as Postfix's smtp-sink -E).
func TestGreetingNoEnhancedStatusCodes(t *testing.T) {
	s := startSink(t, Config{Greeting: "********", NoEnhancedStatusCodes: true}, hooks{})
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := &client{t: t, Conn: nettextproto.NewConn(nc), raw: nc}
	if got := c.expect(220); got != "********" {
		t.Errorf("greeting %q", got)
	}
	if got := c.cmd(250, "EHLO c"); strings.Contains(got, "ENHANCEDSTATUSCODES") || !strings.Contains(got, "PIPELINING") {
		t.Errorf("EHLO reply %q", got)
	}
	if got := c.cmd(250, "MAIL FROM:<a@b>"); !strings.HasPrefix(got, "2.1.0 ") {
		t.Errorf("MAIL reply %q", got)
	}
	c.cmd(221, "QUIT")
}

// A server closed (or shut down) is not kept by the ctx it was made
// with: Listen registered its Close on ctx for good, so a ctx that lives
// on (a program's, a test suite's, each making sinks) kept every server
// it had made, closed or not. Collected garbage is polled for (a closed
// server's last goroutines may still be returning); it fails only if
// the server is never collected.
func TestClosedServerNotKeptByCtx(t *testing.T) {
	for _, e := range []Engine{EngineGoroutine, EngineLoops} {
		for _, how := range []string{"Close", "Shutdown"} {
			t.Run(string(e)+"/"+how, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel() // only after the check
				s, err := Listen(ctx, Config{Addr: "127.0.0.1:0", Engine: e, ErrorLog: quiet})
				if err != nil {
					t.Fatal(err)
				}
				served := make(chan error, 1)
				go func() { served <- s.Serve() }()
				if how == "Close" {
					err = s.Close()
				} else {
					err = s.Shutdown(context.Background())
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := <-served; err != nil {
					t.Fatal(err)
				}
				wp := weak.Make(s)
				s = nil
				for start := time.Now(); wp.Value() != nil; runtime.Gosched() {
					if time.Since(start) > 10*time.Second {
						t.Fatalf("the server is still reachable after %s, while its ctx lives", how)
					}
					runtime.GC()
				}
			})
		}
	}
}

// Close ends idle sessions with 421 (counted as aborted) and Serve
// returns nil; Shutdown waits for a session to QUIT.
func TestCloseShutdown(t *testing.T) {
	s, err := Listen(context.Background(), Config{Addr: "127.0.0.1:0", ErrorLog: quiet})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	c := dial(t, s)
	c.cmd(250, "EHLO c")
	c2 := dial(t, s)
	c2.cmd(250, "HELO c")
	c2.cmd(221, "QUIT")

	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	c.cmd(250, "NOOP") // still served while shutting down
	c.cmd(221, "QUIT")
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if st := s.Stats(); st.Sessions != 2 || st.Aborted != 0 || st.Active != 0 {
		t.Errorf("stats %+v", st)
	}

	ctx, cancel := context.WithCancel(context.Background())
	s, err = Listen(ctx, Config{Addr: "127.0.0.1:0", ErrorLog: quiet})
	if err != nil {
		t.Fatal(err)
	}
	go func() { served <- s.Serve() }()
	c = dial(t, s)
	c.cmd(250, "EHLO c")
	cancel() // closes the server, as Close does
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	c.expect(421) // RFC 5321 §3.8
	if _, err := c.R.ReadByte(); err != io.EOF {
		t.Errorf("after Close: %v, want EOF", err)
	}
	s.Close() // waits for the session's end
	if st := s.Stats(); st.Sessions != 1 || st.Aborted != 1 || st.Active != 0 {
		t.Errorf("stats %+v", st)
	}
	if err := s.Serve(); err != ErrServing {
		t.Errorf("second Serve: %v", err)
	}
}

// Trace shows each read and write: a pipelined group and its one reply.
func TestTrace(t *testing.T) {
	var tr strings.Builder
	cli, br, _ := pipeSession(t, Config{Trace: &tr}, hooks{})
	cli.Write([]byte("HELO c\r\nNOOP\r\n"))
	io.ReadFull(br, make([]byte, len("250 smtp-sink\r\n250 2.0.0 Ok\r\n")))
	cli.Write([]byte("RSET\r\nQUIT\r\n"))
	io.ReadAll(br)
	want := `1 > "220 smtp-sink ESMTP wirespeed smtp-sink\r\n"
1 < "HELO c\r\nNOOP\r\n"
1 > "250 smtp-sink\r\n"
1 > "250 2.0.0 Ok\r\n"
1 < "RSET\r\nQUIT\r\n"
1 > "250 2.0.0 Ok\r\n221 2.0.0 Bye\r\n"
`
	if tr.String() != want {
		t.Errorf("trace\n%s\nwant\n%s", tr.String(), want)
	}
}

// With MaxConns 1 a second client waits in the listen queue until the
// first has left, and is then served.
func TestMaxConns(t *testing.T) {
	s := startSink(t, Config{MaxConns: 1}, hooks{})
	c1 := dial(t, s)
	c1.cmd(250, "EHLO one")
	greeted := make(chan *client, 1)
	go func() {
		c2, err := nettextprotoDial(s)
		if err != nil {
			t.Error(err)
			close(greeted)
			return
		}
		cl := &client{t: t, Conn: c2}
		if _, _, err := c2.ReadResponse(220); err != nil {
			t.Error(err)
		}
		greeted <- cl
	}()
	c1.cmd(221, "QUIT")
	c2 := <-greeted
	if c2 == nil {
		return
	}
	defer c2.Close()
	c2.cmd(221, "QUIT")
	if st := s.Stats(); st.Sessions != 2 {
		t.Errorf("stats %+v", st)
	}
}

// Close ends a session in the middle of a message, or waiting in a
// delay, with 421 too.
func TestCloseMidMessage(t *testing.T) {
	for _, delay := range []bool{false, true} {
		cfg := Config{Addr: "127.0.0.1:0", ErrorLog: quiet}
		if delay {
			cfg.Delay = map[string]time.Duration{".": time.Hour}
		}
		s, err := Listen(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve()
		c := dial(t, s)
		c.cmd(250, "EHLO c")
		c.cmd(250, "MAIL FROM:<a@b>")
		c.cmd(250, "RCPT TO:<a@b>")
		c.cmd(354, "DATA")
		if delay {
			c.send("x\r\n.\r\n")
		} else {
			c.send("half a message")
		}
		c.send("MAIL FROM:<a@b>\r\n") // a session waiting for DATA's end, or in the delay
		s.Close()
		c.expect(421)
		if st := s.Stats(); st.Aborted != 1 || st.Messages != 0 || st.ErrorCount() != 0 {
			t.Errorf("stats %+v", st)
		}
	}
}

// TestDelayRealClock waits with the real clock: a wait longer than
// preciseWait (a timer, then the Sleeper) and a shorter one (the Sleeper
// alone) both end with the right replies. (How long they take is a
// benchmark's business: wirespeed bench smtp's latency-honesty rows.)
func TestDelayRealClock(t *testing.T) {
	cfg := Config{Addr: "127.0.0.1:0", ErrorLog: quiet, Delay: map[string]time.Duration{"DATA": preciseWait + time.Millisecond, ".": time.Millisecond}}
	s, err := Listen(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	defer s.Close()
	c := dial(t, s)
	c.cmd(250, "EHLO c")
	c.deliver(3, "a@b")
	c.cmd(221, "QUIT")
	if st := s.Stats(); st.Messages != 3 {
		t.Errorf("stats %+v", st)
	}
}

// The pseudo keys of Force and Delay name events, not commands: a client
// line "." or "CONNECT x" is an unknown command, answered with 500 at
// once, without the wait or the reply (here a close, as -q .) configured
// for the greeting and the end of a message's data, which keep theirs.
func TestPseudoKeysNotCommands(t *testing.T) {
	waits := make(chan time.Duration, 10)
	s := startSink(t, Config{
		Force: map[string]Reply{".": {Close: true}, "CONNECT": {Code: 554, Text: "5.7.0 not here"}},
		Delay: map[string]time.Duration{"CONNECT": 3 * time.Second, ".": 3 * time.Second},
	}, hooks{sleep: func(d time.Duration) { waits <- d }})
	c, err := nettextprotoDial(s)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if code, _, err := c.ReadResponse(554); err != nil {
		t.Fatalf("greeting %d %v", code, err)
	}
	if d := <-waits; d != 3*time.Second {
		t.Errorf("greeting waited %v", d)
	}
	cl := &client{t: t, Conn: c}
	cl.cmd(503, "EHLO c") // a refused greeting serves QUIT only
	cl.cmd(221, "QUIT")

	s = startSink(t, Config{
		Force: map[string]Reply{".": {Close: true}},
		Delay: map[string]time.Duration{"CONNECT": 3 * time.Second, ".": 3 * time.Second},
	}, hooks{sleep: func(d time.Duration) { waits <- d }})
	c2 := dial(t, s)
	<-waits
	c2.cmd(250, "EHLO c")
	for _, line := range []string{".", "CONNECT x", "connect", ". x"} {
		c2.cmd(500, line)
	}
	c2.cmd(250, "MAIL FROM:<a@b>")
	c2.cmd(250, "RCPT TO:<a@b>")
	c2.cmd(354, "DATA")
	c2.send("..\r\n.\r\n")
	if d := <-waits; d != 3*time.Second {
		t.Errorf("the data's end waited %v", d)
	}
	if _, err := c2.R.ReadByte(); err != io.EOF { // -q .: closed, no reply
		t.Errorf("after the data: %v, want EOF", err)
	}
	select {
	case d := <-waits:
		t.Errorf("another wait of %v", d)
	default:
	}
	if st := s.Stats(); st.Errors[500] != 4 || st.Messages != 0 {
		t.Errorf("stats %+v", st)
	}
}

// MaxDiscardBytes bounds what the sink reads only to throw away: past it
// the session gets 421 and is closed; within it the session goes on.
func TestMaxDiscardBytes(t *testing.T) {
	line := strings.Repeat("z", 48) + "\r\n" // 50 bytes
	for _, tc := range []struct {
		name, send, codes string
	}{
		{"DATA within", "DATA\r\n" + strings.Repeat(line, 2) + ".\r\nNOOP\r\n", "354 552 250"},
		{"DATA past", "DATA\r\n" + strings.Repeat(line, 4) + ".\r\nNOOP\r\n", "354 421"},
		{"refused chunk within", "RSET\r\nBDAT 100\r\n" + strings.Repeat(line, 2) + "NOOP\r\n", "250 503 250"},
		{"refused chunk past", "RSET\r\nBDAT 101\r\n" + strings.Repeat(line, 2) + "xNOOP\r\n", "250 421"},
		{"failed message's chunks", "BDAT 50\r\n" + line + "BDAT 50\r\n" + line + "BDAT 50\r\n" + line + "BDAT 1 LAST\r\nx", "552 552 552 421"},
		{"failed message within", "BDAT 50\r\n" + line + "BDAT 50\r\n" + line + "BDAT 1 LAST\r\nxNOOP\r\n", "552 552 552 250"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startSink(t, Config{MaxSize: 10, MaxDiscardBytes: 100}, hooks{})
			c := dial(t, s)
			c.cmd(250, "EHLO c")
			c.cmd(250, "MAIL FROM:<a@b>")
			c.cmd(250, "RCPT TO:<a@b>")
			c.send(tc.send)
			if got := c.codes(strings.Count(tc.codes, " ") + 1); got != tc.codes {
				t.Fatalf("got %s, want %s", got, tc.codes)
			}
			if strings.HasSuffix(tc.codes, "421") {
				if _, err := c.R.ReadByte(); err != io.EOF {
					t.Errorf("after the 421: %v, want EOF", err)
				}
			}
		})
	}
}

// The rest of the BDAT chunk a message fails in is bounded by
// MaxDiscardBytes too: a chunk of 1,000,000 bytes that passes MaxSize (or
// starts with a bare LF) gets 421 once its first 5,000 bytes are in, not
// after the rest (which never comes).
func TestMaxDiscardBytesFailingChunk(t *testing.T) {
	for _, first := range []string{"", "\n"} {
		s := startSink(t, Config{MaxSize: 10, MaxDiscardBytes: 1000}, hooks{})
		c := dial(t, s)
		c.cmd(250, "EHLO c")
		c.cmd(250, "MAIL FROM:<a@b>")
		c.cmd(250, "RCPT TO:<a@b>")
		c.send("BDAT 1000000 LAST\r\n" + first + strings.Repeat(strings.Repeat("z", 48)+"\r\n", 100))
		c.raw.SetReadDeadline(time.Now().Add(time.Minute)) // the old sink waited for the rest
		if msg := c.expect(421); !strings.Contains(msg, "too much data to discard") {
			t.Errorf("%q first: 421 %s", first, msg)
		}
	}
}

// Config's zero values are safe: a finite Timeout, MinDataRate, MaxConns
// and MaxDiscardBytes; negative values turn them off.
func TestSafeDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	if c.Timeout != DefaultTimeout || c.MinDataRate != DefaultMinDataRate || c.MaxConns != DefaultMaxConns || c.MaxDiscardBytes != DefaultMaxDiscardBytes {
		t.Errorf("defaults %+v", c)
	}
	c = Config{Timeout: -1, MinDataRate: -1, MaxConns: -1, MaxDiscardBytes: -1}.withDefaults()
	if c.Timeout != 0 || c.MinDataRate != 0 || c.MaxConns != 0 || c.MaxDiscardBytes != 0 {
		t.Errorf("none %+v", c)
	}
	s := startSink(t, Config{}, hooks{})
	if cap(s.sem) != DefaultMaxConns {
		t.Errorf("MaxConns %d", cap(s.sem))
	}
}

// With RefuseOverMaxConns a connection over MaxConns gets 421 at once and
// is closed, counted in Refused and not as a session; once a session has
// ended, the next connection is served.
func TestMaxConnsRefuse(t *testing.T) {
	ended := make(chan struct{}, 1)
	s := startSink(t, Config{MaxConns: 1, RefuseOverMaxConns: true, OnSessionEnd: func(SessionInfo) { ended <- struct{}{} }}, hooks{})
	c1 := dial(t, s)
	c1.cmd(250, "EHLO one")
	c2, err := nettextprotoDial(s)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if code, msg, err := c2.ReadResponse(421); err != nil || !strings.Contains(msg, "too many connections") {
		t.Fatalf("over MaxConns: %d %q %v", code, msg, err)
	}
	if _, err := c2.R.ReadByte(); err != io.EOF {
		t.Errorf("after the 421: %v, want EOF", err)
	}
	c1.cmd(221, "QUIT")
	<-ended
	c3 := dial(t, s)
	c3.cmd(221, "QUIT")
	<-ended
	if st := s.Stats(); st.Sessions != 2 || st.Refused != 1 || st.Aborted != 0 {
		t.Errorf("stats %+v", st)
	}
}

// More clients than MaxConns wait their turn, more of them than MaxConns
// too (Postfix's smtp-source -s 1000 into -m 256): each is greeted once a
// session before it has ended, none is refused.
func TestMaxConnsQueue(t *testing.T) {
	const waiting = 5
	s := startSink(t, Config{MaxConns: 1}, hooks{})
	c1 := dial(t, s)
	c1.cmd(250, "EHLO one")
	var cs []*client
	for range waiting {
		c, err := nettextprotoDial(s)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		cs = append(cs, &client{t: t, Conn: c})
	}
	c1.cmd(221, "QUIT")
	// One slot: the clients are served one at a time, each once the one
	// before has quit, whatever the order the sink took them in.
	greeted := make(chan *client, waiting)
	for _, c := range cs {
		go func() {
			if _, _, err := c.ReadResponse(220); err != nil {
				t.Error(err)
			}
			greeted <- c
		}()
	}
	for range waiting {
		(<-greeted).cmd(221, "QUIT")
	}
	if st := s.Stats(); st.Sessions != waiting+1 || st.Refused != 0 {
		t.Errorf("stats %+v", st)
	}
}

// Shutdown with a ctx already done returns nil when no session was left
// to wait for, as net/http's Server.Shutdown does; ctx's error is for a
// Shutdown that gave up on a session (TestShutdownBlockedCallback,
// ExampleServer_Shutdown). On both engines, served or not.
func TestShutdownDoneCtxNothingToWaitFor(t *testing.T) {
	for _, e := range bothEngines {
		for _, serve := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/serve=%v", e, serve), func(t *testing.T) {
				s, err := Listen(context.Background(), Config{Addr: "127.0.0.1:0", Engine: e, ErrorLog: quiet})
				if err != nil {
					t.Fatal(err)
				}
				served := make(chan error, 1)
				if serve {
					go func() { served <- s.Serve() }()
				} else {
					served <- nil
				}
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				if err := s.Shutdown(ctx); err != nil {
					t.Errorf("Shutdown(done ctx) with no session: %v, want nil", err)
				}
				if err := <-served; err != nil {
					t.Errorf("Serve: %v", err)
				}
				// Nothing left still: a second call says the same.
				if err := s.Shutdown(ctx); err != nil {
					t.Errorf("second Shutdown(done ctx): %v, want nil", err)
				}
				closeWithin(t, s)
			})
		}
	}
}

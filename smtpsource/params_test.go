package smtpsource

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wirespeed/wirespeed/smtpsink"
)

// envelopes returns the MAIL and RCPT lines of cmds.
func envelopes(cmds []string) []string {
	var env []string
	for _, c := range cmds {
		if strings.HasPrefix(c, "MAIL") || strings.HasPrefix(c, "RCPT") {
			env = append(env, c)
		}
	}
	return env
}

// SIZE= goes out when offered unless NoSize; RET=, ENVID= and NOTIFY=
// only when asked for and offered;
// SMTPUTF8 when offered and an address of the message is not ASCII; each
// message's SIZE= is its size (with a message set, each file's, with
// ranged lengths each length), pipelined ahead too.
func TestMailParameters(t *testing.T) {
	dsn := Config{DSNNotify: "success,failure", DSNRet: "hdrs", DSNEnvID: "run+1 x"}
	all := []string{"SIZE 100000", "DSN", "SMTPUTF8", "PIPELINING"}
	for _, c := range []struct {
		name string
		ext  []string
		cfg  Config
		want []string
	}{
		{"offered", all, Config{DSNNotify: dsn.DSNNotify, DSNRet: dsn.DSNRet, DSNEnvID: dsn.DSNEnvID, Messages: 2, Reuse: true, Pipelining: true},
			[]string{"MAIL FROM:<from@client.test> SIZE=%d RET=HDRS ENVID=run+2B1+20x.0", "RCPT TO:<to@server.test> NOTIFY=SUCCESS,FAILURE",
				"MAIL FROM:<from@client.test> SIZE=%d RET=HDRS ENVID=run+2B1+20x.1", "RCPT TO:<to@server.test> NOTIFY=SUCCESS,FAILURE"}},
		{"not offered", []string{"PIPELINING"}, Config{DSNNotify: "NEVER", DSNRet: "FULL", Messages: 1, From: "jörg@client.test"},
			[]string{"MAIL FROM:<jörg@client.test>", "RCPT TO:<to@server.test>"}},
		{"not asked", all, Config{Messages: 1, NoSize: true}, []string{"MAIL FROM:<from@client.test>", "RCPT TO:<to@server.test>"}},
		{"size by default", all, Config{Messages: 1}, []string{"MAIL FROM:<from@client.test> SIZE=%d", "RCPT TO:<to@server.test>"}},
		{"utf8 recipient", all, Config{NoSize: true, Messages: 2, ToList: []string{"a@server.test", "ü@server.test"}},
			[]string{"MAIL FROM:<from@client.test>", "RCPT TO:<a@server.test>", "MAIL FROM:<from@client.test> SMTPUTF8", "RCPT TO:<ü@server.test>"}},
		{"utf8 sender", all, Config{NoSize: true, Messages: 1, From: "jörg@client.test", DSNNotify: "NEVER"},
			[]string{"MAIL FROM:<jörg@client.test> SMTPUTF8", "RCPT TO:<to@server.test> NOTIFY=NEVER"}},
		{"size of ranged lengths", all, Config{Messages: 3, Length: 100, LengthMax: 5000, Reuse: true, Pipelining: true},
			[]string{"MAIL FROM:<from@client.test> SIZE=%d", "RCPT TO:<to@server.test>", "MAIL FROM:<from@client.test> SIZE=%d", "RCPT TO:<to@server.test>", "MAIL FROM:<from@client.test> SIZE=%d", "RCPT TO:<to@server.test>"}},
		{"size of a set", all, Config{Messages: 2, MessageSet: [][]byte{[]byte("a\n"), []byte("bcd\n")}},
			[]string{"MAIL FROM:<from@client.test> SIZE=%d", "RCPT TO:<to@server.test>", "MAIL FROM:<from@client.test> SIZE=%d", "RCPT TO:<to@server.test>"}},
	} {
		f := &fakeServer{ext: c.ext}
		cfg := base(f.start(t))
		from := cfg.From
		if c.cfg.From != "" {
			from = c.cfg.From
		}
		cfg2 := c.cfg
		cfg2.Addr, cfg2.Helo, cfg2.From, cfg2.To = cfg.Addr, cfg.Helo, from, cfg.To
		if cfg2.Length == 0 && cfg2.MessageSet == nil {
			cfg2.Length = cfg.Length
		}
		res := runOK(t, cfg2)
		if res.Delivered != int64(cfg2.Messages) || res.Errors != 0 {
			t.Fatalf("%s: %+v", c.name, res)
		}
		msgs := f.messages()
		var sizes []any
		for _, m := range msgs {
			sizes = append(sizes, len(m))
		}
		// The messages arrive in the order sent (one session).
		want := strings.Split(fmt.Sprintf(strings.Join(c.want, "\n"), sizes[:strings.Count(strings.Join(c.want, ""), "%d")]...), "\n")
		if got := envelopes(f.commands()); !slices.Equal(got, want) {
			t.Errorf("%s: sent\n%q\nwant\n%q", c.name, got, want)
		}
	}
	for _, bad := range []Config{{DSNNotify: "NEVER,SUCCESS"}, {DSNNotify: "SOMETIMES"}, {DSNRet: "BODY"}, {DSNEnvID: "a\tb"}, {DSNNotify: "FAILURE,FAILURE"}} {
		bad.Addr = "x"
		if _, err := Run(context.Background(), bad); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", bad, err)
		}
	}
}

// Each message's SIZE= is its size, by default, with senders, recipients,
// message numbers and header lines of different lengths (the size is
// reckoned without making the message), pipelined ahead or not, and in
// old mode (no header).
func TestSizeOfEachMessage(t *testing.T) {
	for _, c := range []Config{
		{Messages: 23, Reuse: true, Pipelining: true, Subject: "a subject", Headers: []string{"X-A: 1", "X-Bb: 22"},
			FromList: []string{"a@c.test", "bbbb@c.test"}, ToList: []string{"x@s.test", "yyyyy@s.test", "z@s.test"}, Recipients: 2},
		{Messages: 12, Length: 10, LengthMax: 900},
		{Messages: 3, OldMode: true},
	} {
		f := &fakeServer{ext: []string{"SIZE", "PIPELINING"}}
		cfg := base(f.start(t))
		c.Addr, c.Helo = cfg.Addr, cfg.Helo
		if c.FromList == nil {
			c.From, c.To = cfg.From, cfg.To
		}
		runOK(t, c)
		var sizes []string
		for _, m := range envelopes(f.commands()) {
			if _, size, ok := strings.Cut(m, " SIZE="); ok {
				sizes = append(sizes, size)
			} else if strings.HasPrefix(m, "MAIL") && !c.OldMode {
				t.Errorf("%+v: %q without SIZE=", c, m)
			}
		}
		var want []string
		if !c.OldMode {
			for _, m := range f.messages() {
				want = append(want, fmt.Sprint(len(m)))
			}
		}
		if !slices.Equal(sizes, want) {
			t.Errorf("%+v: SIZE= %q, want %q", c, sizes, want)
		}
	}
}

// Against package smtpsink, which offers SIZE, DSN and SMTPUTF8 and checks
// their syntax: the parameters reach it (Capture's MailArgs and
// RcptArgs, Message.SMTPUTF8), and a SIZE= over its limit is refused at
// MAIL (552), before any data is sent.
func TestMailParametersSmtpsink(t *testing.T) {
	var mu sync.Mutex
	var mails, rcpts []string
	utf8 := 0
	srv := startSmtpsinkCfg(t, smtpsink.Config{MaxSize: 3000,
		Capture: func(tx smtpsink.Transaction) io.WriteCloser {
			mu.Lock()
			mails, rcpts = append(mails, tx.MailArgs), append(rcpts, tx.RcptArgs...)
			mu.Unlock()
			return nil
		},
		OnMessage: func(m smtpsink.Message) {
			mu.Lock()
			if m.SMTPUTF8 {
				utf8++
			}
			mu.Unlock()
		}})
	cfg := Config{Addr: srv.Addr().String(), Messages: 4, Sessions: 2, Length: 1000, Reuse: true, Pipelining: true,
		From: "jörg@client.test", To: "to@server.test", Helo: "client.test", DSNNotify: "FAILURE", DSNRet: "HDRS", DSNEnvID: "e"}
	res, err := Run(context.Background(), cfg)
	if err != nil || res.Delivered != 4 || res.Errors != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	mu.Lock()
	for _, m := range mails {
		if !strings.HasPrefix(m, "<jörg@client.test> SIZE=") || !strings.Contains(m, " RET=HDRS ENVID=e.") || !strings.HasSuffix(m, " SMTPUTF8") {
			t.Errorf("MAIL FROM:%s", m)
		}
	}
	for _, r := range rcpts {
		if r != "<to@server.test> NOTIFY=FAILURE" {
			t.Errorf("RCPT TO:%s", r)
		}
	}
	if len(mails) != 4 || len(rcpts) != 4 || utf8 != 4 {
		t.Errorf("%d MAILs, %d RCPTs, %d SMTPUTF8 messages", len(mails), len(rcpts), utf8)
	}
	mu.Unlock()

	cfg.Length, cfg.Messages = 5000, 3
	res, err = Run(context.Background(), cfg)
	if err != nil || res.Delivered != 0 || res.Replies["mail"][552] != 3 || res.Replies["dot"] != nil {
		t.Errorf("over SIZE: %+v %v", res, err)
	}
}

// CRAM-MD5, XOAUTH2 and OAUTHBEARER against the fake server: the right
// secret authenticates every connection; a wrong one ends the run with
// ErrAuth after the server's error challenge (XOAUTH2 answers it with an
// empty line, OAUTHBEARER cancels with "*").
func TestAuthMechanisms(t *testing.T) {
	srvTLS, roots := testCerts(t)
	for _, mech := range []string{"CRAM-MD5", "XOAUTH2", "OAUTHBEARER", "cram-md5"} {
		for _, right := range []bool{true, false} {
			f := &fakeServer{tlsConf: srvTLS, authMechs: []string{"PLAIN", "CRAM-MD5", "XOAUTH2", "OAUTHBEARER"}, authAfterTLS: true,
				users: map[string]string{"user@client.test": "s3cret"}}
			cfg := base(f.start(t))
			cfg.Messages, cfg.Sessions = 4, 2
			cfg.TLS, cfg.TLSConfig = true, &tls.Config{RootCAs: roots}
			cfg.AuthUser, cfg.AuthPass, cfg.AuthMech = "user@client.test", "s3cret", mech
			if !right {
				cfg.AuthPass = "wrong"
			}
			res, err := RunWith(context.Background(), cfg, nil, nil)
			if right {
				if err != nil || res.Delivered != 4 || res.Errors != 0 || res.Replies["auth"][235] != 4 || res.AuthMech != strings.ToUpper(mech) {
					t.Errorf("%s: %+v %v", mech, res, err)
				}
				continue
			}
			if !errors.Is(err, ErrAuth) {
				t.Errorf("%s, wrong secret: %v, want ErrAuth", mech, err)
			}
			cmds := f.commands()
			if answer, ok := map[string]string{"XOAUTH2": "", "OAUTHBEARER": "*"}[strings.ToUpper(mech)]; ok && !slices.Contains(cmds, answer) {
				t.Errorf("%s: no %q answer to the error challenge in %q", mech, answer, cmds)
			}
			for _, c := range cmds {
				if strings.HasPrefix(c, "MAIL") {
					t.Errorf("%s: sent %q", mech, c)
				}
			}
		}
	}
}

// Postfix's smtp-sink offers DSN, not SIZE nor SMTPUTF8: its dump shows
// RET=, ENVID= and NOTIFY= as sent, and no SIZE= nor SMTPUTF8 although
// asked for.
func TestPostfixSinkDSN(t *testing.T) {
	sink := startSink(t, true)
	cfg := Config{Addr: sink.addr, Messages: 2, Recipients: 2, Reuse: true, Pipelining: true,
		From: "src@example.test", To: "rcpt@example.test", DSNNotify: "SUCCESS,DELAY", DSNRet: "FULL", DSNEnvID: "id=1"}
	res, err := Run(context.Background(), cfg)
	if err != nil || res.Delivered != 2 || res.Errors != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	sink.counts(t, 1)
	dump, err := os.ReadFile(sink.dump)
	if err != nil {
		t.Fatal(err)
	}
	d := string(dump)
	for want, n := range map[string]int{
		"X-Mail-Args: <src@example.test> RET=FULL ENVID=id+3D1.0\n": 1, "X-Mail-Args: <src@example.test> RET=FULL ENVID=id+3D1.1\n": 1,
		"X-Rcpt-Args: <2rcpt@example.test> NOTIFY=SUCCESS,DELAY\n": 2, "X-Rcpt-Args: <rcpt@example.test> NOTIFY=SUCCESS,DELAY\n": 2,
	} {
		if strings.Count(d, want) != n {
			t.Errorf("dump: %q %d times, want %d\n%.1500s", want, strings.Count(d, want), n, d)
		}
	}
}

// XCLIENT goes once a connection is set up, followed by EHLO again;
// XFORWARD before each MAIL, pipelined with it or not; neither where the
// server does not offer it. A refused XCLIENT fails the connection's
// messages; a refused XFORWARD is counted and the transaction goes on.
func TestXClientXForward(t *testing.T) {
	const xc, xf = "NAME=c.example ADDR=192.0.2.1", "NAME=f.example ADDR=192.0.2.2"
	xext := []string{"XCLIENT NAME ADDR", "XFORWARD NAME ADDR", "PIPELINING"}
	flow := func(cmds []string) []string {
		var out []string
		for _, c := range cmds {
			verb, _, _ := strings.Cut(c, " ")
			out = append(out, verb)
		}
		return out
	}
	for _, c := range []struct {
		name  string
		ext   []string
		cfg   Config
		reply func(verb, arg string) string
		want  string
	}{
		{"pipelined", xext, Config{XClient: xc, XForward: xf, Messages: 2, Reuse: true, Pipelining: true},
			nil, "EHLO XCLIENT EHLO XFORWARD MAIL RCPT DATA XFORWARD MAIL RCPT DATA QUIT"},
		{"one at a time", xext, Config{XClient: xc, XForward: xf, Messages: 2, Reuse: true},
			nil, "EHLO XCLIENT EHLO XFORWARD MAIL RCPT DATA XFORWARD MAIL RCPT DATA QUIT"},
		{"bdat", append([]string{"CHUNKING"}, xext...), Config{XForward: xf, Messages: 2, Reuse: true, Pipelining: true, Chunking: true},
			nil, "EHLO XFORWARD MAIL RCPT BDAT XFORWARD MAIL RCPT BDAT QUIT"},
		{"bdat one at a time", append([]string{"CHUNKING"}, xext...), Config{XForward: xf, Messages: 2, Reuse: true, Chunking: true},
			nil, "EHLO XFORWARD MAIL RCPT BDAT XFORWARD MAIL RCPT BDAT QUIT"},
		{"xforward only", xext, Config{XForward: xf, Messages: 1},
			nil, "EHLO XFORWARD MAIL RCPT DATA QUIT"},
		{"not offered", []string{"PIPELINING"}, Config{XClient: xc, XForward: xf, Messages: 1},
			nil, "EHLO MAIL RCPT DATA QUIT"},
		{"xforward refused", xext, Config{XForward: xf, Messages: 1, Pipelining: true},
			func(verb, _ string) string {
				if verb == "XFORWARD" {
					return "550 5.7.0 no"
				}
				return ""
			}, "EHLO XFORWARD MAIL RCPT DATA QUIT"},
	} {
		f := &fakeServer{ext: c.ext, reply: c.reply}
		cfg := base(f.start(t))
		c.cfg.Addr, c.cfg.Helo, c.cfg.From, c.cfg.To, c.cfg.Length = cfg.Addr, cfg.Helo, cfg.From, cfg.To, cfg.Length
		c.cfg.NoSize = true
		res := runOK(t, c.cfg)
		if res.Delivered != int64(c.cfg.Messages) {
			t.Errorf("%s: %+v", c.name, res)
		}
		cmds := f.commands()
		if got := strings.Join(flow(cmds), " "); got != c.want {
			t.Errorf("%s: sent %s, want %s", c.name, got, c.want)
		}
		for _, l := range cmds {
			if strings.HasPrefix(l, "XCLIENT") && l != "XCLIENT "+xc || strings.HasPrefix(l, "XFORWARD") && l != "XFORWARD "+xf {
				t.Errorf("%s: %q", c.name, l)
			}
		}
		if c.reply != nil && (res.Replies["xforward"][550] != 1 || res.Rejections != 1) {
			t.Errorf("%s: replies %v, %d rejections", c.name, res.Replies, res.Rejections)
		}
	}

	f := &fakeServer{ext: xext, reply: func(verb, _ string) string {
		if verb == "XCLIENT" {
			return "550 5.7.0 not authorized"
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.XClient, cfg.Messages = xc, 2
	res, err := Run(context.Background(), cfg)
	if err != nil || res.Delivered != 0 || res.Failed != 2 || res.Replies["xclient"][550] != 2 {
		t.Errorf("XCLIENT refused: %+v %v", res, err)
	}
	for _, bad := range []Config{{XClient: "NAME=a\r\nRSET"}, {XForward: "ADDR=1\n"}} {
		bad.Addr = "x"
		if _, err := Run(context.Background(), bad); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", bad, err)
		}
	}
}

// Credentials refused count the same whatever the mechanism: the message
// the connection was for fails with the server's refusal, one rejection,
// and is not abandoned (its fate is known: no MAIL was sent). OAUTHBEARER
// learns of the refusal from an error challenge, which the client cancels
// ("*"); the server's 501 to that is the refusal counted (it used to be
// left out: the message abandoned, errors 0, where XOAUTH2's 535 failed it).
func TestAuthRefusedCounted(t *testing.T) {
	srvTLS, roots := testCerts(t)
	for _, mech := range []string{"PLAIN", "CRAM-MD5", "XOAUTH2", "OAUTHBEARER"} {
		f := &fakeServer{tlsConf: srvTLS, authMechs: []string{"PLAIN", "CRAM-MD5", "XOAUTH2", "OAUTHBEARER"}, authAfterTLS: true,
			users: map[string]string{"user@client.test": "s3cret"}}
		cfg := base(f.start(t))
		cfg.Messages, cfg.Sessions = 2, 1
		cfg.TLS, cfg.TLSConfig = true, &tls.Config{RootCAs: roots}
		cfg.AuthUser, cfg.AuthPass, cfg.AuthMech = "user@client.test", "wrong", mech
		res, err := RunWith(context.Background(), cfg, nil, nil)
		if !errors.Is(err, ErrAuth) || res == nil {
			t.Fatalf("%s: %+v, %v; want ErrAuth with the result", mech, res, err)
		}
		if res.Started != 1 || res.Failed != 1 || res.Abandoned != 0 || res.Rejections != 1 || res.Errors != 1 || res.Delivered != 0 {
			t.Errorf("%s: started %d, failed %d, abandoned %d, rejections %d, errors %d, delivered %d; want 1, 1, 0, 1, 1, 0",
				mech, res.Started, res.Failed, res.Abandoned, res.Rejections, res.Errors, res.Delivered)
		}
	}
}

// A setup that ends the run before any MAIL (AUTH or STARTTLS not
// offered, a certificate that does not verify) fails its message: no
// MAIL went, so its fate is known (it read "abandoned: reply unread, the
// server may have taken it").
func TestSetupEndedFails(t *testing.T) {
	srvTLS, _ := testCerts(t)
	for _, c := range []struct {
		name string
		f    *fakeServer
		set  func(*Config)
		want error
	}{
		{"AUTH not offered", &fakeServer{}, func(cfg *Config) {
			cfg.AuthUser, cfg.AuthPass, cfg.AuthMech = "u", "p", "PLAIN"
		}, ErrAuth},
		{"STARTTLS not offered", &fakeServer{}, func(cfg *Config) {
			cfg.TLS = true
		}, ErrStartTLS},
		{"certificate not verified", &fakeServer{tlsConf: srvTLS}, func(cfg *Config) {
			cfg.TLS, cfg.TLSConfig = true, &tls.Config{} // the system's roots: not the test CA
		}, ErrTLS},
	} {
		cfg := base(c.f.start(t))
		cfg.Messages, cfg.Sessions = 3, 1
		c.set(&cfg)
		res, err := RunWith(context.Background(), cfg, nil, nil)
		if !errors.Is(err, c.want) || res == nil {
			t.Fatalf("%s: %+v, %v; want %v with the result", c.name, res, err, c.want)
		}
		if res.Started != 1 || res.Failed != 1 || res.Abandoned != 0 || res.Delivered != 0 {
			t.Errorf("%s: started %d, failed %d, abandoned %d, delivered %d; want 1, 1, 0, 0",
				c.name, res.Started, res.Failed, res.Abandoned, res.Delivered)
		}
	}
}

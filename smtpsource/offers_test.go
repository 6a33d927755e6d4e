package smtpsource

import (
	"crypto/tls"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// offersOnce answers the first EHLO with first and every later one with
// only a hostname: the server offers less after XCLIENT or STARTTLS.
func offersOnce(first string) func(verb, arg string) string {
	var ehlos atomic.Int32
	return func(verb, _ string) string {
		switch {
		case verb != "EHLO":
			return ""
		case ehlos.Add(1) == 1:
			return first
		}
		return "250 server.test"
	}
}

// Each EHLO reply replaces what the one before offered: after XCLIENT
// (whose reply is a new greeting) and after STARTTLS (RFC 3207 §4.2) the
// client uses only what the new one offers.
func TestOffersForgottenAtEachEHLO(t *testing.T) {
	srvTLS, roots := testCerts(t)
	for _, c := range []struct {
		name  string
		first string
		cfg   Config
	}{
		{"after XCLIENT", "250-server.test\r\n250-XCLIENT NAME ADDR\r\n250-XFORWARD NAME ADDR\r\n250-SIZE 100000\r\n250-DSN\r\n250-CHUNKING\r\n250 PIPELINING",
			Config{XClient: "ADDR=192.0.2.1", XForward: "ADDR=192.0.2.2", Chunking: true, Pipelining: true, DSNRet: "HDRS"}},
		{"after STARTTLS", "250-server.test\r\n250-XCLIENT NAME ADDR\r\n250-XFORWARD NAME ADDR\r\n250-SIZE 100000\r\n250-CHUNKING\r\n250-PIPELINING\r\n250 STARTTLS",
			Config{XClient: "ADDR=192.0.2.1", XForward: "ADDR=192.0.2.2", Chunking: true, Pipelining: true, TLS: true, TLSConfig: &tls.Config{RootCAs: roots}}},
	} {
		f := &fakeServer{tlsConf: srvTLS, reply: offersOnce(c.first)}
		cfg := base(f.start(t))
		c.cfg.Addr, c.cfg.Helo, c.cfg.From, c.cfg.To, c.cfg.Length = cfg.Addr, cfg.Helo, cfg.From, cfg.To, cfg.Length
		c.cfg.Messages, c.cfg.Reuse = 2, true
		res := runOK(t, c.cfg)
		if res.Delivered != 2 || res.Pipelining || res.Chunking {
			t.Errorf("%s: %d delivered, pipelining %v, chunking %v; want 2, neither used", c.name, res.Delivered, res.Pipelining, res.Chunking)
		}
		ehlos := 0
		for _, l := range f.commands() {
			verb, _, _ := strings.Cut(l, " ")
			switch {
			case verb == "EHLO":
				ehlos++
			case verb == "XFORWARD", verb == "BDAT", verb == "XCLIENT" && c.cfg.TLS,
				verb == "MAIL" && (strings.Contains(l, "SIZE=") || strings.Contains(l, "RET=")):
				t.Errorf("%s: sent %q, which the last EHLO reply did not offer", c.name, l)
			}
		}
		if ehlos != 2 {
			t.Errorf("%s: %d EHLOs, want 2", c.name, ehlos)
		}
	}
}

// QUIT is an exchange of its own (Config.Timeout): one that comes more
// than Timeout after the last message began, here after a wait that
// crosses the run's end, still gets its reply.
func TestQuitAfterWait(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 2s")
	}
	f := &fakeServer{}
	cfg := base(f.start(t))
	cfg.Reuse, cfg.Messages = true, 10
	cfg.Timeout, cfg.Wait, cfg.Duration = time.Second, 2*time.Second, 1500*time.Millisecond
	res := runOK(t, cfg)
	if res.Delivered != 1 || res.Errors != 0 || res.FirstError != "" {
		t.Errorf("%d delivered, %d errors (%q); want 1 and none", res.Delivered, res.Errors, res.FirstError)
	}
	if res.Replies["quit"][221] != 1 {
		t.Errorf("replies %v, want one 221 to QUIT", res.Replies)
	}
}

// A reply of the wrong kind (here the RCPT's 250 read as DATA's, after a
// server that answered MAIL twice) leaves client and server out of step:
// the connection is closed at once, not sent RSET, which the server,
// reading a message by then, would take as its text.
func TestOutOfStepCloses(t *testing.T) {
	f := &fakeServer{reply: func(verb, _ string) string {
		if verb == "MAIL" {
			return "250 2.1.0 ok\r\n250 2.1.0 and again"
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Reuse, cfg.Messages = true, 2
	res, err := Run(t.Context(), cfg)
	if err != nil || res.Failed != 2 || res.ProtocolErrors != 2 {
		t.Errorf("%v: %d failed, %d protocol errors; want 2 and 2", err, res.Failed, res.ProtocolErrors)
	}
	// An RSET would have had the 354 for its reply: a second protocol
	// error a message.
	if conns, _ := f.connections(); conns != 2 {
		t.Errorf("%d connections, want one a message", conns)
	}
}

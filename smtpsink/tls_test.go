package smtpsink

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"io"
	"log"
	"net"
	"net/smtp"
	nettextproto "net/textproto"
	"runtime"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// testTLS returns a server's TLS configuration with a certificate made
// for the test, and a client's that trusts it.
func testTLS(t testing.TB) (server, client *tls.Config) {
	t.Helper()
	cert, err := SelfSigned("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	return &tls.Config{Certificates: []tls.Certificate{cert}}, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
}

// startTLSClient sends STARTTLS on c, runs the client's handshake and
// returns the client over TLS.
func (c *client) startTLS(cfg *tls.Config) *client {
	c.t.Helper()
	c.cmd(220, "STARTTLS")
	if n := c.R.Buffered(); n > 0 {
		c.t.Fatalf("%d bytes after the 220", n)
	}
	tc := tls.Client(c.raw, cfg)
	if err := tc.Handshake(); err != nil {
		c.t.Fatal(err)
	}
	return &client{t: c.t, Conn: nettextproto.NewConn(tc), raw: tc}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// STARTTLS (RFC 3207): offered before TLS, not after; the session then
// forgets the EHLO and a transaction, and AUTH (offered over TLS only)
// goes through; the message says it came over TLS, authenticated.
func TestStartTLS(t *testing.T) {
	srv, cli := testTLS(t)
	var got messages
	s := startSink(t, Config{TLS: srv, Auth: true, OnMessage: got.add}, hooks{})
	c := dial(t, s)
	if ehlo := c.cmd(250, "EHLO c"); !strings.Contains(ehlo, "\nSTARTTLS\n") || strings.Contains(ehlo, "AUTH") {
		t.Errorf("EHLO before TLS:\n%s", ehlo)
	}
	c.cmd(538, "AUTH PLAIN "+b64("\x00u\x00p")) // RFC 4954 §6: encryption required
	c.cmd(501, "STARTTLS now")
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(250, "RCPT TO:<c@d>")
	c = c.startTLS(cli)           // 220 inside a transaction, as from Postfix's smtpd
	c.cmd(503, "MAIL FROM:<a@b>") // EHLO again first
	ehlo := c.cmd(250, "EHLO c")
	c.cmd(503, "RCPT TO:<c@d>") // the transaction is gone
	if strings.Contains(ehlo, "STARTTLS") || !strings.Contains(ehlo, "\nAUTH PLAIN LOGIN\n") {
		t.Errorf("EHLO over TLS:\n%s", ehlo)
	}
	c.cmd(554, "STARTTLS") // as from Postfix's smtpd
	c.cmd(235, "AUTH PLAIN "+b64("\x00user\x00pass"))
	c.cmd(503, "AUTH PLAIN "+b64("\x00user\x00pass"))
	c.deliver(1, "c@d")
	c.cmd(221, "QUIT")
	if ms := got.all(); len(ms) != 1 || !ms[0].TLS || !ms[0].Authenticated || ms[0].AuthUser != "user" {
		t.Errorf("messages %+v", ms)
	}
	if st := s.Stats(); st.TLS != 1 || st.Messages != 1 {
		t.Errorf("stats %+v", st)
	}
}

// What the client sends after STARTTLS in the same write, in the clear,
// is thrown away unread (CVE-2011-0411): "STARTTLS\r\nRSET\r\n" arrives in
// one read (net.Pipe hands a write to one read), and the first reply over
// TLS is HELP's, not RSET's.
func TestStartTLSInjection(t *testing.T) {
	srv, cli := testTLS(t)
	for _, injected := range []string{"RSET\r\n", "RSET\r\nMAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\n", "RSET"} {
		conn, br, wl := pipeSession(t, Config{TLS: srv}, hooks{})
		conn.Write([]byte("EHLO c\r\n"))
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if l[3] == ' ' {
				break
			}
		}
		conn.Write([]byte("STARTTLS\r\n" + injected))
		if l, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(l, "220 ") || br.Buffered() > 0 {
			t.Fatalf("STARTTLS: %q %v, %d bytes more", l, err, br.Buffered())
		}
		tc := tls.Client(conn, cli)
		if err := tc.Handshake(); err != nil {
			t.Fatal(err)
		}
		tc.Write([]byte("HELP\r\nQUIT\r\n"))
		out, _ := io.ReadAll(tc)
		if !strings.HasPrefix(string(out), "214 ") || strings.Count(string(out), "\r\n") != 2 {
			t.Errorf("%q injected: replies over TLS %q", injected, out)
		}
		for _, w := range wl.log() {
			if strings.Contains(w, "250 2.0.0 Ok") || strings.Contains(w, "2.1.0") {
				t.Errorf("%q injected: a reply to it: %q", injected, w)
			}
		}
	}
}

// AUTH PLAIN and LOGIN, with and without initial responses, against
// AuthUsers: wrong credentials get 535, "*" cancels with 501, bad base64
// gets 501, an unknown mechanism 504, AUTH in a transaction 503; a
// session that authenticated in the clear (AuthPlaintext) forgets it at
// STARTTLS.
func TestAuth(t *testing.T) {
	srv, cli := testTLS(t)
	var got messages
	s := startSink(t, Config{TLS: srv, Auth: true, AuthPlaintext: true, AuthUsers: map[string]string{"alice": "s3cret:x"}, OnMessage: got.add}, hooks{})
	c := dial(t, s)
	c.cmd(503, "AUTH PLAIN "+b64("\x00alice\x00s3cret:x")) // EHLO first
	if ehlo := c.cmd(250, "EHLO c"); !strings.Contains(ehlo, "AUTH PLAIN LOGIN") {
		t.Errorf("EHLO with AuthPlaintext:\n%s", ehlo)
	}
	for _, step := range []struct {
		code int
		line string
	}{
		{535, "AUTH PLAIN " + b64("\x00alice\x00wrong")},
		{535, "AUTH PLAIN " + b64("\x00bob\x00s3cret:x")},
		{535, "AUTH PLAIN " + b64("mallory\x00alice\x00s3cret:x")}, // another identity
		{535, "AUTH PLAIN " + b64("no nuls")},
		{535, "AUTH PLAIN ="},
		{501, "AUTH PLAIN %%%"},
		{504, "AUTH CRAM-MD5"},
		{501, "AUTH"},
		{501, "AUTH PLAIN a b"},
		{334, "AUTH PLAIN"},
		{501, "*"}, // cancelled
		{334, "AUTH LOGIN"},
		{334, b64("alice")},
		{535, b64("wrong")},
		{334, "AUTH LOGIN"},
		{501, "not base64!"},
		{334, "AUTH LOGIN " + b64("alice")},
		{501, "*"},
		{250, "NOOP"},
		{250, "MAIL FROM:<a@b>"},
		{503, "AUTH PLAIN " + b64("\x00alice\x00s3cret:x")}, // in a transaction
		{250, "RSET"},
		{334, "AUTH LOGIN"},
		{334, b64("alice")},
		{235, b64("s3cret:x")},
	} {
		msg := c.cmd(step.code, step.line)
		if step.line == "AUTH LOGIN" && msg != b64("Username:") {
			t.Errorf("LOGIN's first challenge %q", msg)
		}
	}
	c.deliver(1, "c@d")
	c = c.startTLS(cli)
	c.cmd(250, "EHLO c")
	c.deliver(1, "c@d") // no longer authenticated
	c.cmd(334, "AUTH PLAIN")
	c.cmd(235, b64("alice\x00alice\x00s3cret:x"))
	c.cmd(221, "QUIT")
	ms := got.all()
	if len(ms) != 2 || !ms[0].Authenticated || ms[0].AuthUser != "alice" || ms[0].TLS || ms[1].Authenticated || !ms[1].TLS {
		t.Errorf("messages %+v", ms)
	}
	if st := s.Stats(); st.Errors[535] != 6 || st.Errors[501] != 6 || st.Errors[504] != 1 {
		t.Errorf("stats %+v", st)
	}
}

// Any credentials do without AuthUsers; without AuthPlaintext AUTH is
// neither offered nor served before TLS; a response line too long
// (past 12288 bytes, RFC 4954 §4, not MaxCommandBytes) fails the exchange
// (500); MAIL takes the AUTH parameter.
func TestAuthAnyCredentials(t *testing.T) {
	srv, cli := testTLS(t)
	s := startSink(t, Config{TLS: srv, Auth: true}, hooks{})
	c := dial(t, s)
	c.cmd(250, "EHLO c")
	c.cmd(538, "AUTH LOGIN")
	c = c.startTLS(cli)
	c.cmd(250, "EHLO c")
	c.cmd(334, "AUTH LOGIN")
	c.cmd(500, strings.Repeat("A", 12289)) // too long: the exchange fails
	c.cmd(334, "AUTH LOGIN")
	c.cmd(334, strings.Repeat("A", 12288)) // the user name; the password is asked for
	c.cmd(501, "*")
	c.cmd(500, "NOOP "+strings.Repeat("A", 3000)) // a command line is bounded by MaxCommandBytes
	c.cmd(235, "AUTH PLAIN "+b64("\x00anyone\x00anything"))
	c.cmd(250, "MAIL FROM:<a@b> AUTH=<>") // RFC 4954 §5
	c.cmd(250, "RSET")
	c.cmd(221, "QUIT")
}

// TLSRequired: before STARTTLS, MAIL and AUTH get 530 and a BDAT's chunk
// is read and refused; NOOP, EHLO and RSET are served; over TLS all is.
func TestTLSRequired(t *testing.T) {
	srv, cli := testTLS(t)
	s := startSink(t, Config{TLS: srv, TLSRequired: true, Auth: true}, hooks{})
	c := dial(t, s)
	c.cmd(250, "EHLO c")
	c.cmd(530, "MAIL FROM:<a@b>")
	c.cmd(530, "AUTH PLAIN")
	c.send("BDAT 6\r\nQUIT\r\nNOOP\r\nRSET\r\n")
	if got := c.codes(3); got != "530 250 250" {
		t.Fatalf("got %s", got)
	}
	c = c.startTLS(cli)
	c.cmd(250, "EHLO c")
	c.deliver(1, "c@d")
	c.cmd(221, "QUIT")
	if st := s.Stats(); st.Messages != 1 || st.Errors[530] != 3 {
		t.Errorf("stats %+v", st)
	}
}

// TLSImplicit (SMTPS, RFC 8314): TLS from the first byte, no STARTTLS
// offered; a client that speaks plain SMTP fails the handshake, and its
// session ends.
func TestTLSImplicit(t *testing.T) {
	srv, cli := testTLS(t)
	var got messages
	s := startSink(t, Config{TLS: srv, TLSImplicit: true, Auth: true, OnMessage: got.add}, hooks{})
	tc, err := tls.Dial("tcp", s.Addr().String(), cli)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, Conn: nettextproto.NewConn(tc), raw: tc}
	c.expect(220)
	if ehlo := c.cmd(250, "EHLO c"); strings.Contains(ehlo, "STARTTLS") || !strings.Contains(ehlo, "AUTH") {
		t.Errorf("EHLO:\n%s", ehlo)
	}
	c.cmd(554, "STARTTLS") // TLS is active, as from Postfix's smtpd in wrapper mode
	c.deliver(1, "c@d")
	c.cmd(221, "QUIT")
	plain, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	plain.Write([]byte("EHLO c\r\n"))
	if line, err := bufio.NewReader(plain).ReadString('\n'); err == nil && strings.HasPrefix(line, "2") {
		t.Errorf("a plain client got %q", line)
	}
	if ms := got.all(); len(ms) != 1 || !ms[0].TLS {
		t.Errorf("messages %+v", ms)
	}
}

// The standard library's SMTP client, which nobody here wrote: STARTTLS,
// verifying the sink's certificate, and AUTH PLAIN.
func TestNetSMTPClientTLS(t *testing.T) {
	srv, cli := testTLS(t)
	var got messages
	s := startSink(t, Config{TLS: srv, Auth: true, AuthUsers: map[string]string{"u": "p"}, OnMessage: got.add}, hooks{})
	dial := func() *smtp.Client {
		c, err := smtp.Dial(s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := c.StartTLS(cli); err != nil {
			t.Fatal(err)
		}
		return c
	}
	// net/smtp quits after a failed AUTH.
	if err := dial().Auth(smtp.PlainAuth("", "u", "wrong", "127.0.0.1")); err == nil || !strings.Contains(err.Error(), "535") {
		t.Errorf("wrong password: %v", err)
	}
	c := dial()
	if err := c.Auth(smtp.PlainAuth("", "u", "p", "127.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if err := c.Mail("a@b"); err != nil {
		t.Fatal(err)
	}
	if err := c.Rcpt("c@d"); err != nil {
		t.Fatal(err)
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "Subject: tls\r\n\r\nhello\r\n")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Quit(); err != nil {
		t.Fatal(err)
	}
	if ms := got.all(); len(ms) != 1 || !ms[0].TLS || ms[0].AuthUser != "u" || ms[0].Size != 23 {
		t.Errorf("messages %+v", ms)
	}
}

// A server that closes while a session is in its TLS handshake (after
// STARTTLS's 220, or under implicit TLS) says nothing to it, on either
// engine: the client reads TLS records there, and a 421 in the clear
// would be a bad one.
func TestCloseInHandshake(t *testing.T) {
	for _, implicit := range []bool{false, true} {
		for _, engine := range []Engine{EngineGoroutine, testEngine()} {
			srvTLS, _ := testTLS(t)
			s := startSink(t, Config{TLS: srvTLS, TLSImplicit: implicit, Engine: engine}, hooks{})
			var c *client
			if implicit {
				raw, err := net.Dial("tcp", s.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer raw.Close()
				c = &client{t: t, Conn: nettextproto.NewConn(raw), raw: raw}
				for s.Stats().Active == 0 {
					runtime.Gosched() // until the session has begun
				}
			} else {
				c = dial(t, s)
				c.cmd(250, "EHLO c")
				c.cmd(220, "STARTTLS")
			}
			s.Close()
			if b, _ := io.ReadAll(c.R); len(b) > 0 {
				t.Errorf("implicit %v, engine %q: after the server closed mid-handshake: %q", implicit, engine, b)
			}
		}
	}
}

// A handshake that a Config.TLS callback fails (GetCertificate's error
// here, a broken certificate set-up) is logged to ErrorLog with the
// callback's error, after STARTTLS and with implicit TLS, on both
// engines: it went unsaid, and the client only saw the connection end.
func TestTLSHandshakeErrorLogged(t *testing.T) {
	for _, e := range bothEngines {
		for _, implicit := range []bool{false, true} {
			name := string(e) + "/starttls"
			if implicit {
				name = string(e) + "/implicit"
			}
			t.Run(name, func(t *testing.T) {
				_, cli := testTLS(t)
				srv := &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
					return nil, errors.New("no-certificate-here")
				}}
				var logged tooltest.Buffer
				ends := make(chan SessionInfo, 1)
				s := startSink(t, Config{Engine: e, TLS: srv, TLSImplicit: implicit, ErrorLog: log.New(&logged, "", 0),
					OnSessionEnd: func(i SessionInfo) { ends <- i }}, hooks{})
				raw, err := net.Dial("tcp", s.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer raw.Close()
				if !implicit {
					c := &client{t: t, Conn: nettextproto.NewConn(raw), raw: raw}
					c.expect(220)
					c.cmd(250, "EHLO client")
					c.cmd(220, "STARTTLS")
				}
				if err := tls.Client(raw, cli).Handshake(); err == nil {
					t.Fatal("the handshake whose GetCertificate failed succeeded")
				}
				<-ends
				got := logged.String()
				if !strings.Contains(got, "smtpsink: session 1: TLS handshake") || !strings.Contains(got, "no-certificate-here") {
					t.Errorf("ErrorLog %q, want the handshake's error", got)
				}
				if strings.Count(got, "\n") != 1 {
					t.Errorf("ErrorLog %q, want one line", got)
				}
			})
		}
	}
}

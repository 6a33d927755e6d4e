package smtpsource

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testCerts makes a CA and a server certificate it signs for 127.0.0.1 and
// mx.test, valid for the next hour: the server's configuration and the
// pool a client verifies it with.
func testCerts(t testing.TB) (*tls.Config, *x509.CertPool) {
	t.Helper()
	now := time.Now()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey, leafKey := key(), key()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "smtpsource test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "mx.test"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		DNSNames: []string{"mx.test"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}}, pool
}

// STARTTLS on kept and on new connections: EHLO, STARTTLS, the handshake,
// EHLO again (the extensions learnt anew: PIPELINING is used), and every
// message goes over TLS, verified against the test's CA; the Result says
// what the handshakes agreed on.
func TestStartTLS(t *testing.T) {
	srvTLS, roots := testCerts(t)
	for _, reuse := range []bool{true, false} {
		f := &fakeServer{ext: []string{"PIPELINING"}, tlsConf: srvTLS}
		cfg := base(f.start(t))
		cfg.Messages, cfg.Reuse, cfg.Pipelining, cfg.Body, cfg.Digests = 4, reuse, true, "mail", true
		cfg.TLS, cfg.TLSConfig = true, &tls.Config{RootCAs: roots}
		res := runOK(t, cfg)
		conns := int64(4)
		if reuse {
			conns = 1
		}
		if _, n := f.connections(); res.Delivered != 4 || res.Errors != 0 || !res.Pipelining || res.Connections != conns || res.TLSMode != "starttls" || n != 4 {
			t.Fatalf("reuse %v: %+v; %d messages over TLS", reuse, res, n)
		}
		if st := res.TLS; st == nil || st.Handshakes != conns || st.Versions["TLS 1.3"] != conns || len(st.CipherSuites) != 1 {
			t.Errorf("reuse %v: TLS %+v", reuse, res.TLS)
		}
		if res.Phases.TLS == nil || res.Phases.TLS.Count != conns || res.Phases.EHLO.Count != 2*conns || res.Replies["starttls"][220] != conns {
			t.Errorf("reuse %v: phases tls %+v ehlo %+v, replies %v", reuse, res.Phases.TLS, res.Phases.EHLO, res.Replies)
		}
		if cmds := f.commands(); len(cmds) < 4 || strings.Join(cmds[:4], "|") != "EHLO client.test|STARTTLS|EHLO client.test|MAIL FROM:<from@client.test>" {
			t.Errorf("reuse %v: commands %q", reuse, cmds)
		}
		if v, err := Verify(strings.NewReader(sentLog(f.accepted())), res.Digests); err != nil || !v.OK() || v.Matched != 4 {
			t.Errorf("reuse %v: verify %+v %v", reuse, v, err)
		}
	}
}

// Implicit TLS (RFC 8314): the handshake comes first, then the greeting.
func TestTLSImplicit(t *testing.T) {
	srvTLS, roots := testCerts(t)
	f := &fakeServer{ext: []string{"PIPELINING", "CHUNKING"}, tlsConf: srvTLS, implicit: true}
	cfg := base(f.start(t))
	cfg.Messages, cfg.Reuse, cfg.Pipelining, cfg.Chunking, cfg.ChunkSize, cfg.Digests = 3, true, true, true, 100, true
	cfg.TLSImplicit, cfg.TLSConfig = true, &tls.Config{RootCAs: roots}
	res := runOK(t, cfg)
	if _, n := f.connections(); res.Delivered != 3 || res.Errors != 0 || !res.Chunking || res.TLSMode != "implicit" || res.TLS == nil || res.TLS.Handshakes != 1 || n != 3 {
		t.Fatalf("%+v; %d messages over TLS", res, n)
	}
	if res.Replies["starttls"] != nil || res.Phases.TLS == nil || res.Phases.TLS.Count != 1 || res.Phases.EHLO.Count != 1 {
		t.Errorf("replies %v, tls %+v", res.Replies, res.Phases.TLS)
	}
	if v, err := Verify(strings.NewReader(sentLog(f.accepted())), res.Digests); err != nil || !v.OK() || v.Matched != 3 {
		t.Errorf("verify %+v %v", v, err)
	}
}

// The run ends at once with ErrStartTLS when the server does not offer
// STARTTLS or refuses it for good, and with ErrTLS when its certificate
// does not verify or it does not speak TLS; with -tls-insecure's
// InsecureSkipVerify an unverified certificate is taken. A temporary
// refusal (454) fails the message and the next tries again.
func TestTLSFailures(t *testing.T) {
	srvTLS, roots := testCerts(t)
	run := func(f *fakeServer, tc *tls.Config, implicit bool) (*Result, error) {
		cfg := base(f.start(t))
		cfg.Messages, cfg.Sessions, cfg.TLSConfig = 5, 2, tc
		cfg.TLS, cfg.TLSImplicit = !implicit, implicit
		return RunWith(context.Background(), cfg, nil, nil)
	}
	for _, c := range []struct {
		name     string
		f        *fakeServer
		tc       *tls.Config
		implicit bool
		want     error
		conns    int // at most
	}{
		{"not offered", &fakeServer{}, &tls.Config{RootCAs: roots}, false, ErrStartTLS, 2},
		{"refused", &fakeServer{tlsConf: srvTLS, reply: func(verb, arg string) string {
			if verb == "STARTTLS" {
				return "554 5.7.3 no TLS for you"
			}
			return ""
		}}, &tls.Config{RootCAs: roots}, false, ErrStartTLS, 2},
		{"unknown CA", &fakeServer{tlsConf: srvTLS}, &tls.Config{RootCAs: x509.NewCertPool()}, false, ErrTLS, 2},
		{"wrong name", &fakeServer{tlsConf: srvTLS}, &tls.Config{RootCAs: roots, ServerName: "other.test"}, false, ErrTLS, 2},
		{"implicit to plaintext", &fakeServer{}, &tls.Config{RootCAs: roots}, true, ErrTLS, 2},
	} {
		res, err := run(c.f, c.tc, c.implicit)
		t.Log(c.name, ": ", err)
		if !errors.Is(err, c.want) || res == nil || res.Delivered != 0 {
			t.Errorf("%s: %+v, %v; want %v with the result, nothing delivered", c.name, res, err, c.want)
		}
		if n, _ := c.f.connections(); n > c.conns {
			t.Errorf("%s: %d connections after the first failed", c.name, n)
		}
	}
	res, err := run(&fakeServer{tlsConf: srvTLS}, &tls.Config{InsecureSkipVerify: true}, false)
	if err != nil || res.Delivered != 5 || res.Errors != 0 {
		t.Errorf("insecure: %+v, %v", res, err)
	}
	var n atomic.Int64
	f := &fakeServer{tlsConf: srvTLS, reply: func(verb, arg string) string {
		if verb == "STARTTLS" && n.Add(1) == 2 {
			return "454 4.7.0 TLS not available now"
		}
		return ""
	}}
	res, err = run(f, &tls.Config{RootCAs: roots}, false)
	if err != nil || res.Delivered != 4 || res.Failed != 1 || res.Rejections != 1 || res.Replies["starttls"][454] != 1 {
		t.Errorf("454: %+v, %v", res, err)
	}
	accounted(t, res)
}

// A server that says 220 to STARTTLS and never makes the handshake: the
// wait is bounded by Timeout and counted as an I/O error, which does not
// end the run; each message tries a new connection.
func TestStartTLSHandshakeTimeout(t *testing.T) {
	srvTLS, roots := testCerts(t)
	f := &fakeServer{tlsConf: srvTLS, tlsHang: true}
	h := holdDeadlines(f)
	cfg := base(f.start(t))
	cfg.Messages, cfg.Timeout, cfg.TLS, cfg.TLSConfig = 2, 50*time.Millisecond, true, &tls.Config{RootCAs: roots}
	res := h.run(t, cfg)
	if res.Failed != 2 || res.IOErrors != 2 || res.Connections != 2 || !strings.HasPrefix(res.FirstError, "tls: ") || !strings.Contains(res.FirstError, "timeout") {
		t.Errorf("%+v", res)
	}
}

// A server that sends more than its 220 before the handshake (a reply
// injected in plaintext) is a protocol error: what came with the 220 is
// never read as the server's, and no message goes out on that connection.
func TestStartTLSInjection(t *testing.T) {
	srvTLS, roots := testCerts(t)
	f := &fakeServer{tlsConf: srvTLS, reply: func(verb, arg string) string {
		if verb == "STARTTLS" {
			return "220 2.0.0 go ahead\r\n250 injected"
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Messages, cfg.TLS, cfg.TLSConfig = 2, true, &tls.Config{RootCAs: roots}
	res := runOK(t, cfg)
	if res.Delivered != 0 || res.Failed != 2 || res.ProtocolErrors != 2 || !strings.Contains(res.FirstError, "before the TLS handshake") || res.TLS != nil {
		t.Errorf("%+v", res)
	}
	for _, c := range f.commands() {
		if strings.HasPrefix(c, "MAIL") {
			t.Errorf("sent %q", c)
		}
	}
}

// TLS session resumption: with a ClientSessionCache (-tls-resume), every
// connection after the first resumes the session of an earlier one;
// without, none does.
func TestTLSResume(t *testing.T) {
	srvTLS, roots := testCerts(t)
	for _, cache := range []bool{true, false} {
		f := &fakeServer{tlsConf: srvTLS}
		cfg := base(f.start(t))
		tc := &tls.Config{RootCAs: roots}
		if cache {
			tc.ClientSessionCache = tls.NewLRUClientSessionCache(0)
		}
		cfg.Messages, cfg.TLS, cfg.TLSConfig = 5, true, tc
		res := runOK(t, cfg)
		want := int64(0)
		if cache {
			want = 4
		}
		if res.Delivered != 5 || res.TLS == nil || res.TLS.Handshakes != 5 || res.TLS.Resumed != want {
			t.Errorf("cache %v: %+v, TLS %+v", cache, res, res.TLS)
		}
	}
}

// AUTH PLAIN (initial response on the AUTH line) and LOGIN (the user as
// initial response, then the password prompt), after STARTTLS: every
// connection authenticates, and the messages go out.
func TestAuth(t *testing.T) {
	srvTLS, roots := testCerts(t)
	for _, mech := range []string{"PLAIN", "LOGIN", "login"} {
		f := &fakeServer{ext: []string{"PIPELINING"}, tlsConf: srvTLS, authMechs: []string{"PLAIN", "LOGIN"}, authAfterTLS: true,
			users: map[string]string{"user@client.test": "s3cret pass"}}
		cfg := base(f.start(t))
		cfg.Messages, cfg.Sessions, cfg.Pipelining = 6, 2, true
		cfg.TLS, cfg.TLSConfig = true, &tls.Config{RootCAs: roots}
		cfg.AuthUser, cfg.AuthPass, cfg.AuthMech = "user@client.test", "s3cret pass", mech
		res := runOK(t, cfg)
		if res.Delivered != 6 || res.Errors != 0 || res.Replies["auth"][235] != 6 || res.AuthMech != strings.ToUpper(mech) {
			t.Fatalf("%s: %+v", mech, res)
		}
		if res.Phases.Auth == nil || res.Phases.Auth.Count != 6 {
			t.Errorf("%s: auth phase %+v", mech, res.Phases.Auth)
		}
		sameCodes(t, mech, res, f)
		if strings.ToUpper(mech) == "LOGIN" && res.Replies["auth"][334] != 6 {
			t.Errorf("%s: replies %v", mech, res.Replies)
		}
	}
}

// LOGIN answers the prompts servers write: "Username:" even after the
// initial response (go-sasl's client failed on it), "password:" in lower
// case.
func TestAuthLoginPrompts(t *testing.T) {
	for _, f := range []*fakeServer{{loginAskUser: true}, {loginPrompt: "password:"}} {
		f.authMechs, f.users = []string{"LOGIN"}, map[string]string{"u": "pw"}
		cfg := base(f.start(t))
		cfg.Messages, cfg.AuthUser, cfg.AuthPass, cfg.AuthMech = 2, "u", "pw", "LOGIN"
		if res := runOK(t, cfg); res.Delivered != 2 || res.Errors != 0 {
			t.Errorf("ask user %v, prompt %q: %+v", f.loginAskUser, f.loginPrompt, res)
		}
	}
}

// The run ends at once with ErrAuth when the credentials are refused
// (535), the mechanism is not offered, AUTH is not offered at all (here:
// before TLS), or LOGIN's prompt is neither a user name's nor a
// password's, in which case the exchange is cancelled with "*" first.
func TestAuthFailures(t *testing.T) {
	srvTLS, roots := testCerts(t)
	for _, c := range []struct {
		name       string
		f          *fakeServer
		tls        bool
		mech, pass string
		sent       string // the client's line that must have reached the server
	}{
		{"wrong password", &fakeServer{authMechs: []string{"PLAIN"}}, false, "PLAIN", "wrong", ""},
		{"mechanism not offered", &fakeServer{authMechs: []string{"PLAIN"}}, false, "LOGIN", "pw", ""},
		{"not before TLS", &fakeServer{tlsConf: srvTLS, authMechs: []string{"PLAIN"}, authAfterTLS: true}, false, "PLAIN", "pw", ""},
		{"odd prompt", &fakeServer{authMechs: []string{"LOGIN"}, loginPrompt: "Passphrase:"}, false, "LOGIN", "pw", "*"},
	} {
		c.f.users = map[string]string{"u": "pw"}
		cfg := base(c.f.start(t))
		cfg.Messages, cfg.Sessions, cfg.AuthUser, cfg.AuthPass, cfg.AuthMech = 4, 2, "u", c.pass, c.mech
		if c.tls {
			cfg.TLS, cfg.TLSConfig = true, &tls.Config{RootCAs: roots}
		}
		res, err := RunWith(context.Background(), cfg, nil, nil)
		t.Log(c.name, ": ", err)
		if !errors.Is(err, ErrAuth) || res == nil || res.Delivered != 0 {
			t.Errorf("%s: %+v, %v; want ErrAuth with the result, nothing delivered", c.name, res, err)
		}
		cmds := c.f.commands()
		for _, cmd := range cmds {
			if strings.HasPrefix(cmd, "MAIL") {
				t.Errorf("%s: sent %q", c.name, cmd)
			}
		}
		if c.sent != "" && !strings.Contains(strings.Join(cmds, "\n")+"\n", "\n"+c.sent+"\n") {
			t.Errorf("%s: commands %q, no %q", c.name, cmds, c.sent)
		}
		if n, _ := c.f.connections(); n > 2 {
			t.Errorf("%s: %d connections", c.name, n)
		}
	}
}

// The tls and auth phases on the test's clock: STARTTLS's reply takes
// 3ms (the handshake none of the test's time), each AUTH reply 2ms: PLAIN
// takes one exchange, LOGIN two. Both phases reach the interval log.
func TestTLSAuthPhases(t *testing.T) {
	ms := time.Millisecond
	srvTLS, roots := testCerts(t)
	for _, c := range []struct {
		mech string
		auth time.Duration
	}{{"PLAIN", 2 * ms}, {"LOGIN", 4 * ms}} {
		clk := newFakeClock()
		f := &fakeServer{clk: clk, tlsConf: srvTLS, authMechs: []string{"PLAIN", "LOGIN"}, users: map[string]string{"u": "p"},
			delay: map[string]time.Duration{"STARTTLS": 3 * ms, "AUTH": 2 * ms, "EHLO": ms}}
		cfg := base(f.start(t))
		var hlog bytes.Buffer
		cfg.Messages, cfg.TLS, cfg.TLSConfig, cfg.AuthUser, cfg.AuthPass, cfg.AuthMech, cfg.HdrLog = 2, true, &tls.Config{RootCAs: roots}, "u", "p", c.mech, &hlog
		res, err := RunWith(context.Background(), cfg, nil, clk)
		if err != nil || res.Delivered != 2 || res.Errors != 0 {
			t.Fatalf("%s: %+v, %v", c.mech, res, err)
		}
		checkLatency(t, c.mech+": tls", res.Phases.TLS, 3*ms, 3*ms)
		checkLatency(t, c.mech+": auth", res.Phases.Auth, c.auth, c.auth)
		checkLatency(t, c.mech+": ehlo", res.Phases.EHLO, ms, ms, ms, ms)
		if byTag := logCounts(t, &hlog); byTag["tls"] != 2 || byTag["auth"] != 2 {
			t.Errorf("%s: interval log %v", c.mech, byTag)
		}
	}
}

func TestTLSConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Addr: "x", TLS: true, TLSImplicit: true},
		{Addr: "x", TLS: true, OldMode: true},
		{Addr: "x", AuthUser: "u", OldMode: true},
		{Addr: "x", AuthPass: "p"},
		{Addr: "x", AuthUser: "u", AuthMech: "DIGEST-MD5"},
		{Addr: "x", AuthUser: "u\x00v"},
		{Addr: "unix:/s", TLS: true},
	} {
		if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", cfg, err)
		}
		// Check says what Run would (TLS over unix: with no name to
		// verify passed Check: Run refused it).
		if err := cfg.Check(); !errors.Is(err, ErrConfig) {
			t.Errorf("Check %+v: %v, want ErrConfig", cfg, err)
		}
	}
	if _, a := Network("mx.test", 0, (&Config{TLSImplicit: true}).defaultPort()); a != "mx.test:465" {
		t.Errorf("implicit TLS dials %s", a)
	}
}

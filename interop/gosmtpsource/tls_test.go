package gosmtpsource

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/smtpsourcecmd"
	"github.com/wirespeed/wirespeed/smtpsource"
)

// testCA makes a CA and a certificate it signs for 127.0.0.1, valid for
// the next hour: the server's TLS configuration, the pool that verifies
// it, and the CA in PEM.
func testCA(t *testing.T) (*tls.Config, *x509.CertPool, []byte) {
	t.Helper()
	srvTLS, pool, caPEM, err := makeCA(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return srvTLS, pool, caPEM
}

// makeCA is testCA for a lifetime of valid.
func makeCA(valid time.Duration) (*tls.Config, *x509.CertPool, []byte, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "interop test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(valid), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "gosmtp.test"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(valid), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, pool,
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}

// authSession is a session that authenticates with PLAIN (go-sasl's
// server) or LOGIN (loginServer) as user with password pass, and notes
// a message that comes without TLS or without authentication as an
// error.
type authSession struct {
	*session
	c      *smtp.Conn
	authed bool
}

const (
	user = "load@source.test"
	pass = "correct horse battery staple"
)

func (s *authSession) AuthMechanisms() []string { return []string{sasl.Plain, sasl.Login} }

func (s *authSession) Auth(mech string) (sasl.Server, error) {
	check := func(u, p string) error {
		if u != user || p != pass {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "authentication credentials invalid"}
		}
		s.authed = true
		return nil
	}
	if mech == sasl.Login {
		return &loginServer{check: check}, nil
	}
	return sasl.NewPlainServer(func(identity, u, p string) error { return check(u, p) }), nil
}

func (s *authSession) Mail(from string, opts *smtp.MailOptions) error {
	if _, ok := s.c.TLSConnectionState(); !ok || !s.authed {
		s.r.add(func() { s.r.errs = append(s.r.errs, "MAIL without TLS or AUTH") })
	}
	return s.session.Mail(from, opts)
}

// loginServer is the server side of LOGIN: "Username:" unless the user
// came as the initial response, then "Password:".
type loginServer struct {
	check func(user, pass string) error
	user  []byte
	step  int
}

func (l *loginServer) Next(resp []byte) ([]byte, bool, error) {
	l.step++
	switch {
	case l.step == 1 && resp == nil:
		return []byte("Username:"), false, nil
	case l.user == nil:
		l.user = resp
		return []byte("Password:"), false, nil
	}
	return nil, true, l.check(string(l.user), string(resp))
}

// startGoSMTPTLS runs go-smtp with STARTTLS and AUTH (after TLS only, as
// go-smtp has it by default).
func startGoSMTPTLS(t *testing.T, srvTLS *tls.Config) (string, *received) {
	return startGoSMTPWith(t, func(rec *received, srv *smtp.Server) {
		srv.TLSConfig = srvTLS
		srv.Backend = smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
			return &authSession{session: &session{r: rec}, c: c}, nil
		})
	})
}

// checkReceived checks that go-smtp took n messages, none without TLS and
// AUTH, with the digests the source says it sent.
func checkReceived(t *testing.T, name string, rec *received, res *smtpsource.Result, n int64) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.errs) > 0 {
		t.Errorf("%s: go-smtp: %q", name, rec.errs)
	}
	if int64(rec.n) != n {
		t.Errorf("%s: go-smtp took %d messages, want %d", name, rec.n, n)
	}
	if res.Digests == nil {
		return
	}
	if v, err := smtpsource.Verify(strings.NewReader(rec.log.String()), res.Digests); err != nil || !v.OK() || v.Matched != n {
		t.Errorf("%s: verify %+v, %v", name, v, err)
	}
}

// wirespeed's source with STARTTLS and AUTH (PLAIN and LOGIN) against
// go-smtp's server: every message goes over TLS after AUTH, go-smtp sees
// no error, and the bodies it read match the source's digests; pipelined
// or not, with BDAT, on kept connections or not (then resuming TLS
// sessions).
func TestSourceTLSAuthAgainstGoSMTP(t *testing.T) {
	srvTLS, roots, _ := testCA(t)
	for _, c := range []struct {
		name string
		cfg  smtpsource.Config
	}{
		{"plain-pipelining", smtpsource.Config{Sessions: 3, Messages: 60, Length: 4096, Reuse: true, Pipelining: true, Body: "mail", AuthMech: "PLAIN"}},
		{"login", smtpsource.Config{Sessions: 2, Messages: 20, Length: 2000, Reuse: true, AuthMech: "LOGIN"}},
		{"chunking", smtpsource.Config{Sessions: 2, Messages: 20, Length: 10000, Reuse: true, Chunking: true, ChunkSize: 4096, Pipelining: true, Body: "base64"}},
		{"1MiB", smtpsource.Config{Sessions: 2, Messages: 4, Length: 1 << 20, Reuse: true, Pipelining: true, Body: "base64"}},
		{"no-reuse-resume", smtpsource.Config{Sessions: 2, Messages: 10, Length: 1000, AuthMech: "LOGIN"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, rec := startGoSMTPTLS(t, srvTLS)
			cfg := c.cfg
			tc := &tls.Config{RootCAs: roots}
			if !cfg.Reuse {
				tc.ClientSessionCache = tls.NewLRUClientSessionCache(0)
			}
			cfg.Addr, cfg.Helo, cfg.Digests, cfg.TLS, cfg.TLSConfig, cfg.AuthUser, cfg.AuthPass = addr, "source.test", true, true, tc, user, pass
			res, err := smtpsource.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			n := int64(cfg.Messages)
			conns := int64(cfg.Sessions)
			if !cfg.Reuse {
				conns = n
			}
			if res.Delivered != n || res.Errors != 0 || res.Connections != conns || res.Replies["auth"][235] != conns || res.Replies["starttls"][220] != conns {
				t.Fatalf("%+v", res)
			}
			if st := res.TLS; st == nil || st.Handshakes != conns || st.Versions["TLS 1.3"] != conns || !cfg.Reuse && st.Resumed == 0 {
				t.Errorf("TLS %+v", res.TLS)
			}
			if res.Phases.TLS == nil || res.Phases.TLS.Count != conns || res.Phases.Auth == nil || res.Phases.Auth.Count != conns {
				t.Errorf("phases tls %+v auth %+v", res.Phases.TLS, res.Phases.Auth)
			}
			checkReceived(t, c.name, rec, res, n)
		})
	}
}

// `wirespeed smtp-source -tls -tls-ca FILE -auth USER:PASS` against
// go-smtp: the flags reach the run, -verify checks the digests go-smtp's
// sessions logged, and the JSON says what TLS agreed on.
func TestCommandTLSAuthAgainstGoSMTP(t *testing.T) {
	srvTLS, _, caPEM := testCA(t)
	dir := t.TempDir()
	caFile, logFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "digests")
	if err := os.WriteFile(caFile, caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for _, mech := range []string{"PLAIN", "LOGIN"} {
		addr, rec := startGoSMTPTLS(t, srvTLS)
		rec.file = log
		var out, errb bytes.Buffer
		args := []string{"-tls", "-tls-ca", caFile, "-auth", user + ":" + pass, "-auth-mech", mech, "-tls-resume",
			"-s", "2", "-m", "20", "-l", "3000", "-d", "-pipelining", "-body", "mail", "-json", "-q", "-verify", logFile, addr}
		if err := smtpsourcecmd.Run(context.Background(), args, &out, &errb); err != nil {
			t.Fatalf("%s: %v\n%s\n%s", mech, err, out.String(), errb.String())
		}
		var res struct {
			smtpsource.Result
			Verify smtpsource.Verification `json:"verify"`
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("%s: %v: %s", mech, err, out.String())
		}
		if res.Delivered != 20 || res.Errors != 0 || res.TLSMode != "starttls" || res.AuthMech != mech || res.TLS == nil || res.TLS.Handshakes != 2 ||
			res.Phases.TLS == nil || res.Phases.Auth == nil || res.Verify.Matched != 20 || !res.Verify.OK() {
			t.Errorf("%s: %s", mech, out.String())
		}
		log.Truncate(0) // the next run's messages only
		log.Seek(0, 0)
		checkReceived(t, mech, rec, &res.Result, 20)
	}
}

// -tls against a go-smtp server without TLS, which does not offer
// STARTTLS: the run ends at once with an error that says so (and the
// result so far: nothing delivered), the command exits with status 1,
// and no message is sent. Wrong credentials end the run with ErrAuth on
// go-smtp's 535.
func TestTLSAuthFailuresAgainstGoSMTP(t *testing.T) {
	addr, rec := startGoSMTP(t, false, false)
	res, err := smtpsource.Run(context.Background(), smtpsource.Config{Addr: addr, TLS: true, Messages: 5, Sessions: 2})
	if !errors.Is(err, smtpsource.ErrStartTLS) || res == nil || res.Delivered != 0 || res.Interrupted || !strings.Contains(err.Error(), "does not offer it") {
		t.Errorf("no STARTTLS: %+v, %v", res, err)
	}
	var out, errb bytes.Buffer
	err = smtpsourcecmd.Run(context.Background(), []string{"-tls", "-tls-insecure", "-q", "-m", "5", addr}, &out, &errb)
	if status, print := cli.Status(err); status != 1 || !print || !errors.Is(err, smtpsource.ErrStartTLS) {
		t.Errorf("the command: %v (status %d)", err, status)
	}
	rec.mu.Lock()
	if rec.mails != 0 {
		t.Errorf("go-smtp got %d MAIL commands", rec.mails)
	}
	rec.mu.Unlock()

	srvTLS, roots, _ := testCA(t)
	addr, _ = startGoSMTPTLS(t, srvTLS)
	for _, mech := range []string{"PLAIN", "LOGIN"} {
		res, err = smtpsource.Run(context.Background(), smtpsource.Config{Addr: addr, TLS: true, TLSConfig: &tls.Config{RootCAs: roots},
			AuthUser: user, AuthPass: "wrong", AuthMech: mech, Messages: 5, Sessions: 2})
		if !errors.Is(err, smtpsource.ErrAuth) || res == nil || res.Delivered != 0 || !strings.Contains(err.Error(), "535") {
			t.Errorf("%s, wrong password: %+v, %v", mech, res, err)
		}
	}
	// AUTH before STARTTLS: go-smtp does not offer it.
	res, err = smtpsource.Run(context.Background(), smtpsource.Config{Addr: addr, AuthUser: user, AuthPass: pass, Messages: 1})
	if !errors.Is(err, smtpsource.ErrAuth) || res == nil || res.Delivered != 0 {
		t.Errorf("AUTH without TLS: %+v, %v", res, err)
	}
}

package smtpsink

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	nettextproto "net/textproto"
	"testing"

	"github.com/wirespeed/wirespeed/internal/selfsigned"
)

// clientCert makes a client certificate that is its own CA.
func clientCert(t *testing.T, cn string) tls.Certificate {
	t.Helper()
	c, err := selfsigned.Client(cn)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A sink that asks for client certificates (Config.TLS's ClientAuth and
// ClientCAs) serves a client with a certificate it trusts, and says so
// in Message.ClientCert; one without a certificate too, unless
// certificates are required; one with a certificate it does not trust
// fails its handshake. Implicit TLS and STARTTLS, on the engine tested.
func TestClientCertificates(t *testing.T) {
	good, stranger := clientCert(t, "client.test"), clientCert(t, "stranger.test")
	pool := x509.NewCertPool()
	pool.AddCert(good.Leaf)
	for _, implicit := range []bool{true, false} {
		for _, auth := range []tls.ClientAuthType{tls.VerifyClientCertIfGiven, tls.RequireAndVerifyClientCert} {
			srv, cli := testTLS(t)
			srv.ClientAuth, srv.ClientCAs = auth, pool
			var got messages
			s := startSink(t, Config{TLS: srv, TLSImplicit: implicit, OnMessage: got.add}, hooks{})
			try := func(cert *tls.Certificate) error {
				cfg := cli.Clone()
				if cert != nil {
					// Given whatever CAs the server names.
					cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
				}
				nc, err := net.Dial("tcp", s.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer nc.Close()
				c := &client{t: t, Conn: nettextproto.NewConn(nc), raw: nc}
				if !implicit {
					c.expect(220)
					c.cmd(250, "EHLO c")
					c.cmd(220, "STARTTLS")
				}
				tc := tls.Client(nc, cfg)
				// A TLS 1.3 client learns that its certificate was
				// refused at its first read.
				c = &client{t: t, Conn: nettextproto.NewConn(tc), raw: tc}
				if implicit {
					if _, _, err := c.ReadResponse(220); err != nil {
						return err
					}
				}
				if err := c.PrintfLine("EHLO c"); err != nil {
					return err
				}
				if _, _, err := c.ReadResponse(250); err != nil {
					return err
				}
				c.deliver(1, "a@b")
				c.cmd(221, "QUIT")
				return nil
			}
			if err := try(&good); err != nil {
				t.Errorf("implicit %v, %v: trusted certificate: %v", implicit, auth, err)
			}
			err := try(nil)
			if required := auth == tls.RequireAndVerifyClientCert; (err != nil) != required {
				t.Errorf("implicit %v, %v: no certificate: %v", implicit, auth, err)
			}
			if err := try(&stranger); err == nil {
				t.Errorf("implicit %v, %v: an untrusted certificate was taken", implicit, auth)
			}
			s.Close()
			ms := got.all()
			if len(ms) == 0 || ms[0].ClientCert != "CN=client.test" || len(ms) == 2 && ms[1].ClientCert != "" {
				t.Errorf("implicit %v, %v: messages %+v", implicit, auth, ms)
			}
		}
	}
}

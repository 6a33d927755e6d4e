package smtpsourcecmd

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
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/smtpsink"
)

// pki makes a CA, a server certificate for 127.0.0.1 and a client
// certificate, both signed by it, and writes the CA, the client's
// certificate and key as PEM files in dir.
func pki(t *testing.T, dir string) (server tls.Certificate, pool *x509.CertPool) {
	t.Helper()
	now := time.Now()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	caKey := newKey()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	write("ca.pem", "CERTIFICATE", caDER)
	leaf := func(serial int64, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		k := newKey()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "leaf"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, k
	}
	srvDER, srvKey := leaf(2, x509.ExtKeyUsageServerAuth)
	cliDER, cliKey := leaf(3, x509.ExtKeyUsageClientAuth)
	write("client.pem", "CERTIFICATE", cliDER)
	keyDER, err := x509.MarshalPKCS8PrivateKey(cliKey)
	if err != nil {
		t.Fatal(err)
	}
	write("client.key", "PRIVATE KEY", keyDER)
	pool = x509.NewCertPool()
	pool.AddCert(caCert)
	return tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}, pool
}

// -tls-cert and -tls-key present a client certificate: package smtpsink,
// set to require one that its CA signed, takes the messages; without it,
// none; the flags are checked.
func TestClientCertificate(t *testing.T) {
	dir := t.TempDir()
	srvCert, pool := pki(t, dir)
	var taken atomic.Int64
	srv, err := smtpsink.Listen(context.Background(), smtpsink.Config{Addr: "127.0.0.1:0",
		TLS:       &tls.Config{Certificates: []tls.Certificate{srvCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool},
		OnMessage: func(m smtpsink.Message) { taken.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Close() })
	addr := srv.Addr().String()
	p := func(name string) string { return filepath.Join(dir, name) }
	run := func(args ...string) (map[string]any, error) {
		var out, errb bytes.Buffer
		err := Run(context.Background(), append(args, "-json", "-q", "-tls", "-tls-ca", p("ca.pem"), addr), &out, &errb)
		var res map[string]any
		json.Unmarshal(out.Bytes(), &res)
		return res, err
	}
	res, err := run("-m", "3", "-s", "2", "-tls-cert", p("client.pem"), "-tls-key", p("client.key"))
	if err != nil || res["delivered"] != 3.0 || taken.Load() != 3 {
		t.Errorf("with the certificate: %v, %v; the sink took %d", res, err, taken.Load())
	}
	res, err = run("-m", "2")
	if st, _ := cli.Status(err); st != 1 || taken.Load() != 3 || res != nil && res["delivered"] != 0.0 {
		t.Errorf("without a certificate: %v, %v; the sink took %d", res, err, taken.Load())
	}
	var out, errb bytes.Buffer
	for _, args := range [][]string{
		{"-tls", "-tls-cert", p("client.pem"), addr},
		{"-tls-cert", p("client.pem"), "-tls-key", p("client.key"), addr},
	} {
		if st, print := cli.Status(Run(context.Background(), args, &out, &errb)); st != 2 || !print {
			t.Errorf("%q: status %d, want a usage error", args, st)
		}
	}
	err = Run(context.Background(), []string{"-tls", "-tls-cert", p("ca.pem"), "-tls-key", p("client.key"), addr}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "-tls-cert") {
		t.Errorf("a key that is not the certificate's: %v", err)
	}
}

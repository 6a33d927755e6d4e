package smtpsinkcmd

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// -tls-client-ca with -tls-client-required: a client with a certificate
// the file names is served, one without fails its handshake.
func TestRunClientCA(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "client.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, stop := run(t, "-tls-implicit", "-tls-client-ca", ca, "-tls-client-required", "-json")
	dialTLS := func(certs []tls.Certificate) error {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, Certificates: certs})
		if err != nil {
			return err
		}
		defer c.Close()
		r := bufio.NewReader(c)
		line, err := r.ReadString('\n') // TLS 1.3: a refused certificate shows at the first read
		if err == nil && !strings.HasPrefix(line, "220 ") {
			err = fmt.Errorf("greeting %q", line)
		}
		return err
	}
	if err := dialTLS([]tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}); err != nil {
		t.Errorf("with the certificate: %v", err)
	}
	if err := dialTLS(nil); err == nil {
		t.Error("without a certificate: served")
	}
	out, err := stop()
	if err != nil || !strings.Contains(out, `"tls":1,`) {
		t.Errorf("%v: %s", err, out)
	}
}

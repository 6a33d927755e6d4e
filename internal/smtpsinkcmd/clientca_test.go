package smtpsinkcmd

import (
	"bufio"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/selfsigned"
)

// -tls-client-ca with -tls-client-required: a client with a certificate
// the file names is served, one without fails its handshake.
func TestRunClientCA(t *testing.T) {
	cert, err := selfsigned.Client("client.test")
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o644); err != nil {
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
	if err := dialTLS([]tls.Certificate{cert}); err != nil {
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

package serve

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/selfsigned"
)

// TestServeTLS: `serve -tls` on the std and netio engines, with the
// self-signed certificate made at start (which names 127.0.0.1) and with
// -tls-cert and -tls-key; the other engines refuse -tls.
func TestServeTLS(t *testing.T) {
	cert, err := selfsigned.Server("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600)
	for _, engine := range []string{"std", "netio"} {
		for _, files := range []bool{false, true} {
			name := engine + "/self-signed"
			args := []string{"-engine", engine, "-mode", "line", "-addr", "127.0.0.1:0", "-tls"}
			if files {
				name = engine + "/files"
				args = []string{"-engine", engine, "-mode", "line", "-addr", "127.0.0.1:0", "-tls-cert", certFile, "-tls-key", keyFile}
			}
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				pr, pw := io.Pipe()
				done := make(chan error, 1)
				go func() { done <- Run(ctx, args, pw, io.Discard) }()
				br := bufio.NewReader(pr)
				line, err := br.ReadString('\n')
				if err != nil || !strings.HasPrefix(line, "listening on ") {
					t.Fatalf("first line %q, %v", line, err)
				}
				go io.Copy(io.Discard, br) // what it prints when it stops
				var got *x509.Certificate
				c, err := tls.Dial("tcp", strings.TrimSpace(strings.TrimPrefix(line, "listening on ")), &tls.Config{
					InsecureSkipVerify: true, // checked below: the certificate names 127.0.0.1
					VerifyConnection: func(cs tls.ConnectionState) error {
						got = cs.PeerCertificates[0]
						return nil
					}})
				if err != nil {
					t.Fatal(err)
				}
				if err := got.VerifyHostname("127.0.0.1"); err != nil {
					t.Errorf("the certificate: %v", err)
				}
				if files && !got.Equal(cert.Leaf) {
					t.Error("not the certificate of -tls-cert")
				}
				c.Write([]byte("one\ntwo\n"))
				r := bufio.NewReader(c)
				for _, want := range []string{"one\n", "two\n"} {
					if line, err := r.ReadString('\n'); line != want {
						t.Fatalf("echo %q, %v; want %q", line, err, want)
					}
				}
				c.Close()
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			})
		}
	}
	for _, args := range [][]string{
		{"-engine", "netio-conn", "-tls"},
		{"-engine", "gnet", "-tls", "-compare-exe", "/nonexistent"},
		{"-engine", "std", "-tls-cert", certFile}, // without its key
	} {
		if err := Run(context.Background(), append(args, "-addr", "127.0.0.1:0"), io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "-tls") {
			t.Errorf("%v: %v, want an error about -tls", args, err)
		}
	}
	// Files that hold no certificate: the error names their flags (it
	// said "-tls: tls: failed to find any PEM data", of a flag not given).
	err = Run(context.Background(), []string{"-tls-cert", keyFile, "-tls-key", keyFile, "-addr", "127.0.0.1:0"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-tls-cert "+keyFile+", -tls-key "+keyFile+": ") {
		t.Errorf("a key for a certificate: %v, want an error naming -tls-cert and -tls-key", err)
	}
}

package gosmtpsource

import (
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// TestMain serves instead of testing when GOSMTPSOURCE_SERVE is set to
// host:port: go-smtp's server, offering STARTTLS with a certificate made
// at start (its CA written to the file GOSMTPSOURCE_CA names, if set), its
// sessions reading each message to the end and throwing it away, until
// killed. It is the peer for measuring what TLS costs wirespeed's source
// (go test -c, then GOSMTPSOURCE_SERVE=127.0.0.1:2600 ./gosmtpsource.test).
func TestMain(m *testing.M) {
	addr := os.Getenv("GOSMTPSOURCE_SERVE")
	if addr == "" {
		os.Exit(m.Run())
	}
	if err := serve(addr, os.Getenv("GOSMTPSOURCE_CA")); err != nil {
		fmt.Fprintln(os.Stderr, "gosmtpsource serve:", err)
		os.Exit(1)
	}
}

func serve(addr, caFile string) error {
	srvTLS, _, caPEM, err := makeCA(30 * 24 * time.Hour)
	if err != nil {
		return err
	}
	if caFile != "" {
		if err := os.WriteFile(caFile, caPEM, 0o644); err != nil {
			return err
		}
	}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return discard{}, nil }))
	srv.Domain = "gosmtp.test"
	srv.TLSConfig = srvTLS
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "go-smtp with STARTTLS on", ln.Addr())
	return srv.Serve(ln)
}

// discard is a session that takes every message and keeps nothing.
type discard struct{}

func (discard) Reset()                               {}
func (discard) Logout() error                        { return nil }
func (discard) Mail(string, *smtp.MailOptions) error { return nil }
func (discard) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (discard) Data(r io.Reader) error               { _, err := io.Copy(io.Discard, r); return err }

package serve

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/selfsigned"
)

// tlsConfig is the TLS configuration of -tls: the certificate chain and
// key in certFile and keyFile (PEM), or with neither, a self-signed
// certificate made now for localhost, 127.0.0.1, ::1 and the host of
// addr. Run has checked that the two files come together.
func tlsConfig(addr, certFile, keyFile string) (*tls.Config, error) {
	var cert tls.Certificate
	var err error
	switch {
	case certFile != "":
		if cert, err = cli.LoadKeyPair(certFile, keyFile); err != nil {
			// The files' flags, not -tls, which was not given.
			return nil, fmt.Errorf("-tls-cert %s, -tls-key %s: %w", certFile, keyFile, err)
		}
	default:
		hosts := []string{"localhost", "127.0.0.1", "::1"}
		if h, _, serr := net.SplitHostPort(addr); serr == nil && h != "" && h != "localhost" && h != "127.0.0.1" && h != "::1" {
			hosts = append(hosts, h)
		}
		cert, err = selfsigned.Server(hosts...)
	}
	if err != nil {
		return nil, fmt.Errorf("-tls: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}}, nil
}

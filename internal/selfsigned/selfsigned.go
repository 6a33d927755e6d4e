// Package selfsigned makes self-signed certificates with new ECDSA P-256
// keys: for servers that make one at start (smtp-sink -tls, serve -tls)
// and for tests of TLS, on both sides.
package selfsigned

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"time"
)

// New makes a certificate for usage (server or client authentication)
// with the common name cn, naming hosts (DNS names or IP addresses; empty
// ones are skipped), valid from an hour ago for valid, and signed by
// itself: it is its own CA (a peer trusts its Leaf).
func New(usage x509.ExtKeyUsage, valid time.Duration, cn string, hosts ...string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(valid),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{usage},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// Server makes a server's certificate for hosts ("localhost" and
// 127.0.0.1 if none), valid for a day.
func Server(hosts ...string) (tls.Certificate, error) {
	if len(hosts) == 0 {
		hosts = []string{"localhost", "127.0.0.1"}
	}
	return New(x509.ExtKeyUsageServerAuth, 24*time.Hour, hosts[0], hosts...)
}

// Client makes a certificate for client authentication with the common
// name cn, valid for an hour (add its Leaf to a pool of ClientCAs).
func Client(cn string) (tls.Certificate, error) {
	return New(x509.ExtKeyUsageClientAuth, time.Hour, cn)
}

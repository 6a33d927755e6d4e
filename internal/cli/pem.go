package cli

import (
	"crypto/tls"
	"fmt"
	"io"
	"os"
)

// MaxPEM bounds what ReadPEM reads. A certificate chain, a key or a
// bundle of CA certificates is far smaller (a system's whole bundle is
// about 200 KiB); a flag naming /dev/zero or a pipe that never ends is
// refused past it, not read until memory runs out.
const MaxPEM = 16 << 20

// ReadPEM reads the PEM file at path, which a TLS flag names: a regular
// file, or a pipe or device (a secret handed over as /dev/fd/N, say), of
// at most MaxPEM bytes.
func ReadPEM(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxPEM+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxPEM {
		return nil, fmt.Errorf("read %s: more than %d MiB: not a certificate or key file", path, MaxPEM>>20)
	}
	return b, nil
}

// LoadKeyPair is tls.LoadX509KeyPair with each file read by ReadPEM.
func LoadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	cert, err := ReadPEM(certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := ReadPEM(keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(cert, key)
}

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
	return ReadFileMax(path, MaxPEM, "a certificate or key file")
}

// MaxList bounds the lists ReadFileMax reads for a command (addresses):
// a flag naming /dev/zero is refused past it.
const MaxList = 256 << 20

// MaxLog bounds a latency log ReadFileMax reads: -hdr-log writes a
// histogram a second, a few hundred MiB for a run of days.
const MaxLog = 1 << 30

// ReadFileMax reads the file at path whole, as os.ReadFile, but refuses
// one of more than max bytes, having read max+1: the error says it is
// not what (a certificate or key file, say).
func ReadFileMax(path string, max int64, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("read %s: more than %d MiB: not %s", path, max>>20, what)
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

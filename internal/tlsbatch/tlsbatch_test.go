package tlsbatch_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/tlsbatch"
)

// Through a Writer, 1 MiB reaches the peer whole, in writes of at most
// Size bytes that hold several records each (a tls.Conn alone makes one
// write a record); the handshake is not held; a write that fails is the
// Writer's error.
func TestWriter(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srvConf := &tls.Config{Certificates: []tls.Certificate{cert(t)}}
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(tls.Server(c, srvConf))
		got <- b
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	cc := &countConn{Conn: raw}
	b := &tlsbatch.Conn{Conn: cc}
	tc := tls.Client(b, &tls.Config{InsecureSkipVerify: true})
	tc.SetDeadline(time.Now().Add(time.Minute))
	if err := tc.Handshake(); err != nil { // would hang if the handshake's flight were held
		t.Fatal(err)
	}
	sent := make([]byte, 1<<20)
	for i := range sent {
		sent[i] = byte(i * 7)
	}
	cc.reset()
	w := b.Writer(tc)
	if n, err := w.Write(sent); n != len(sent) || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
	sizes := cc.reset()
	const records = (1 << 20) / (16 << 10) // at the least
	if len(sizes) > records/2 {
		t.Errorf("1 MiB in %d writes (%d records at the least): %v", len(sizes), records, sizes)
	}
	for _, n := range sizes {
		if n > tlsbatch.Size {
			t.Errorf("a write of %d bytes, more than Size", n)
		}
	}
	tc.CloseWrite()
	if b := <-got; !bytes.Equal(b, sent) {
		t.Errorf("the peer read %d bytes, not the %d sent", len(b), len(sent))
	}
	cc.fail(errors.New("broken"))
	if n, err := w.Write([]byte("more")); n != 0 || err == nil {
		t.Errorf("write on a broken connection: %d, %v", n, err)
	}
}

type countConn struct {
	net.Conn
	mu    sync.Mutex
	sizes []int
	err   error
}

func (c *countConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.sizes = append(c.sizes, len(p))
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

func (c *countConn) reset() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sizes
	c.sizes = nil
	return s
}

func (c *countConn) fail(err error) {
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
}

// cert makes a self-signed certificate for 127.0.0.1.
func cert(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

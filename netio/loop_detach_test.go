//go:build unix

package netio

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// testCert makes a self-signed certificate for 127.0.0.1.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "netio test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// TestLoopsDetachTLS: a line protocol on the loops whose STARTTLS hands
// the connection to a goroutine, which runs crypto/tls on it; the reply
// written before Detach arrives first, and the loop lets go (OnClose
// learns ErrDetached, later Writes fail).
func TestLoopsDetachTLS(t *testing.T) {
	cert, pool := testCert(t)
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	closed := make(chan error, 1)
	afterDetach := make(chan error, 1)
	served := make(chan error, 1)
	h := func(c *LoopConn, in []byte) int {
		k := bytes.IndexByte(in, '\n') + 1
		if k == 0 {
			return 0
		}
		if string(in[:k]) != "STARTTLS\n" {
			c.Write(in[:k])
			return k
		}
		c.WriteString("220 go ahead\n")
		nc, err := c.Detach()
		if err != nil {
			t.Error(err)
			c.Close()
			return len(in)
		}
		_, err = c.WriteString("late\n")
		afterDetach <- err
		go func() {
			tc := tls.Server(nc, cfg)
			defer tc.Close()
			r := bufio.NewReader(tc)
			line, err := r.ReadString('\n')
			if err != nil {
				served <- err
				return
			}
			_, err = tc.Write([]byte(strings.ToUpper(line)))
			served <- err
		}()
		return k
	}
	s := startLoops(t, h, &LoopOptions{OnClose: func(c *LoopConn, err error) { closed <- err }})
	c := dial(t, s)
	r := bufio.NewReader(c)
	roundTrip(t, r, c)
	c.Write([]byte("STARTTLS\n"))
	if line, err := r.ReadString('\n'); line != "220 go ahead\n" {
		t.Fatalf("got %q, %v", line, err)
	}
	if err := <-afterDetach; !errors.Is(err, ErrDetached) {
		t.Errorf("Write after Detach: %v, want ErrDetached", err)
	}
	if err := <-closed; !errors.Is(err, ErrDetached) {
		t.Errorf("OnClose learned %v, want ErrDetached", err)
	}
	tc := tls.Client(c, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err := tc.Handshake(); err != nil {
		t.Fatalf("TLS handshake on the detached connection: %v", err)
	}
	tc.Write([]byte("secret\n"))
	line, err := bufio.NewReader(tc).ReadString('\n')
	if line != "SECRET\n" {
		t.Fatalf("over TLS: %q, %v", line, err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if v := tc.ConnectionState().Version; v < tls.VersionTLS12 {
		t.Errorf("TLS version %x", v)
	}
}

// TestLoopsDetachUnused: what the Handler leaves unused, and what was
// queued for output, go with the detached connection, in order; Detach
// from a function run by Do carries the unused input of earlier calls.
func TestLoopsDetachUnused(t *testing.T) {
	conns := make(chan net.Conn, 1)
	later := make(chan *LoopConn, 1)
	h := func(c *LoopConn, in []byte) int {
		switch {
		case bytes.HasPrefix(in, []byte("NOW\n")):
			c.WriteString("queued\n")
			nc, err := c.Detach()
			if err != nil {
				t.Error(err)
			}
			conns <- nc
			return 4
		case bytes.HasPrefix(in, []byte("LATER\n")):
			later <- c
			return 6 // the rest waits for the Do
		}
		return 0
	}
	s := startLoops(t, h, nil)
	for _, mode := range []string{"NOW", "LATER"} {
		c := dial(t, s)
		c.Write([]byte(mode + "\nthe rest, read by the goroutine"))
		if mode == "LATER" {
			lc := <-later
			lc.Do(func(c *LoopConn) {
				c.WriteString("queued\n")
				nc, err := c.Detach()
				if err != nil {
					t.Error(err)
				}
				conns <- nc
			})
		}
		nc := <-conns
		got := make([]byte, len("the rest, read by the goroutine"))
		if _, err := io.ReadFull(nc, got); err != nil || string(got) != "the rest, read by the goroutine" {
			t.Fatalf("%s: the detached connection read %q, %v", mode, got, err)
		}
		nc.Write([]byte("from the goroutine\n"))
		nc.Close()
		all, err := io.ReadAll(c)
		if err != nil || string(all) != "queued\nfrom the goroutine\n" {
			t.Fatalf("%s: the client read %q, %v", mode, all, err)
		}
	}
}

// TestLoopsDetachClose: a detached connection closed at once, with no
// Read or Write, still sends what the loop had queued, then ends.
func TestLoopsDetachClose(t *testing.T) {
	closed := make(chan error, 1)
	h := func(c *LoopConn, in []byte) int {
		c.WriteString("queued\n")
		nc, err := c.Detach()
		if err != nil {
			t.Error(err)
			return len(in)
		}
		go func() { closed <- nc.Close() }()
		return len(in)
	}
	s := startLoops(t, h, nil)
	c := dial(t, s)
	c.Write([]byte("go\n"))
	all, err := io.ReadAll(c)
	if err != nil || string(all) != "queued\n" {
		t.Fatalf("the client read %q, %v; want the queued line", all, err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// TestLoopsDetachServerClose: the server closes just as an idle
// connection, its read under way, is detached from a Do (Close races with
// the loop letting go). The detached connection is the caller's all the
// same: what the loop had queued arrives first, what the peer sends
// reaches its Read, with no deadline of the loop's left on it, and what
// it writes reaches the peer.
func TestLoopsDetachServerClose(t *testing.T) {
	for i := range 20 {
		conns := make(chan *LoopConn, 1)
		h := func(c *LoopConn, in []byte) int {
			c.WriteString("queued\n")
			conns <- c
			return len(in)
		}
		s := startLoops(t, h, nil)
		c := dial(t, s)
		c.Write([]byte("go\n"))
		lc := <-conns
		r := bufio.NewReader(c)
		if line, err := r.ReadString('\n'); line != "queued\n" {
			t.Fatalf("round %d: the client read %q, %v", i, line, err)
		}
		got := make(chan net.Conn, 1)
		closed := make(chan error, 1)
		err := lc.Do(func(c *LoopConn) {
			nc, err := c.Detach()
			if err != nil {
				t.Error(err)
			}
			got <- nc
			// The loop lets go of the connection after this call, with
			// the server closing.
			go func() { closed <- s.Close() }()
			for !s.isClosed() {
				runtime.Gosched()
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		nc := <-got
		if nc == nil {
			t.FailNow()
		}
		if err := <-closed; err != nil {
			t.Fatalf("round %d: Close: %v", i, err)
		}
		c.Write([]byte("ping\n"))
		// (No deadline of the test's own: one the loop left must show.)
		watchdog := time.AfterFunc(10*time.Second, func() { nc.Close() })
		line, err := bufio.NewReader(nc).ReadString('\n')
		watchdog.Stop()
		if line != "ping\n" {
			t.Fatalf("round %d: the detached connection read %q, %v; want ping", i, line, err)
		}
		if _, err := nc.Write([]byte("pong\n")); err != nil {
			t.Fatalf("round %d: the detached connection's Write: %v", i, err)
		}
		nc.Close()
		all, err := io.ReadAll(r)
		if err != nil || string(all) != "pong\n" {
			t.Fatalf("round %d: the client read %q, %v; want pong", i, all, err)
		}
	}
}

// A deadline set on a detached connection while the loop still has a read
// under way (here, set in the Do that detaches, and from another
// goroutine just after) holds: the portable loops stopped their read with
// a deadline of their own and then cleared the connection's, so the
// user's was lost and a Read waited for ever; or the user's replaced the
// loop's and the loop's read, and with it the Read of what it had read,
// waited for the user's deadline.
func TestLoopsDetachDeadline(t *testing.T) {
	for _, fromDo := range []bool{true, false} {
		conns := make(chan net.Conn, 1)
		h := func(c *LoopConn, in []byte) int {
			go c.Do(func(c *LoopConn) { // later: a read is under way
				nc, err := c.Detach()
				if err != nil {
					t.Error(err)
					return
				}
				if fromDo {
					nc.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
				}
				conns <- nc
			})
			return 0
		}
		s := startLoops(t, h, nil)
		c := dial(t, s)
		c.Write([]byte("req"))
		nc := <-conns
		if !fromDo {
			nc.SetReadDeadline(time.Now().Add(time.Hour))
			nc.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		}
		res := make(chan error, 1)
		go func() {
			b := make([]byte, 3)
			if _, err := io.ReadFull(nc, b); err != nil || string(b) != "req" {
				res <- fmt.Errorf("the input the loop had read: %q, %v", b, err)
				return
			}
			_, err := nc.Read(b) // the peer sends nothing more
			res <- err
		}()
		select {
		case err := <-res:
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("deadline set from Do %v: %v, want os.ErrDeadlineExceeded", fromDo, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("deadline set from Do %v: the detached Read still waits after a minute", fromDo)
		}
		nc.Close()
		c.Close()
	}
}

// TestLoopsDetachedRefusals: once Detach has given the connection away,
// every method that refuses it says so with ErrDetached, in the call that
// detached it and from another goroutine afterwards. Do and Close said
// ErrClosed, and SetDeadline too.
func TestLoopsDetachedRefusals(t *testing.T) {
	type refusal struct {
		what string
		err  error
	}
	calls := func(c *LoopConn, on bool) []refusal {
		r := []refusal{{"Do", c.Do(func(*LoopConn) {})}}
		_, err := c.Write([]byte("x"))
		r = append(r, refusal{"Write", err})
		_, err = c.WriteString("x")
		r = append(r, refusal{"WriteString", err})
		r = append(r, refusal{"Close", c.Close()})
		r = append(r, refusal{"SetDeadline", c.SetDeadline(time.Time{})})
		if on { // the rest refuse a call off the loop first
			_, err = c.AfterFunc(time.Hour, func(*LoopConn) {})
			r = append(r, refusal{"AfterFunc", err})
			r = append(r, refusal{"SetReading", c.SetReading(false)})
			r = append(r, refusal{"NotifyWritable", c.NotifyWritable()})
			r = append(r, refusal{"Control", c.Control(func(uintptr) {})})
			_, err = c.Detach()
			r = append(r, refusal{"Detach", err})
		}
		return r
	}
	onLoop := make(chan []refusal, 1)
	conns := make(chan *LoopConn, 1)
	detached := make(chan net.Conn, 1)
	closed := make(chan error, 1)
	h := func(c *LoopConn, in []byte) int {
		nc, err := c.Detach()
		if err != nil {
			t.Error(err)
			c.Close()
			return len(in)
		}
		detached <- nc
		onLoop <- calls(c, true)
		conns <- c
		return len(in)
	}
	s := startLoops(t, h, &LoopOptions{OnClose: func(c *LoopConn, err error) { closed <- err }})
	c := dial(t, s)
	c.Write([]byte("go\n"))
	nc := <-detached
	defer nc.Close()
	if err := <-closed; !errors.Is(err, ErrDetached) {
		t.Fatalf("OnClose learned %v, want ErrDetached", err)
	}
	check := func(where string, rs []refusal) {
		t.Helper()
		for _, r := range rs {
			if r.err != ErrDetached {
				t.Errorf("%s: %s after Detach: %v, want ErrDetached", where, r.what, r.err)
			}
		}
	}
	check("on the loop", <-onLoop)
	check("off the loop", calls(<-conns, false))
}

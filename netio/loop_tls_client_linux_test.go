package netio

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/selfsigned"
)

// A tlsClient is a Loops that dials and speaks TLS as the client: OnOpen
// starts TLS, OnHandshake writes the first message (in two writes: one
// record), and the Handler collects the replies until the last one, then
// closes. What the loops learned comes on its channels.
type tlsClient struct {
	s          *Loops
	handshakes chan error
	states     chan tls.ConnectionState
	got        chan []byte
	closed     chan error
}

func newTLSClient(t *testing.T, cfg *tls.Config, first, last string) *tlsClient {
	t.Helper()
	k := &tlsClient{handshakes: make(chan error, 1), states: make(chan tls.ConnectionState, 1),
		got: make(chan []byte, 1), closed: make(chan error, 1)}
	var buf []byte
	h := func(c *LoopConn, in []byte) int {
		buf = append(buf, in...)
		if bytes.HasSuffix(buf, []byte(last)) {
			k.got <- buf
			c.Close()
		}
		return len(in)
	}
	s, err := NewLoops(h, &LoopOptions{Loops: 1,
		OnOpen: func(c *LoopConn) {
			if err := c.StartTLS(cfg); err != nil {
				t.Errorf("StartTLS in OnOpen: %v", err)
			}
		},
		OnHandshake: func(c *LoopConn, err error) {
			k.handshakes <- err
			if err != nil {
				return
			}
			st, ok := c.ConnectionState()
			if !ok {
				t.Error("ConnectionState not ok after the handshake")
			}
			k.states <- st
			c.WriteString(first[:2])
			c.WriteString(first[2:])
		},
		OnClose: func(c *LoopConn, err error) { k.closed <- err },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	k.s = s
	return k
}

// goTLSEcho serves one connection with crypto/tls's server, echoing; the
// records it read come on the channel at the end.
func goTLSEcho(t *testing.T, cfg *tls.Config) (addr string, read <-chan []byte, hsErr <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	done := make(chan []byte, 1)
	errs := make(chan error, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			errs <- err
			return
		}
		defer nc.Close()
		tap := &tapConn{Conn: nc}
		tc := tls.Server(tap, cfg)
		err = tc.Handshake()
		errs <- err
		if err != nil {
			return
		}
		io.Copy(tc, tc)
		done <- tap.taken()
	}()
	return ln.Addr().String(), done, errs
}

// TestLoopsDialTLS: a dialed connection whose OnOpen calls StartTLS runs
// a TLS client, against crypto/tls's server and netio's own: the
// ServerName comes from Dial's address where the config has none,
// OnHandshake and ConnectionState tell of it, the messages are sealed
// and opened, and Close sends close_notify.
func TestLoopsDialTLS(t *testing.T) {
	big := strings.Repeat("y", 40000) + "\n"
	first := "hello\n" + big + "bye\n"
	for _, v := range tlsVersions {
		t.Run(v.name, func(t *testing.T) {
			srv, cli := tlsConfigs(t)
			cli.ServerName = "" // Dial's address names it
			cli.MinVersion, cli.MaxVersion = v.v, v.v
			check := func(t *testing.T, k *tlsClient, addr string) {
				t.Helper()
				_, port, _ := net.SplitHostPort(addr)
				c, err := k.s.Dial(context.Background(), "tcp", net.JoinHostPort("localhost", port))
				if err != nil {
					t.Fatal(err)
				}
				if err := <-k.handshakes; err != nil {
					t.Fatalf("OnHandshake learned %v", err)
				}
				st := <-k.states
				if st.Version != v.v || !st.HandshakeComplete || st.ServerName != "localhost" || len(st.PeerCertificates) == 0 {
					t.Fatalf("client's state: version %x, complete %v, server name %q, %d certificates",
						st.Version, st.HandshakeComplete, st.ServerName, len(st.PeerCertificates))
				}
				if b := <-k.got; string(b) != first {
					t.Fatalf("the Handler got %d bytes, want the echo of the %d sent", len(b), len(first))
				}
				if err := <-k.closed; err != nil {
					t.Fatalf("OnClose learned %v", err)
				}
				if err := c.StartTLS(cli); !errors.Is(err, ErrOutsideLoop) && !errors.Is(err, ErrClosed) {
					t.Fatalf("StartTLS outside the loop: %v", err)
				}
			}
			t.Run("crypto/tls", func(t *testing.T) {
				addr, read, hsErr := goTLSEcho(t, srv)
				k := newTLSClient(t, cli, first, "bye\n")
				check(t, k, addr)
				if err := <-hsErr; err != nil {
					t.Fatalf("server's handshake: %v", err)
				}
				types := records(<-read)
				if len(types) == 0 || types[0] != 22 {
					t.Fatalf("the server read records %v, want a handshake first", types)
				}
				if v.v == tls.VersionTLS12 && types[len(types)-1] != 21 {
					t.Errorf("the server read records ending %v, want close_notify (21) last", types[len(types)-1])
				}
			})
			t.Run("netio", func(t *testing.T) {
				serverHS := make(chan error, 1)
				s := startLoops(t, func(c *LoopConn, in []byte) int {
					c.Write(in)
					if c.EOF() {
						c.Close()
					}
					return len(in)
				}, &LoopOptions{TLSConfig: srv, OnHandshake: func(c *LoopConn, err error) { serverHS <- err }})
				k := newTLSClient(t, cli, first, "bye\n")
				check(t, k, s.Addr().String())
				if err := <-serverHS; err != nil {
					t.Fatalf("server's handshake: %v", err)
				}
			})
		})
	}
}

// TestLoopsDialTLSVerify: the client's handshake fails, closing the
// connection, when the certificate does not verify: OnHandshake learns
// ErrHandshake with crypto/x509's error, then OnClose the same.
func TestLoopsDialTLSVerify(t *testing.T) {
	srv, cli := tlsConfigs(t)
	other, err := selfsigned.Server("example.test")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(other.Leaf)
	for _, tc := range []struct {
		name   string
		srv    *tls.Config
		cli    *tls.Config
		host   string // dialed
		target any    // what the error matches (errors.As)
	}{
		{"unknown CA", srv, &tls.Config{ServerName: "localhost"}, "localhost", new(x509.UnknownAuthorityError)},
		{"ServerName mismatch", srv, &tls.Config{RootCAs: cli.RootCAs, ServerName: "other.test"}, "localhost", new(x509.HostnameError)},
		// No ServerName: Dial's host, 127.0.0.1, which the certificate
		// does not name.
		{"dialed host mismatch", &tls.Config{Certificates: []tls.Certificate{other}}, &tls.Config{RootCAs: pool}, "127.0.0.1", new(x509.HostnameError)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, _, hsErr := goTLSEcho(t, tc.srv)
			k := newTLSClient(t, tc.cli, "x\n", "x\n")
			_, port, _ := net.SplitHostPort(addr)
			if _, err := k.s.Dial(context.Background(), "tcp", net.JoinHostPort(tc.host, port)); err != nil {
				t.Fatal(err)
			}
			err := <-k.handshakes
			if !errors.Is(err, ErrHandshake) || !errors.As(err, tc.target) {
				t.Fatalf("OnHandshake learned %v, want ErrHandshake and %T", err, tc.target)
			}
			var verr *tls.CertificateVerificationError
			if !errors.As(err, &verr) {
				t.Fatalf("OnHandshake learned %v, want a *tls.CertificateVerificationError", err)
			}
			if h, ok := tc.target.(*x509.HostnameError); ok && h.Host != map[string]string{"localhost": "other.test", "127.0.0.1": "127.0.0.1"}[tc.host] {
				t.Fatalf("the name checked was %q", h.Host)
			}
			if cerr := <-k.closed; !errors.Is(cerr, ErrHandshake) {
				t.Fatalf("OnClose learned %v, want ErrHandshake", cerr)
			}
			if err := <-hsErr; err == nil {
				t.Fatal("the server's handshake succeeded")
			}
		})
	}
}

// TestLoopsDialTLSUnixNoName: a Unix socket's address names no server:
// without ServerName or InsecureSkipVerify the handshake fails at once;
// with InsecureSkipVerify it goes through.
func TestLoopsDialTLSUnixNoName(t *testing.T) {
	srv, cli := tlsConfigs(t)
	ln := listenUnix(t)
	path := ln.Addr().String()
	s, err := Serve(ln, func(c *LoopConn, in []byte) int { c.Write(in); return len(in) }, &LoopOptions{TLSConfig: srv})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	noName := &tls.Config{RootCAs: cli.RootCAs}
	k := newTLSClient(t, noName, "x\n", "x\n")
	if _, err := k.s.Dial(context.Background(), "unix", path); err != nil {
		t.Fatal(err)
	}
	if err := <-k.handshakes; !errors.Is(err, ErrHandshake) || !strings.Contains(err.Error(), "ServerName") {
		t.Fatalf("OnHandshake learned %v, want ErrHandshake for want of a ServerName", err)
	}
	k = newTLSClient(t, &tls.Config{InsecureSkipVerify: true}, "x\n", "x\n")
	if _, err := k.s.Dial(context.Background(), "unix", path); err != nil {
		t.Fatal(err)
	}
	if err := <-k.handshakes; err != nil {
		t.Fatalf("OnHandshake learned %v", err)
	}
	if b := <-k.got; string(b) != "x\n" {
		t.Fatalf("echo %q", b)
	}
}

// TestLoopsDialTLSHandshakeTimeout: a server that never answers the
// client's hello: the handshake ends at HandshakeTimeout, on the loop's
// clock, with os.ErrDeadlineExceeded.
func TestLoopsDialTLSHandshakeTimeout(t *testing.T) {
	_, cli := tlsConfigs(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	hello := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		bufio.NewReader(c).ReadByte() // the client's hello: then silence
		close(hello)
		io.Copy(io.Discard, c)
	}()
	clk := newFakeClock()
	handshakes := make(chan error, 1)
	opt := &LoopOptions{Loops: 1, HandshakeTimeout: 3 * time.Second,
		OnOpen:      func(c *LoopConn) { c.StartTLS(cli) },
		OnHandshake: func(c *LoopConn, err error) { handshakes <- err },
	}
	SetLoopClock(opt, clk.Now)
	s, err := NewLoops(echo, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	<-hello
	// Dial has returned; the handshake waits for the server.
	during := make(chan error, 1)
	c.Do(func(c *LoopConn) {
		_, err := c.WriteString("early\n")
		if _, ok := c.ConnectionState(); ok {
			err = errors.New("ConnectionState ok during the handshake")
		}
		during <- err
	})
	if err := <-during; !errors.Is(err, ErrHandshaking) {
		t.Fatalf("Write during the client's handshake: %v, want ErrHandshaking", err)
	}
	clk.advance(s, 2*time.Second)
	select {
	case err := <-handshakes:
		t.Fatalf("the handshake ended (%v) before its timeout", err)
	default:
	}
	clk.advance(s, 2*time.Second)
	if err := <-handshakes; !errors.Is(err, ErrHandshake) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("OnHandshake learned %v, want ErrHandshake and os.ErrDeadlineExceeded", err)
	}

}

// TestLoopsDialTLSOneRecord: the client's writes of one call leave in one
// record, which netio's server hands its Handler whole.
func TestLoopsDialTLSOneRecord(t *testing.T) {
	srv, cli := tlsConfigs(t)
	calls := make(chan string, 10)
	s := startLoops(t, func(c *LoopConn, in []byte) int {
		calls <- string(in)
		return len(in)
	}, &LoopOptions{TLSConfig: srv})
	k, err := NewLoops(echo, &LoopOptions{
		OnOpen: func(c *LoopConn) { c.StartTLS(cli) },
		OnHandshake: func(c *LoopConn, err error) {
			if err != nil {
				t.Error(err)
				return
			}
			for _, p := range []string{"a", "b", "c", "\n"} {
				c.WriteString(p)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if _, err := k.Dial(context.Background(), "tcp", s.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if got := <-calls; got != "abc\n" {
		t.Fatalf("the server's first call got %q, want the four writes in one record", got)
	}
}

// TestLoopsDialTLSClose: Close during a client's handshake (a server that
// never answers) ends it: OnHandshake learns ErrHandshake, and Close
// returns once the handshake's goroutine has.
func TestLoopsDialTLSClose(t *testing.T) {
	_, cli := tlsConfigs(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	hello := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		bufio.NewReader(c).ReadByte()
		hello <- c
	}()
	handshakes := make(chan error, 1)
	s, err := NewLoops(echo, &LoopOptions{
		OnOpen:      func(c *LoopConn) { c.StartTLS(cli) },
		OnHandshake: func(c *LoopConn, err error) { handshakes <- err },
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Dial(context.Background(), "tcp", ln.Addr().String()); err != nil {
		t.Fatal(err)
	}
	peer := <-hello
	defer peer.Close()
	s.Close()
	if err := <-handshakes; !errors.Is(err, ErrHandshake) || !errors.Is(err, ErrServerClosed) {
		t.Fatalf("OnHandshake learned %v, want ErrHandshake and ErrServerClosed", err)
	}
}

// TestLoopsDialSTARTTLS: a dialed connection upgraded mid-stream, as an
// SMTP client does: the Handler that reads the server's go-ahead calls
// StartTLS, and what follows is sealed both ways.
func TestLoopsDialSTARTTLS(t *testing.T) {
	srv, cli := tlsConfigs(t)
	s := startLoops(t, func(c *LoopConn, in []byte) int {
		i := bytes.IndexByte(in, '\n')
		if i < 0 {
			return 0
		}
		line := string(in[:i])
		if line == "STARTTLS" {
			c.WriteString("220 go ahead\n")
			c.StartTLS(srv)
			return i + 1
		}
		_, on := c.ConnectionState()
		c.WriteString(line + " (TLS " + strconv.FormatBool(on) + ")\n")
		return i + 1
	}, nil)
	got := make(chan string, 1)
	k, err := NewLoops(func(c *LoopConn, in []byte) int {
		if _, on := c.ConnectionState(); !on {
			if string(in) == "220 go ahead\n" {
				if err := c.StartTLS(cli); err != nil {
					t.Error(err)
				}
			}
			return len(in)
		}
		if bytes.HasSuffix(in, []byte("\n")) {
			got <- string(in)
			c.Close()
			return len(in)
		}
		return 0
	}, &LoopOptions{
		OnOpen: func(c *LoopConn) { c.WriteString("STARTTLS\n") },
		OnHandshake: func(c *LoopConn, err error) {
			if err != nil {
				t.Error(err)
				return
			}
			c.WriteString("hi\n")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if _, err := k.Dial(context.Background(), "tcp", s.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if line := <-got; line != "hi (TLS true)\n" {
		t.Fatalf("reply over TLS %q", line)
	}
}

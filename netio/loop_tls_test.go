//go:build unix

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
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/selfsigned"
)

// tlsConfigs returns a server's configuration with a new self-signed
// certificate, and a client's that trusts it.
func tlsConfigs(t testing.TB) (srv, cli *tls.Config) {
	t.Helper()
	cert, err := selfsigned.Server("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	return &tls.Config{Certificates: []tls.Certificate{cert}}, &tls.Config{RootCAs: pool, ServerName: "localhost"}
}

// tapConn records what the client reads, to look at the records.
type tapConn struct {
	net.Conn
	mu   sync.Mutex
	read []byte
	junk []byte // sent with the next Write, in the same write(2)
	hold bool   // Writes are held until flush
	held []byte
}

// flush sends what was held, in one write(2).
func (c *tapConn) flush() error {
	c.hold = false
	_, err := c.Conn.Write(c.held)
	c.held = nil
	return err
}

func (c *tapConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.read = append(c.read, p[:n]...)
	c.mu.Unlock()
	return n, err
}

func (c *tapConn) Write(p []byte) (int, error) {
	if c.hold {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	if c.junk != nil {
		b := append(append([]byte(nil), p...), c.junk...)
		c.junk = nil
		if _, err := c.Conn.Write(b); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// taken returns what was read since the last call.
func (c *tapConn) taken() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.read
	c.read = nil
	return b
}

// records returns the types of the whole TLS records in b.
func records(b []byte) (types []byte) {
	for len(b) >= 5 {
		n := 5 + (int(b[3])<<8 | int(b[4]))
		if len(b) < n {
			break
		}
		types = append(types, b[0])
		b = b[n:]
	}
	return types
}

// dialTLS dials s and runs a TLS handshake with cfg over a tapConn.
func dialTLS(t testing.TB, s *Loops, cfg *tls.Config) (*tls.Conn, *tapConn) {
	t.Helper()
	tap := &tapConn{Conn: dial(t, s)}
	tc := tls.Client(tap, cfg)
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	return tc, tap
}

var tlsVersions = []struct {
	name string
	v    uint16
}{{"TLS1.2", tls.VersionTLS12}, {"TLS1.3", tls.VersionTLS13}}

// TestLoopsTLSEcho: with LoopOptions.TLSConfig every connection speaks
// TLS; OnHandshake, then OnOpen (a sealed greeting) run after the
// handshake; the Handler gets plaintext; the writes of one call leave in
// one record; Close sends close_notify after the replies.
func TestLoopsTLSEcho(t *testing.T) {
	for _, v := range tlsVersions {
		t.Run(v.name, func(t *testing.T) {
			srv, cli := tlsConfigs(t)
			cli.MinVersion, cli.MaxVersion = v.v, v.v
			states := make(chan tls.ConnectionState, 1)
			var order []string
			closed := make(chan error, 1)
			h := func(c *LoopConn, in []byte) int {
				if i := bytes.IndexByte(in, '\n'); i >= 0 {
					line := in[:i+1]
					if string(line) == "quit\n" {
						c.WriteString("bye\n")
						c.Close()
						return len(in)
					}
					// Three writes, one record.
					c.Write(line[:1])
					c.Write(line[1:i])
					c.WriteString("+\n")
					return i + 1
				}
				return 0
			}
			s := startLoops(t, h, &LoopOptions{TLSConfig: srv,
				OnHandshake: func(c *LoopConn, err error) {
					order = append(order, "handshake")
					st, ok := c.ConnectionState()
					if err != nil || !ok {
						t.Errorf("OnHandshake: %v, state %v", err, ok)
					}
					states <- st
				},
				OnOpen: func(c *LoopConn) {
					order = append(order, "open")
					c.WriteString("hello\n")
				},
				OnClose: func(c *LoopConn, err error) { closed <- err },
			})
			tc, tap := dialTLS(t, s, cli)
			if st := <-states; st.Version != v.v || !st.HandshakeComplete {
				t.Fatalf("server's state: version %x, complete %v", st.Version, st.HandshakeComplete)
			}
			r := bufio.NewReader(tc)
			if line, err := r.ReadString('\n'); line != "hello\n" {
				t.Fatalf("greeting %q, %v", line, err)
			}
			for _, msg := range []string{"one\n", "two\n", strings.Repeat("x", 20000) + "\n"} {
				tap.taken()
				tc.Write([]byte(msg[:2]))
				tc.Write([]byte(msg[2:])) // a line in two records
				want := msg[:len(msg)-1] + "+\n"
				got := make([]byte, len(want))
				if _, err := io.ReadFull(r, got); err != nil || string(got) != want {
					t.Fatalf("echo of %.10q: %.10q, %v", msg, got, err)
				}
				if len(msg) < 100 {
					if n := len(records(tap.taken())); n != 1 {
						t.Errorf("the replies of one call came in %d records, want 1", n)
					}
				}
			}
			tc.Write([]byte("quit\n"))
			if line, err := r.ReadString('\n'); line != "bye\n" {
				t.Fatalf("reply to quit: %q, %v", line, err)
			}
			if _, err := r.ReadByte(); err != io.EOF {
				t.Fatalf("after Close the client read %v, want EOF", err)
			}
			if v.v == tls.VersionTLS12 {
				// The last record is the close_notify alert (in TLS 1.3
				// alerts are encrypted as application data).
				if types := records(tap.taken()); len(types) == 0 || types[len(types)-1] != 21 {
					t.Errorf("records after quit: %v, want the last an alert (21)", types)
				}
			}
			if err := <-closed; err != nil {
				t.Errorf("OnClose learned %v", err)
			}
			if strings.Join(order, ",") != "handshake,open" {
				t.Errorf("callbacks in the order %v", order)
			}
		})
	}
}

// TestLoopsStartTLS: an upgrade of a live connection. What came after the
// upgrade command in the clear is dropped (a handshake reading it would
// fail), the reply before StartTLS leaves in the clear, Write during the
// handshake fails, and a second StartTLS and Detach are refused.
func TestLoopsStartTLS(t *testing.T) {
	srv, cli := tlsConfigs(t)
	errs := make(chan error, 8)
	handshakes := make(chan error, 1)
	h := func(c *LoopConn, in []byte) int {
		i := bytes.IndexByte(in, '\n')
		if i < 0 {
			return 0
		}
		line := string(in[:i+1])
		switch {
		case line == "STARTTLS\n":
			c.WriteString("220 go ahead\n")
			errs <- c.StartTLS(srv)
			_, err := c.WriteString("too early\n")
			errs <- err
			return i + 1 // the rest is dropped all the same
		case line == "AGAIN\n":
			errs <- c.StartTLS(srv)
			_, err := c.Detach()
			errs <- err
		}
		c.WriteString("tls " + line)
		return i + 1
	}
	s := startLoops(t, h, &LoopOptions{OnHandshake: func(c *LoopConn, err error) { handshakes <- err }})
	raw := dial(t, s)
	raw.Write([]byte("STARTTLS\nJUNK IN THE CLEAR\n"))
	r := bufio.NewReader(raw)
	if line, err := r.ReadString('\n'); line != "220 go ahead\n" {
		t.Fatalf("reply to STARTTLS: %q, %v", line, err)
	}
	if err := <-errs; err != nil {
		t.Fatalf("StartTLS: %v", err)
	}
	if err := <-errs; !errors.Is(err, ErrHandshaking) {
		t.Fatalf("Write during the handshake: %v, want ErrHandshaking", err)
	}
	tc := tls.Client(raw, cli)
	if err := tc.Handshake(); err != nil {
		t.Fatalf("handshake after the plaintext that followed STARTTLS: %v", err)
	}
	if err := <-handshakes; err != nil {
		t.Fatalf("OnHandshake: %v", err)
	}
	tr := bufio.NewReader(tc)
	tc.Write([]byte("hello\n"))
	if line, err := tr.ReadString('\n'); line != "tls hello\n" {
		t.Fatalf("over TLS: %q, %v", line, err)
	}
	tc.Write([]byte("AGAIN\n"))
	if err := <-errs; !errors.Is(err, ErrTLSActive) {
		t.Errorf("StartTLS over TLS: %v, want ErrTLSActive", err)
	}
	if err := <-errs; !errors.Is(err, ErrTLSActive) {
		t.Errorf("Detach over TLS: %v, want ErrTLSActive", err)
	}
	if line, err := tr.ReadString('\n'); line != "tls AGAIN\n" {
		t.Fatalf("over TLS: %q, %v", line, err)
	}
}

// TestLoopsTLSHandshakeTimeout: a peer that sends nothing is closed at
// HandshakeTimeout on the loop's clock, not before; with StartTLS, the
// connection's deadline bounds the handshake instead.
func TestLoopsTLSHandshakeTimeout(t *testing.T) {
	srv, _ := tlsConfigs(t)
	t.Run("HandshakeTimeout", func(t *testing.T) {
		clk := newFakeClock()
		handshakes := make(chan error, 1)
		opt := &LoopOptions{Loops: 1, TLSConfig: srv, HandshakeTimeout: 3 * time.Second,
			OnHandshake: func(c *LoopConn, err error) { handshakes <- err },
			OnOpen:      func(c *LoopConn) { t.Error("OnOpen without a handshake") },
		}
		SetLoopClock(opt, clk.Now)
		s := startLoops(t, echo, opt)
		c := dial(t, s)
		for s.Stats().Accepted == 0 { // accepted: the handshake waits
			runtime.Gosched()
		}
		s.Sync() // the loop has set the handshake's deadline
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
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatal("the connection is still open")
		}
	})
	t.Run("deadline", func(t *testing.T) {
		clk := newFakeClock()
		handshakes := make(chan error, 1)
		started := make(chan struct{}, 1)
		h := func(c *LoopConn, in []byte) int {
			c.SetDeadline(clk.Now().Add(time.Minute))
			c.StartTLS(srv)
			started <- struct{}{}
			return len(in)
		}
		opt := &LoopOptions{Loops: 1, HandshakeTimeout: time.Second,
			OnHandshake: func(c *LoopConn, err error) { handshakes <- err }}
		SetLoopClock(opt, clk.Now)
		s := startLoops(t, h, opt)
		c := dial(t, s)
		c.Write([]byte("STARTTLS\n"))
		r := bufio.NewReader(c)
		roundTripDone := make(chan struct{})
		go func() { r.ReadByte(); close(roundTripDone) }()
		<-started
		clk.advance(s, 30*time.Second) // past HandshakeTimeout, within the deadline
		select {
		case err := <-handshakes:
			t.Fatalf("the handshake ended (%v) before the connection's deadline", err)
		default:
		}
		clk.advance(s, 31*time.Second)
		if err := <-handshakes; !errors.Is(err, ErrHandshake) || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("OnHandshake learned %v, want ErrHandshake and os.ErrDeadlineExceeded", err)
		}
		<-roundTripDone
	})
}

// TestLoopsTLSAlertAfterReplies: a bad record right behind a good one, in
// the same read: the reply to the good one is sealed and sent before the
// fatal alert, and OnClose learns ErrTLS.
func TestLoopsTLSAlertAfterReplies(t *testing.T) {
	for _, v := range tlsVersions {
		t.Run(v.name, func(t *testing.T) {
			srv, cli := tlsConfigs(t)
			cli.MinVersion, cli.MaxVersion = v.v, v.v
			closed := make(chan error, 1)
			s := startLoops(t, lines, &LoopOptions{TLSConfig: srv, OnClose: func(c *LoopConn, err error) { closed <- err }})
			tc, tap := dialTLS(t, s, cli)
			r := bufio.NewReader(tc)
			tc.Write([]byte("first\n"))
			if line, err := r.ReadString('\n'); line != "first\n" {
				t.Fatalf("echo: %q, %v", line, err)
			}
			// A record that cannot decrypt, in the write(2) of a good one.
			tap.junk = append([]byte{23, 3, 3, 0, 40}, bytes.Repeat([]byte{0x5a}, 40)...)
			tc.Write([]byte("owed\n"))
			line, err := r.ReadString('\n')
			if line != "owed\n" {
				t.Fatalf("the reply owed before the bad record: %q, %v", line, err)
			}
			if _, err := r.ReadByte(); err == nil || !strings.Contains(err.Error(), "bad record MAC") {
				t.Fatalf("after the reply the client read %v, want the bad_record_mac alert", err)
			}
			if err := <-closed; !errors.Is(err, ErrTLS) {
				t.Fatalf("OnClose learned %v, want ErrTLS", err)
			}
		})
	}
}

// TestLoopsTLSCloseNotify: the peer's close_notify, with the TCP stream
// still open, is the Handler's last call (EOF), which may still answer.
func TestLoopsTLSCloseNotify(t *testing.T) {
	for _, v := range tlsVersions {
		t.Run(v.name, func(t *testing.T) {
			srv, cli := tlsConfigs(t)
			cli.MinVersion, cli.MaxVersion = v.v, v.v
			h := func(c *LoopConn, in []byte) int {
				if c.EOF() {
					c.WriteString("eof after " + string(in) + "\n")
					c.Close()
				}
				return 0 // kept until the end
			}
			s := startLoops(t, h, &LoopOptions{TLSConfig: srv})
			tc, _ := dialTLS(t, s, cli)
			tc.Write([]byte("abc"))
			if err := tc.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(tc)
			if string(got) != "eof after abc\n" || err != nil {
				t.Fatalf("after close_notify: %q, %v", got, err)
			}
		})
	}
}

// TestLoopsTLSLargeClientCert: a client certificate chain larger than a
// handshake may hold is refused.
func TestLoopsTLSLargeClientCert(t *testing.T) {
	srv, cli := tlsConfigs(t)
	srv.ClientAuth = tls.RequireAnyClientCert
	cert, err := selfsigned.Client("big")
	if err != nil {
		t.Fatal(err)
	}
	for len(cert.Certificate)*len(cert.Certificate[0]) < 2*MaxHandshakeInput {
		cert.Certificate = append(cert.Certificate, cert.Certificate[0])
	}
	cli.Certificates = []tls.Certificate{cert}
	cli.MaxVersion = tls.VersionTLS12 // the certificate goes before the client's Finished
	handshakes := make(chan error, 1)
	s := startLoops(t, echo, &LoopOptions{TLSConfig: srv, OnHandshake: func(c *LoopConn, err error) { handshakes <- err }})
	tc := tls.Client(dial(t, s), cli)
	if err := tc.Handshake(); err == nil {
		t.Fatal("a handshake with a client certificate chain over 1 MiB succeeded")
	}
	if err := <-handshakes; !errors.Is(err, ErrHandshake) {
		t.Fatalf("OnHandshake learned %v", err)
	}
}

// TestLoopsTLSHandshakeEOFStats: a peer that ends its stream during the
// handshake (a TCP health check that connects and closes, a client that
// gives up halfway through its ClientHello) is counted in Stats as a
// Peer close, as one that resets it is, not as an Error; OnHandshake
// learns ErrHandshake with the EOF.
func TestLoopsTLSHandshakeEOFStats(t *testing.T) {
	srv, cli := tlsConfigs(t)
	a, b := net.Pipe()
	go func() { tls.Client(a, cli).Handshake(); a.Close() }()
	hello := make([]byte, 64<<10)
	n, err := b.Read(hello)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	for _, sent := range []int{0, n / 2} {
		handshakes := make(chan error, 1)
		s := startLoops(t, echo, &LoopOptions{Loops: 1, TLSConfig: srv,
			OnHandshake: func(c *LoopConn, err error) { handshakes <- err },
			OnClose:     func(c *LoopConn, err error) { t.Errorf("OnClose (%v) without a handshake", err) }})
		c := dial(t, s)
		c.Write(hello[:sent])
		c.CloseWrite()
		if err := <-handshakes; !errors.Is(err, ErrHandshake) || !(errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
			t.Fatalf("%d bytes then EOF: OnHandshake learned %v, want ErrHandshake and the EOF", sent, err)
		}
		io.ReadAll(c)
		for s.Stats().Closed.Total() == 0 {
			s.Sync()
		}
		if st := s.Stats(); st.Closed.Peer != 1 || st.Closed.Error != 0 || st.Open != 0 {
			t.Errorf("%d bytes then EOF: stats %+v, want one Peer close", sent, st)
		}
	}
}

// clientHello returns the first flight of a client with cfg: its
// ClientHello record.
func clientHello(t *testing.T, cfg *tls.Config) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer b.Close()
	go func() { tls.Client(a, cfg).Handshake(); a.Close() }()
	hello := make([]byte, 64<<10)
	n, err := b.Read(hello)
	if err != nil {
		t.Fatal(err)
	}
	return hello[:n]
}

// heldHook records what a handshake held: the most, and how often it was
// given input; full gets a token once it held MaxHandshakeInput.
type heldHook struct {
	most, gives atomic.Int64
	full        chan struct{}
}

func newHeldHook(opt *LoopOptions) *heldHook {
	h := &heldHook{full: make(chan struct{}, 1)}
	SetHandshakeHeldHook(opt, func(n int) {
		h.gives.Add(1)
		if int64(n) > h.most.Load() {
			h.most.Store(int64(n))
		}
		if n >= MaxHandshakeInput {
			select {
			case h.full <- struct{}{}:
			default:
			}
		}
	})
	return h
}

// wait waits until the handshake has held MaxHandshakeInput, and reports
// false if s closed a connection first.
func (h *heldHook) wait(s *Loops) bool {
	for {
		select {
		case <-h.full:
			s.Sync() // and the loop has gone on from there
			return true
		default:
		}
		if s.Stats().Closed.Total() > 0 {
			return false
		}
		s.Sync()
	}
}

// TestLoopsTLSHandshakeInputBound: a peer that floods a handshake still
// going (here: held in a tls.Config callback) is not read past
// MaxHandshakeInput: the rest waits in the kernel, TCP holds the peer
// back, and the handshake's timeout ends it.
func TestLoopsTLSHandshakeInputBound(t *testing.T) {
	srv, cli := tlsConfigs(t)
	hello := clientHello(t, cli)
	entered, release := make(chan struct{}), make(chan struct{})
	srv.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		close(entered)
		<-release
		return nil, nil
	}
	clk := newFakeClock()
	handshakes := make(chan error, 1)
	opt := &LoopOptions{Loops: 1, TLSConfig: srv, HandshakeTimeout: 10 * time.Second,
		OnHandshake: func(c *LoopConn, err error) { handshakes <- err }}
	SetLoopClock(opt, clk.Now)
	held := newHeldHook(opt)
	s := startLoops(t, echo, opt)
	var once sync.Once
	releaseOnce := func() { once.Do(func() { close(release) }) }
	t.Cleanup(releaseOnce) // before the server's Close, which waits for the handshake
	raw := dial(t, s)
	if _, err := raw.Write(hello); err != nil {
		t.Fatal(err)
	}
	<-entered
	flooded := make(chan error, 1)
	go func() {
		_, err := raw.Write(make([]byte, 64<<20)) // more than the kernel's buffers hold
		flooded <- err
	}()
	if !held.wait(s) {
		t.Fatalf("the flooded handshake was closed: stats %+v", s.Stats())
	}
	gives := held.gives.Load()
	s.Sync()
	s.Sync()
	if n := held.gives.Load(); n != gives {
		t.Errorf("the full handshake was given input %d more times", n-gives)
	}
	if most := held.most.Load(); most != MaxHandshakeInput {
		t.Errorf("the handshake held at most %d bytes, want MaxHandshakeInput (%d)", most, MaxHandshakeInput)
	}
	select {
	case err := <-flooded:
		t.Fatalf("the flood was all written (%v): the connection was read on", err)
	default:
	}
	clk.advance(s, 11*time.Second) // the handshake's timeout
	for s.Stats().Closed.Total() == 0 {
		s.Sync()
	}
	raw.Close()
	<-flooded
	releaseOnce()
	if err := <-handshakes; !errors.Is(err, ErrHandshake) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("OnHandshake learned %v, want ErrHandshake and os.ErrDeadlineExceeded", err)
	}
}

// TestLoopsTLSHandshakeHeldFastClient: a TLS 1.3 client may send data as
// soon as it has sent its Finished. While the server's handshake is held
// (a slow VerifyConnection), a client that sends more than
// MaxHandshakeInput is not read past it, not closed; once the handshake
// is over, the Handler gets every byte, in order.
func TestLoopsTLSHandshakeHeldFastClient(t *testing.T) {
	const size = 4 * MaxHandshakeInput
	hs := newHeldServer(t)
	ps := newPatternSink()
	handshakes := make(chan error, 1)
	opt := &LoopOptions{Loops: 1, TLSConfig: hs.srv, OnHandshake: func(c *LoopConn, err error) { handshakes <- err }}
	held := newHeldHook(opt)
	s := startLoops(t, ps.handle, opt)
	_, wrote := hs.flood(t, dial(t, s), size)
	if !held.wait(s) {
		t.Fatalf("the connection was closed with its handshake held: stats %+v", s.Stats())
	}
	hs.release()
	if err := <-handshakes; err != nil {
		t.Fatalf("OnHandshake learned %v", err)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("the client's write: %v", err)
	}
	if r := <-ps.done; r.got != size || r.bad >= 0 {
		t.Fatalf("the Handler got %d bytes of %d, first wrong at %d", r.got, size, r.bad)
	}
	if most := held.most.Load(); most > MaxHandshakeInput {
		t.Errorf("the handshake held %d bytes, more than MaxHandshakeInput", most)
	}
	if st := s.Stats(); st.Closed.Error != 0 {
		t.Errorf("stats %+v", st)
	}
}

// heldServer is a TLS server config whose VerifyConnection waits until
// release (or the test's end), and a TLS 1.3 client config for it.
type heldServer struct {
	srv, cli *tls.Config
	entered  chan struct{}
	release  func()
}

func newHeldServer(t *testing.T) *heldServer {
	h := &heldServer{entered: make(chan struct{})}
	h.srv, h.cli = tlsConfigs(t)
	h.cli.MinVersion = tls.VersionTLS13
	release := make(chan struct{})
	h.srv.VerifyConnection = func(tls.ConnectionState) error {
		close(h.entered)
		<-release
		return nil
	}
	var once sync.Once
	h.release = func() { once.Do(func() { close(release) }) }
	return h
}

// flood makes raw a client of h, done with its handshake while the
// server's is held, and has it write size bytes of pattern (byte i is
// i%251), then end its stream; wrote tells how that went.
func (h *heldServer) flood(t *testing.T, raw net.Conn, size int) (*tls.Conn, <-chan error) {
	// Cleanups run last first: this one before the server's Close, which
	// waits for the handshake.
	t.Cleanup(h.release)
	tc := tls.Client(raw, h.cli)
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	<-h.entered
	wrote := make(chan error, 1)
	go func() {
		p := make([]byte, size)
		for i := range p {
			p[i] = byte(i % 251)
		}
		_, err := tc.Write(p)
		if err == nil {
			err = tc.CloseWrite()
		}
		wrote <- err
	}()
	return tc, wrote
}

// patternSink is a Handler (handle) that checks its input is flood's
// pattern, and tells on done what it got at the end of the stream.
type patternSink struct {
	got, bad, calls int // on the loop
	wrong           atomic.Bool
	done            chan patternResult
}

type patternResult struct{ got, bad int }

func newPatternSink() *patternSink { return &patternSink{bad: -1, done: make(chan patternResult, 1)} }

func (p *patternSink) handle(c *LoopConn, in []byte) int {
	p.calls++
	for i, b := range in {
		if p.bad < 0 && b != byte((p.got+i)%251) {
			p.bad = p.got + i
			p.wrong.Store(true)
		}
	}
	p.got += len(in)
	if c.EOF() {
		p.done <- patternResult{p.got, p.bad}
		c.Close()
	}
	return len(in)
}

// TestLoopsTLSHandshakeHeldInterplay: a handshake whose input is full
// (a fast TLS 1.3 client, the server's VerifyConnection held) with
// SetReading(false) during the handshake: nothing reaches the Handler
// until SetReading(true), then every byte, in order, though the socket
// raised no event since; and with the peer's reset while its input waits
// in the kernel: the connection is closed as a Peer close once it is read
// again.
func TestLoopsTLSHandshakeHeldInterplay(t *testing.T) {
	for _, mode := range []string{"SetReading", "reset"} {
		t.Run(mode, func(t *testing.T) {
			const size = 4 * MaxHandshakeInput
			hs := newHeldServer(t)
			ps := newPatternSink()
			handshakes := make(chan error, 1)
			closes := make(chan error, 1)
			opened := make(chan struct{}, 1)
			opt := &LoopOptions{Loops: 1, TLSConfig: hs.srv,
				OnHandshake: func(c *LoopConn, err error) { handshakes <- err },
				OnOpen:      func(c *LoopConn) { opened <- struct{}{} },
				OnClose:     func(c *LoopConn, err error) { closes <- err }}
			held := newHeldHook(opt)
			s := startLoops(t, ps.handle, opt)
			raw := dial(t, s)
			_, wrote := hs.flood(t, raw, size)
			if !held.wait(s) {
				t.Fatalf("the connection was closed with its handshake held: stats %+v", s.Stats())
			}
			switch mode {
			case "SetReading":
				c := firstConn(s)
				off := make(chan error, 1)
				c.Do(func(c *LoopConn) { off <- c.SetReading(false) })
				if err := <-off; err != nil {
					t.Fatalf("SetReading(false) during the handshake: %v", err)
				}
				hs.release()
				if err := <-handshakes; err != nil {
					t.Fatalf("OnHandshake learned %v", err)
				}
				s.Sync()
				seen := make(chan int, 1)
				c.Do(func(c *LoopConn) { seen <- ps.calls; c.SetReading(true) })
				if n := <-seen; n != 0 {
					t.Fatalf("the Handler was called %d times with reading off", n)
				}
				if err := <-wrote; err != nil {
					t.Fatalf("the client's write: %v", err)
				}
				if r := <-ps.done; r.got != size || r.bad >= 0 {
					t.Fatalf("the Handler got %d bytes of %d, first wrong at %d", r.got, size, r.bad)
				}
			case "reset":
				raw.SetLinger(0)
				raw.Close()
				<-wrote
				hs.release()
				if err := <-handshakes; err != nil {
					t.Logf("OnHandshake learned %v", err) // the reset may come first
				}
				for s.Stats().Closed.Total() == 0 {
					s.Sync()
				}
				s.Sync()
				// OnClose only if OnOpen ran: a write of the handshake (its
				// session ticket) may meet the reset first, closing c during
				// its handshake.
				if len(opened) == 1 {
					if err := <-closes; err == nil {
						t.Error("OnClose learned nil after the peer's reset")
					}
				} else if len(closes) > 0 {
					t.Errorf("OnClose (%v) without OnOpen", <-closes)
				}
				if st := s.Stats(); st.Closed.Peer != 1 || st.Open != 0 {
					t.Errorf("stats %+v, want one Peer close", st)
				}
				if ps.wrong.Load() {
					t.Error("the Handler's input went wrong")
				}
			}
			if most := held.most.Load(); most > MaxHandshakeInput {
				t.Errorf("the handshake held %d bytes, more than MaxHandshakeInput", most)
			}
		})
	}
}

// firstConn returns the first connection s's first loop serves.
func firstConn(s *Loops) *LoopConn {
	conns := make(chan *LoopConn, 1)
	s.loops[0].post(task{lf: func(l *loop) {
		for _, c := range l.conns {
			if c != nil {
				conns <- c
				return
			}
		}
		conns <- nil
	}})
	return <-conns
}

// TestLoopsTLSHandshakeDeadlineRemoved: SetDeadline(time.Time{}) during a
// handshake (here in a function Do runs) leaves it bounded by
// HandshakeTimeout from its start.
func TestLoopsTLSHandshakeDeadlineRemoved(t *testing.T) {
	srv, _ := tlsConfigs(t)
	clk := newFakeClock()
	handshakes := make(chan error, 1)
	opt := &LoopOptions{Loops: 1, TLSConfig: srv, HandshakeTimeout: 3 * time.Second,
		OnHandshake: func(c *LoopConn, err error) { handshakes <- err }}
	SetLoopClock(opt, clk.Now)
	s := startLoops(t, echo, opt)
	c := dial(t, s)
	for s.Stats().Accepted == 0 { // accepted: the handshake waits
		runtime.Gosched()
	}
	s.Sync()
	lc := firstConn(s)
	if lc == nil {
		t.Fatal("no connection")
	}
	cleared := make(chan error, 1)
	if err := lc.Do(func(lc *LoopConn) { cleared <- lc.SetDeadline(time.Time{}) }); err != nil {
		t.Fatal(err)
	}
	if err := <-cleared; err != nil {
		t.Fatalf("SetDeadline: %v", err)
	}
	clk.advance(s, 2*time.Second)
	select {
	case err := <-handshakes:
		t.Fatalf("the handshake ended (%v) before its timeout", err)
	default:
	}
	clk.advance(s, 2*time.Second)
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a failure's bound only
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the client read %v: the handshake was not ended at HandshakeTimeout", err)
	}
	if err := <-handshakes; !errors.Is(err, ErrHandshake) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("OnHandshake learned %v, want ErrHandshake and os.ErrDeadlineExceeded", err)
	}
}

// TestLoopsTLSHandshakeDoneLingering: a handshake that succeeds while its
// connection, closed at the handshake's timeout, lingers (its peer taken
// not to have all of the output) tells OnHandshake what it came to, but
// the connection is not served: no OnOpen, no Handler, nothing sent; the
// linger ends as before.
func TestLoopsTLSHandshakeDoneLingering(t *testing.T) {
	srv, cli := tlsConfigs(t)
	cli.MinVersion = tls.VersionTLS13
	entered, release := make(chan struct{}), make(chan struct{})
	srv.VerifyConnection = func(tls.ConnectionState) error {
		close(entered)
		<-release
		return nil
	}
	clk := newFakeClock()
	var hold atomic.Bool
	hold.Store(true)
	handshakes := make(chan error, 1)
	calls := make(chan string, 4)
	h := func(c *LoopConn, in []byte) int {
		calls <- "Handler"
		return len(in)
	}
	opt := &LoopOptions{Loops: 1, TLSConfig: srv, HandshakeTimeout: 3 * time.Second,
		OnHandshake: func(c *LoopConn, err error) { handshakes <- err },
		OnOpen:      func(c *LoopConn) { calls <- "OnOpen"; c.WriteString("hello") },
		OnClose:     func(c *LoopConn, err error) { calls <- "OnClose" }}
	SetLoopClock(opt, clk.Now)
	SetLingerHeldHook(opt, hold.Load)
	held := make(chan int, 64)
	SetHandshakeHeldHook(opt, func(n int) {
		select {
		case held <- n:
		default:
		}
	})
	s := startLoops(t, h, opt)
	var once sync.Once
	releaseOnce := func() { once.Do(func() { close(release) }) }
	t.Cleanup(releaseOnce)
	raw := &writeSizes{Conn: dial(t, s)}
	tc := tls.Client(raw, cli)
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	<-entered
	if _, err := tc.Write([]byte("early data\n")); err != nil {
		t.Fatal(err)
	}
	// The handshake must hold the client's last flight and the data
	// before the timeout, or the linger would throw them away and the
	// handshake never end: all the client wrote after its ClientHello
	// (its first write), which the handshake took before
	// VerifyConnection. (What it held with the ClientHello is reported
	// too, and is larger.)
	for want := raw.after(1); <-held != want; {
	}
	clk.advance(s, 4*time.Second) // the timeout: c lingers
	if st := s.Stats(); st.Closed.Total() != 0 {
		t.Fatalf("closed without lingering: stats %+v", st)
	}
	releaseOnce()
	if err := <-handshakes; err != nil {
		t.Logf("OnHandshake learned %v", err)
	}
	s.Sync()
	hold.Store(false)
	clk.advance(s, lingerTime+time.Second)
	for s.Stats().Closed.Total() == 0 {
		s.Sync()
	}
	close(calls)
	for call := range calls {
		t.Errorf("%s called on a connection closed during its handshake", call)
	}
	tc.SetReadDeadline(time.Now().Add(time.Minute)) // a failure's bound only
	if n, err := tc.Read(make([]byte, 64)); n > 0 || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the client read %d bytes, %v; want the end of the stream", n, err)
	}
}

// writeSizes is a net.Conn that keeps the size of each Write.
type writeSizes struct {
	net.Conn
	mu    sync.Mutex
	sizes []int
}

func (w *writeSizes) Write(p []byte) (int, error) {
	n, err := w.Conn.Write(p)
	w.mu.Lock()
	w.sizes = append(w.sizes, n)
	w.mu.Unlock()
	return n, err
}

// after is how many bytes were written after the first k writes.
func (w *writeSizes) after(k int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.sizes[min(k, len(w.sizes)):] {
		n += m
	}
	return n
}

// TestLoopsTLSALPNResumption: ALPN is negotiated, a second connection
// resumes the first's session, and ClientHelloInfo.Conn has both
// addresses.
func TestLoopsTLSALPNResumption(t *testing.T) {
	for _, v := range tlsVersions {
		t.Run(v.name, func(t *testing.T) {
			srv, cli := tlsConfigs(t)
			cli.MinVersion, cli.MaxVersion = v.v, v.v
			srv.NextProtos = []string{"h2", "echo/1"}
			cli.NextProtos = []string{"echo/1"}
			cli.ClientSessionCache = tls.NewLRUClientSessionCache(4)
			type addrs struct{ local, remote string }
			hellos := make(chan addrs, 2)
			srv.GetConfigForClient = func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
				hellos <- addrs{hi.Conn.LocalAddr().String(), hi.Conn.RemoteAddr().String()}
				return nil, nil
			}
			states := make(chan tls.ConnectionState, 2)
			s := startLoops(t, lines, &LoopOptions{TLSConfig: srv, OnHandshake: func(c *LoopConn, err error) {
				st, _ := c.ConnectionState()
				states <- st
			}})
			for i := range 2 {
				tc, _ := dialTLS(t, s, cli)
				a := <-hellos
				if a.local != tc.RemoteAddr().String() || a.remote != tc.LocalAddr().String() {
					t.Errorf("ClientHelloInfo.Conn: local %s remote %s; the client: %s to %s", a.local, a.remote, tc.LocalAddr(), tc.RemoteAddr())
				}
				st := <-states
				if st.NegotiatedProtocol != "echo/1" {
					t.Errorf("ALPN: %q", st.NegotiatedProtocol)
				}
				if st.DidResume != (i == 1) {
					t.Errorf("connection %d: DidResume %v", i, st.DidResume)
				}
				r := bufio.NewReader(tc)
				tc.Write([]byte("x\n")) // and the client takes its TLS 1.3 ticket
				if line, err := r.ReadString('\n'); line != "x\n" {
					t.Fatalf("echo: %q, %v", line, err)
				}
				tc.Close()
			}
		})
	}
}

// TestLoopsTLSReading: SetReading(false) holds the records already read
// until SetReading(true), and MaxInput counts plaintext.
func TestLoopsTLSReading(t *testing.T) {
	srv, cli := tlsConfigs(t)
	h := func(c *LoopConn, in []byte) int {
		if string(in) == "pause" {
			c.SetReading(false)
			c.AfterFunc(0, func(c *LoopConn) { c.SetReading(true) })
			return len(in)
		}
		c.Write(in)
		return len(in)
	}
	s := startLoops(t, h, &LoopOptions{TLSConfig: srv})
	tc, tap := dialTLS(t, s, cli)
	// "pause" and "after" in one write(2): two records, one read.
	tap.hold = true
	tc.Write([]byte("pause"))
	tc.Write([]byte("after"))
	if err := tap.flush(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 5)
	if _, err := io.ReadFull(tc, got); string(got) != "after" {
		t.Fatalf("after a pause: %q, %v", got, err)
	}

	// A line the Handler never uses, past MaxInput of plaintext.
	closed := make(chan error, 1)
	s2 := startLoops(t, func(c *LoopConn, in []byte) int { return 0 }, &LoopOptions{TLSConfig: srv, MaxInput: 100,
		OnClose: func(c *LoopConn, err error) { closed <- err }})
	tc2, _ := dialTLS(t, s2, cli)
	tc2.Write(bytes.Repeat([]byte("y"), 100))
	tc2.Write([]byte("y"))
	if err := <-closed; !errors.Is(err, ErrInputTooLarge) {
		t.Fatalf("OnClose learned %v, want ErrInputTooLarge", err)
	}
}

// opensslClient runs openssl s_client against s with args, and returns
// its standard input and output.
func opensslClient(t *testing.T, s *Loops, args ...string) (io.WriteCloser, *bufio.Reader, *exec.Cmd) {
	t.Helper()
	path, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a failure's bound only
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, path, append([]string{"s_client", "-connect", s.Addr().String()}, args...)...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return in, bufio.NewReader(out), cmd
}

// TestLoopsTLSOpenSSL: openssl s_client talks to the loops (TLS 1.2 and
// 1.3), and a renegotiation it starts is refused with an alert: the
// connection ends, the server goes on.
func TestLoopsTLSOpenSSL(t *testing.T) {
	srv, _ := tlsConfigs(t)
	for _, v := range []string{"-tls1_2", "-tls1_3"} {
		t.Run("echo"+v, func(t *testing.T) {
			closed := make(chan error, 1)
			h := func(c *LoopConn, in []byte) int {
				k := bytes.LastIndexByte(in, '\n') + 1
				c.Write(in[:k])
				if bytes.Contains(in[:k], []byte("bye\n")) {
					c.Close()
				}
				return k
			}
			s := startLoops(t, h, &LoopOptions{TLSConfig: srv, OnClose: func(c *LoopConn, err error) { closed <- err }})
			in, out, _ := opensslClient(t, s, "-quiet", v)
			io.WriteString(in, "hello over openssl\nbye\n")
			got, _ := io.ReadAll(out)
			if string(got) != "hello over openssl\nbye\n" {
				t.Fatalf("openssl s_client read %q", got)
			}
			if err := <-closed; err != nil {
				t.Fatalf("OnClose learned %v", err)
			}
		})
	}
	t.Run("renegotiation", func(t *testing.T) {
		closed := make(chan error, 1)
		s := startLoops(t, lines, &LoopOptions{TLSConfig: srv, OnClose: func(c *LoopConn, err error) { closed <- err }})
		in, out, cmd := opensslClient(t, s, "-tls1_2", "-no_ign_eof")
		io.WriteString(in, "before\n")
		for {
			line, err := out.ReadString('\n')
			if err != nil {
				t.Fatalf("no echo from the server: %v", err)
			}
			if line == "before\n" {
				break
			}
		}
		io.WriteString(in, "R\n") // s_client: renegotiate
		if err := <-closed; !errors.Is(err, ErrTLS) || !strings.Contains(err.Error(), "clientHelloMsg") {
			t.Fatalf("OnClose learned %v after a renegotiation, want ErrTLS (an unexpected ClientHello)", err)
		}
		in.Close()
		io.ReadAll(out)
		cmd.Wait()
		// The server goes on.
		in2, out2, _ := opensslClient(t, s, "-quiet", "-tls1_2")
		io.WriteString(in2, "again\n")
		if line, err := out2.ReadString('\n'); line != "again\n" {
			t.Fatalf("after the renegotiation, a new connection: %q, %v", line, err)
		}
	})
}

// TestLoopsTLSCloseDuringHandshake: Loops.Close with a handshake held in
// a tls.Config callback waits for it, and OnHandshake then OnClose are told.
func TestLoopsTLSCloseDuringHandshake(t *testing.T) {
	srv, cli := tlsConfigs(t)
	entered, release := make(chan struct{}), make(chan struct{})
	srv.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		close(entered)
		<-release
		return nil, nil
	}
	var mu sync.Mutex
	var told []string
	opened := make(chan struct{})
	h := func(c *LoopConn, in []byte) int {
		c.StartTLS(srv)
		close(opened)
		return len(in)
	}
	s := startLoops(t, h, &LoopOptions{
		OnHandshake: func(c *LoopConn, err error) {
			mu.Lock()
			told = append(told, "handshake")
			mu.Unlock()
			if !errors.Is(err, ErrHandshake) {
				t.Errorf("OnHandshake learned %v", err)
			}
		},
		OnClose: func(c *LoopConn, err error) {
			mu.Lock()
			told = append(told, "close")
			mu.Unlock()
			if !errors.Is(err, ErrServerClosed) {
				t.Errorf("OnClose learned %v", err)
			}
		},
	})
	raw := dial(t, s)
	raw.Write([]byte("STARTTLS\n"))
	<-opened
	go tls.Client(raw, cli).Handshake()
	<-entered
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(told, ",") != "handshake,close" {
		t.Fatalf("told %v, want OnHandshake then OnClose", told)
	}
}

// TestLoopsTLSShutdown: Shutdown closes an idle TLS connection with
// close_notify, and lets a handshake in progress finish first, then
// closes its connection too.
func TestLoopsTLSShutdown(t *testing.T) {
	srv, cli := tlsConfigs(t)
	cli.MaxVersion = tls.VersionTLS12 // the close_notify alert is seen as such
	entered, release := make(chan struct{}), make(chan struct{})
	var calls sync.Mutex
	n := 0
	srv.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		calls.Lock()
		n++
		second := n == 2
		calls.Unlock()
		if second {
			close(entered)
			<-release
		}
		return nil, nil
	}
	handshakes := make(chan error, 2)
	s := startLoops(t, echo, &LoopOptions{TLSConfig: srv, OnHandshake: func(c *LoopConn, err error) { handshakes <- err }})
	idle, tap := dialTLS(t, s, cli)
	if err := <-handshakes; err != nil {
		t.Fatal(err)
	}
	late := tls.Client(dial(t, s), cli)
	lateDone := make(chan error, 1)
	go func() { lateDone <- late.Handshake() }()
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	if _, err := io.ReadAll(idle); err != nil {
		t.Fatalf("the idle connection: %v", err)
	}
	if types := records(tap.taken()); len(types) == 0 || types[len(types)-1] != 21 {
		t.Errorf("the idle connection's records: %v, want the last close_notify (21)", types)
	}
	close(release)
	if err := <-lateDone; err != nil {
		t.Fatalf("the handshake in progress at Shutdown: %v", err)
	}
	if err := <-handshakes; err != nil {
		t.Fatalf("OnHandshake: %v", err)
	}
	if _, err := io.ReadAll(late); err != nil {
		t.Fatalf("after its handshake: %v", err)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestLoopsTLSIdleTimeout: the idle timeout works over TLS, and
// OnTimeout's farewell is sealed and followed by close_notify.
func TestLoopsTLSIdleTimeout(t *testing.T) {
	srv, cli := tlsConfigs(t)
	cli.MaxVersion = tls.VersionTLS12 // the close_notify alert is seen as such
	clk := newFakeClock()
	closed := make(chan error, 1)
	opt := &LoopOptions{Loops: 1, TLSConfig: srv, IdleTimeout: time.Minute,
		OnTimeout: func(c *LoopConn, err error) { c.WriteString("421 idle\n") },
		OnClose:   func(c *LoopConn, err error) { closed <- err }}
	SetLoopClock(opt, clk.Now)
	s := startLoops(t, lines, opt)
	tc, tap := dialTLS(t, s, cli)
	r := bufio.NewReader(tc)
	tc.Write([]byte("x\n"))
	if line, err := r.ReadString('\n'); line != "x\n" {
		t.Fatalf("echo: %q, %v", line, err)
	}
	tap.taken()
	clk.advance(s, 2*time.Minute)
	if line, err := r.ReadString('\n'); line != "421 idle\n" {
		t.Fatalf("farewell: %q, %v", line, err)
	}
	if _, err := r.ReadByte(); err != io.EOF {
		t.Fatalf("after the farewell: %v, want EOF", err)
	}
	if types := records(tap.taken()); len(types) != 2 || types[0] != 23 || types[1] != 21 {
		t.Errorf("records after the timeout: %v, want the farewell (23) and close_notify (21)", types)
	}
	if err := <-closed; !errors.Is(err, ErrIdleTimeout) {
		t.Errorf("OnClose learned %v, want ErrIdleTimeout", err)
	}
}

// TestLoopsTLSBackpressure: over TLS too, a peer that stops reading stops
// being read: the Handler is not called while output waits, and all of
// 8 MB comes back exactly.
func TestLoopsTLSBackpressure(t *testing.T) {
	srv, cli := tlsConfigs(t)
	var (
		mu        sync.Mutex
		readWhile bool
	)
	blocked := make(chan struct{})
	var once sync.Once
	opt := &LoopOptions{TLSConfig: srv}
	SetSentHook(opt, func(out, written int) {
		if written < out {
			once.Do(func() { close(blocked) })
		}
	})
	h := func(c *LoopConn, in []byte) int {
		mu.Lock()
		readWhile = readWhile || c.Pending() > 0
		mu.Unlock()
		return echo(c, in)
	}
	s := startLoops(t, h, opt)
	tc := tls.Client(dialSmallWindow(t, s), cli)
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	_, all := messages(9, 4000, 4000)
	done := make(chan error, 1)
	go func() {
		_, err := tc.Write(all)
		tc.CloseWrite()
		done <- err
	}()
	<-blocked // the socket to the peer is full: the loop waits for room
	got, err := io.ReadAll(tc)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, all) {
		t.Fatalf("echoed %d bytes, want %d", len(got), len(all))
	}
	mu.Lock()
	defer mu.Unlock()
	if readWhile {
		t.Error("the Handler was called while the connection had output waiting")
	}
}

// TestLoopsTLSUnix: implicit TLS on a Unix domain socket.
func TestLoopsTLSUnix(t *testing.T) {
	srv, cli := tlsConfigs(t)
	ln := listenUnix(t)
	path := ln.Addr().String()
	s, err := Serve(ln, lines, &LoopOptions{TLSConfig: srv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c, err := tls.Dial("unix", path, cli)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("over a unix socket\n"))
	if line, err := bufio.NewReader(c).ReadString('\n'); line != "over a unix socket\n" {
		t.Fatalf("echo %q, %v", line, err)
	}
}

// TestLoopsTLSHandshakeHeldIdle: the idle timeout does not count while a
// full handshake holds the reading (the peer is held back, not idle), as
// it does not while SetReading(false) holds it; once the handshake is
// over the connection is served, and idle counts again.
func TestLoopsTLSHandshakeHeldIdle(t *testing.T) {
	const size = 4 * MaxHandshakeInput
	hs := newHeldServer(t)
	ps := newPatternSink()
	clk := newFakeClock()
	handshakes := make(chan error, 1)
	opt := &LoopOptions{Loops: 1, TLSConfig: hs.srv, HandshakeTimeout: -1, IdleTimeout: time.Second,
		OnHandshake: func(c *LoopConn, err error) { handshakes <- err }}
	SetLoopClock(opt, clk.Now)
	held := newHeldHook(opt)
	s := startLoops(t, ps.handle, opt)
	_, wrote := hs.flood(t, dial(t, s), size)
	if !held.wait(s) {
		t.Fatalf("the connection was closed with its handshake held: stats %+v", s.Stats())
	}
	c := firstConn(s)
	clk.advance(s, 3*time.Second) // three idle timeouts, the handshake full
	closing := make(chan error, 1)
	if err := c.Do(func(c *LoopConn) { closing <- c.closeErr }); err != nil {
		t.Fatalf("closed while its handshake held the reading: %v", err)
	}
	if err := <-closing; err != nil {
		t.Fatalf("closed while its handshake held the reading: %v", err)
	}
	hs.release()
	if err := <-handshakes; err != nil {
		t.Fatalf("OnHandshake learned %v", err)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("the client's write: %v", err)
	}
	if r := <-ps.done; r.got != size || r.bad >= 0 {
		t.Fatalf("the Handler got %d bytes of %d, first wrong at %d", r.got, size, r.bad)
	}
	if st := s.Stats(); st.Closed.Idle != 0 {
		t.Errorf("stats %+v", st)
	}
}

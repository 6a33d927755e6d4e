package smtpsink

import (
	"bufio"
	"io"
	"log"
	"net"
	nettextproto "net/textproto"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/wirespeed/wirespeed/netio"
)

// testEngine is the engine startSink's servers run on, unless a test
// sets one: the environment's SMTPSINK_TEST_ENGINE, or the default.
// CI runs the package's tests on each engine. It is read as a test runs,
// so that go test's cache keys its results on it.
func testEngine() Engine { return Engine(os.Getenv("SMTPSINK_TEST_ENGINE")) }

// quiet keeps accept errors out of the test output.
var quiet = log.New(io.Discard, "", 0)

// startSink listens on 127.0.0.1:0 and serves until the test ends.
func startSink(t testing.TB, cfg Config, h hooks) *Server {
	t.Helper()
	return startSinkPrepared(t, cfg, h, nil)
}

// startSinkPrepared is startSink that calls prepare, if not nil, with
// the listener before Serve takes it (and, on some engines, closes it
// for a duplicate).
func startSinkPrepared(t testing.TB, cfg Config, h hooks, prepare func(net.Listener) error) *Server {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	if cfg.Engine == "" {
		cfg.Engine = testEngine()
	}
	if cfg.ErrorLog == nil {
		cfg.ErrorLog = quiet
	}
	s, err := listen(t.Context(), cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		if err := prepare(s.ln); err != nil {
			s.Close()
			t.Fatal(err)
		}
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

// client is the standard library's net/textproto on a connection to the
// sink: an implementation nobody here wrote.
type client struct {
	t *testing.T
	*nettextproto.Conn
	raw net.Conn
}

func dial(t *testing.T, s *Server) *client {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cl := &client{t: t, Conn: nettextproto.NewConn(c), raw: c}
	cl.expect(220)
	return cl
}

// expect reads one reply (all its lines) and checks its code.
func (c *client) expect(code int) string {
	c.t.Helper()
	got, msg, err := c.ReadResponse(0)
	if err != nil && got == 0 {
		c.t.Fatalf("want %d: %v", code, err)
	}
	if got != code {
		c.t.Fatalf("got %d %s, want %d", got, msg, code)
	}
	return msg
}

// cmd sends a command line and checks its reply's code.
func (c *client) cmd(code int, line string) string {
	c.t.Helper()
	if err := c.PrintfLine("%s", line); err != nil {
		c.t.Fatal(err)
	}
	return c.expect(code)
}

// deliver sends n one-line messages from a@b to rcpt, each accepted.
func (c *client) deliver(n int, rcpt string) {
	for range n {
		c.cmd(250, "MAIL FROM:<a@b>")
		c.cmd(250, "RCPT TO:<"+rcpt+">")
		c.cmd(354, "DATA")
		c.cmd(250, "x\r\n.")
	}
}

// send writes raw bytes.
func (c *client) send(s string) {
	c.t.Helper()
	if _, err := c.W.WriteString(s); err != nil {
		c.t.Fatal(err)
	}
	if err := c.W.Flush(); err != nil {
		c.t.Fatal(err)
	}
}

// codes reads n replies and returns their codes, space-separated.
func (c *client) codes(n int) string {
	c.t.Helper()
	var b strings.Builder
	for i := range n {
		code, msg, err := c.ReadResponse(0)
		if code == 0 {
			c.t.Fatalf("reply %d of %d: %v", i+1, n, err)
		}
		_ = msg
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(itoa(code))
	}
	return b.String()
}

func itoa(n int) string {
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}

// messages collects what OnMessage reports.
type messages struct {
	mu sync.Mutex
	ms []Message
}

func (m *messages) add(msg Message) {
	m.mu.Lock()
	m.ms = append(m.ms, msg)
	m.mu.Unlock()
}

func (m *messages) all() []Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Message(nil), m.ms...)
}

// writeLog is a connection whose Writes are recorded, one entry per
// Write: what the sink sent in each system call.
type writeLog struct {
	net.Conn
	mu     sync.Mutex
	writes []string
	reads  int
}

func (w *writeLog) Read(p []byte) (int, error) {
	w.mu.Lock()
	w.reads++
	w.mu.Unlock()
	return w.Conn.Read(p)
}

func (w *writeLog) counts() (reads, writes int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reads, len(w.writes)
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes = append(w.writes, string(p))
	w.mu.Unlock()
	return w.Conn.Write(p)
}

func (w *writeLog) log() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.writes...)
}

// pipeSession serves one session on net.Pipe, which hands each Write to
// a single Read: a group written at once arrives in one read, so the
// replies' writes can be counted exactly. It returns the client's end and
// the log of the sink's writes.
func pipeSession(t *testing.T, cfg Config, h hooks) (net.Conn, *bufio.Reader, *writeLog) {
	t.Helper()
	cfg.ErrorLog = quiet
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	cfg = cfg.withDefaults()
	s := newServer(cfg, h)
	cli, srv := net.Pipe()
	wl := &writeLog{Conn: srv}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.serveConn(wl, nil)
	}()
	t.Cleanup(func() {
		cli.Close()
		<-done
	})
	br := bufio.NewReader(cli)
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "220 ") {
		t.Fatalf("greeting %q, %v", line, err)
	}
	return cli, br, wl
}

func nettextprotoDial(s *Server) (*nettextproto.Conn, error) {
	return nettextproto.Dial("tcp", s.Addr().String())
}

// wakeLoops has the loop of every live session of the loops engine go
// round once, reading its clock (a fake one, moved by the test).
func (s *Server) wakeLoops() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ls := range s.live {
		ls.c.Do(func(*netio.LoopConn) {})
	}
}

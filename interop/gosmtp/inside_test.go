package gosmtp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/emersion/go-smtp"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/textproto"
)

// go-smtp has no hook for the reader of its DATA payload (it reads it a
// byte at a time from its connection's bufio.Reader), so wirespeed goes
// inside go-smtp on the connection: dataConn is the net.Conn go-smtp's
// server is given. It hands go-smtp one command line per Read, so that
// go-smtp never holds input beyond the line it is handling. Once go-smtp
// has written its 354 reply, dataConn's next Read reads the whole block
// with wirespeed's textproto DotReaderWith (Raw with dot.BareKeep, which is
// go-smtp's own framing), gives the message to the data function, and hands
// go-smtp an empty block (".\r\n"); the Session's Data returns the data
// function's error, which go-smtp turns into the reply. go-smtp still runs
// the whole session: greeting, commands, replies, limits on commands, the
// reply to DATA.
type dataConn struct {
	net.Conn
	br      *bufio.Reader
	r       *textproto.Reader
	opts    textproto.DotOptions
	data    func(io.Reader) error
	inData  bool   // go-smtp has written 354 and reads the block next
	pending []byte // the rest of a line, or the empty block
	err     error  // the data function's error, for Session.Data
}

func newDataConn(c net.Conn, maxBytes int64, data func(io.Reader) error) *dataConn {
	br := bufio.NewReaderSize(c, 64<<10)
	return &dataConn{
		Conn: c, br: br, r: textproto.NewReader(br), data: data,
		opts: textproto.DotOptions{Mode: dot.Raw, Bare: dot.BareKeep, MaxBytes: maxBytes},
	}
}

var emptyBlock = []byte(".\r\n")

func (c *dataConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	if c.inData {
		c.inData = false
		dr := c.r.DotReaderWith(c.opts)
		c.err = c.data(dr)
		// Read the block to its end whatever the data function did, so
		// that the session stays in step, as go-smtp does after Data.
		if _, err := io.Copy(io.Discard, dr); err != nil && c.err == nil {
			c.err = err
		}
		if errors.Is(c.err, io.ErrUnexpectedEOF) || errors.Is(c.err, net.ErrClosed) {
			return 0, c.err
		}
		n := copy(p, emptyBlock)
		c.pending = emptyBlock[n:]
		return n, nil
	}
	line, err := c.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		err = nil
	}
	n := copy(p, line)
	if n < len(line) {
		c.pending = append(c.pending[:0], line[n:]...)
	}
	if n > 0 {
		return n, nil
	}
	return 0, err
}

func (c *dataConn) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, []byte("354 ")) {
		c.inData = true
	}
	return c.Conn.Write(p)
}

// dataErr is Session.Data's error for the data function's: go-smtp's own
// for a message over the size limit, so that the reply is go-smtp's 552.
func (c *dataConn) dataErr() error {
	if errors.Is(c.err, dot.ErrTooLarge) {
		return smtp.ErrDataTooLarge
	}
	return c.err
}

// insideListener gives go-smtp a dataConn for each connection it accepts.
type insideListener struct {
	net.Listener
	maxBytes int64
	data     func(io.Reader) error
}

func (l insideListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newDataConn(c, l.maxBytes, l.data), nil
}

// An insideSession takes every message into data: from go-smtp's DATA
// reader on a stock server, from dataConn's on a wirespeed one.
type insideSession struct {
	conn net.Conn
	data func(io.Reader) error
}

func (s *insideSession) Reset()                                         {}
func (s *insideSession) Logout() error                                  { return nil }
func (s *insideSession) Mail(from string, opts *smtp.MailOptions) error { return nil }
func (s *insideSession) Rcpt(to string, opts *smtp.RcptOptions) error   { return nil }

func (s *insideSession) Data(r io.Reader) error {
	if c, ok := s.conn.(*dataConn); ok {
		// wirespeed has read the message; go-smtp's reader holds the
		// empty block.
		if _, err := io.Copy(io.Discard, r); err != nil {
			return err
		}
		return c.dataErr()
	}
	return s.data(r)
}

// pipeListener is a listener for net.Pipe connections: dial makes one.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial() (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// startInside starts a go-smtp server, on 127.0.0.1:0 (network "tcp") or
// on net.Pipe connections ("pipe"), whose sessions give each message to
// data: read by go-smtp itself (impl "gosmtp") or by wirespeed inside it
// (impl "wirespeed"). It returns a function that opens a connection to it.
func startInside(tb testing.TB, network, impl string, maxBytes int64, data func(io.Reader) error) func() (net.Conn, error) {
	tb.Helper()
	var ln net.Listener
	var dial func() (net.Conn, error)
	switch network {
	case "tcp":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		ln, dial = l, func() (net.Conn, error) { return net.Dial("tcp", l.Addr().String()) }
	case "pipe":
		l := newPipeListener()
		ln, dial = l, l.dial
	default:
		tb.Fatalf("network %q", network)
	}
	var l net.Listener = ln
	switch impl {
	case "gosmtp":
	case "wirespeed":
		l = insideListener{Listener: ln, maxBytes: maxBytes, data: data}
	default:
		tb.Fatalf("impl %q", impl)
	}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &insideSession{conn: c.Conn(), data: data}, nil
	}))
	srv.Domain = "gosmtp.test"
	srv.MaxMessageBytes = maxBytes
	srv.MaxLineLength = 0
	srv.ErrorLog = &logRecorder{}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	tb.Cleanup(func() {
		srv.Close()
		if err := <-served; err != nil && !errors.Is(err, smtp.ErrServerClosed) {
			tb.Errorf("go-smtp Serve: %v", err)
		}
	})
	return dial
}

// An smtpClient speaks to a server as a pipelining SMTP client that has
// its messages dot-encoded already.
type smtpClient struct {
	c  net.Conn
	br *bufio.Reader
}

func dialSMTP(tb testing.TB, dial func() (net.Conn, error)) *smtpClient {
	tb.Helper()
	c, err := dial()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	cl := &smtpClient{c: c, br: bufio.NewReader(c)}
	if _, err := cl.reply(220); err != nil {
		tb.Fatal(err)
	}
	if _, err := io.WriteString(c, "EHLO client.test\r\n"); err != nil {
		tb.Fatal(err)
	}
	if _, err := cl.reply(250); err != nil {
		tb.Fatal(err)
	}
	return cl
}

// reply reads one reply, all its lines, and fails unless its code is
// want; it returns the last line.
func (cl *smtpClient) reply(want int) (string, error) {
	for {
		line, err := cl.br.ReadString('\n')
		if err != nil {
			return "", err
		}
		if len(line) < 4 {
			return "", fmt.Errorf("malformed reply %q", line)
		}
		code, err := strconv.Atoi(line[:3])
		if err != nil {
			return "", fmt.Errorf("malformed reply %q", line)
		}
		if line[3] == '-' {
			continue
		}
		if code != want {
			return line, fmt.Errorf("reply %q, want %d", line, want)
		}
		return line, nil
	}
}

var envelope = []byte("MAIL FROM:<sender@client.test>\r\nRCPT TO:<rcpt@gosmtp.test>\r\nDATA\r\n")

// send sends one message, encoded: the envelope and DATA in one write (the
// server offers PIPELINING), the payload after the 354, and returns the
// reply to the payload.
func (cl *smtpClient) send(encoded []byte, want int) error {
	if _, err := cl.c.Write(envelope); err != nil {
		return err
	}
	for _, code := range []int{250, 250, 354} {
		if _, err := cl.reply(code); err != nil {
			return err
		}
	}
	if _, err := cl.c.Write(encoded); err != nil {
		return err
	}
	_, err := cl.reply(want)
	return err
}

// benchMessage returns a mail-like message of size bytes (CRLF lines of 20
// to 78 letters, one line in 50 starting with a dot) and its DATA payload,
// dot-stuffed and ended by the end line. The letters come from a fixed
// seed.
func benchMessage(size int) (msg, encoded []byte) {
	x := uint32(2463534242)
	next := func(n uint32) int {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		return int(x % n)
	}
	for len(msg) < size {
		n := 20 + next(59)
		if next(50) == 0 {
			msg = append(msg, '.')
			n--
		}
		for range n {
			msg = append(msg, byte('a'+next(26)))
		}
		msg = append(msg, '\r', '\n')
	}
	msg = msg[:size]
	msg[size-2], msg[size-1] = '\r', '\n'
	for line := range bytes.Lines(msg) {
		if line[0] == '.' {
			encoded = append(encoded, '.')
		}
		encoded = append(encoded, line...)
	}
	encoded = append(encoded, emptyBlock...)
	return msg, encoded
}

// The bodies go-smtp's sessions get are the same, whether go-smtp reads
// the DATA payload itself or wirespeed does inside it: the payloads on
// which go-smtp and wirespeed's Raw BareKeep decoder agree (the hand-written
// corpus) and the benchmark's messages; a message over go-smtp's size limit
// gets go-smtp's 552 either way; after each message the session is in
// step (the next command gets its reply).
func TestInsideSameMessages(t *testing.T) {
	type got struct {
		mu     sync.Mutex
		bodies [][]byte
	}
	payloads := map[string][]byte{}
	for _, p := range handPayloads() {
		// Those that end the block at their last byte, and only there.
		end := "\r\n.\r\n"
		if p.want == same && strings.Index(p.data, end) == len(p.data)-len(end) && !strings.HasPrefix(p.data, ".\r\n") {
			payloads[p.name] = []byte(p.data)
		}
	}
	var msgs [][]byte
	for _, size := range []int{4 << 10, 1 << 20} {
		msg, enc := benchMessage(size)
		payloads[fmt.Sprintf("bench/%d", size)] = enc
		msgs = append(msgs, msg)
	}
	t.Logf("%d payloads", len(payloads))
	if len(payloads) < 10 {
		t.Fatalf("only %d payloads", len(payloads))
	}
	const maxBytes = 2 << 20
	impls := []string{"gosmtp", "wirespeed"}
	results := map[string]*got{}
	clients := map[string]*smtpClient{}
	for _, impl := range impls {
		g := &got{}
		results[impl] = g
		dial := startInside(t, "tcp", impl, maxBytes, func(r io.Reader) error {
			b, err := io.ReadAll(r)
			g.mu.Lock()
			g.bodies = append(g.bodies, b)
			g.mu.Unlock()
			return err
		})
		clients[impl] = dialSMTP(t, dial)
	}
	for name, payload := range payloads {
		for _, impl := range impls {
			cl := clients[impl]
			if err := cl.send(payload, 250); err != nil {
				t.Fatalf("%s: %s: %v", impl, name, err)
			}
			if _, err := io.WriteString(cl.c, "NOOP\r\n"); err != nil {
				t.Fatal(err)
			}
			if _, err := cl.reply(250); err != nil {
				t.Fatalf("%s: %s: NOOP after the message: %v", impl, name, err)
			}
		}
		a, b := results["gosmtp"], results["wirespeed"]
		if len(a.bodies) != len(b.bodies) || len(a.bodies) == 0 {
			t.Fatalf("%s: %d messages on go-smtp, %d with wirespeed inside", name, len(a.bodies), len(b.bodies))
		}
		ga, gb := a.bodies[len(a.bodies)-1], b.bodies[len(b.bodies)-1]
		if !bytes.Equal(ga, gb) {
			t.Errorf("%s: go-smtp kept %s, with wirespeed inside %s", name, q(ga), q(gb))
		}
	}
	// The benchmark's messages arrive as they were before encoding.
	for _, impl := range impls {
		for _, msg := range msgs {
			found := false
			for _, b := range results[impl].bodies {
				found = found || bytes.Equal(b, msg)
			}
			if !found {
				t.Errorf("%s: the %d-byte benchmark message did not arrive intact", impl, len(msg))
			}
		}
	}
	// Over the size limit: go-smtp's 552, and the session in step.
	_, big := benchMessage(maxBytes + 4096)
	for _, impl := range impls {
		cl := clients[impl]
		if err := cl.send(big, 552); err != nil {
			t.Errorf("%s: %d bytes over a %d-byte limit: %v", impl, len(big), maxBytes, err)
		}
		if err := cl.send(payloads["bench/4096"], 250); err != nil {
			t.Errorf("%s: the message after the refused one: %v", impl, err)
		}
	}
}

// BenchmarkGoSMTPData sends messages of 4 KiB and 1 MiB, one after the
// other on one connection, over loopback TCP (net=tcp) or net.Pipe
// (net=pipe, no kernel in the way), to a go-smtp server whose session
// reads each into io.Discard: impl=gosmtp is go-smtp as it ships (its DATA
// reader, a byte at a time from its bufio.Reader), impl=wirespeed is the
// same server with wirespeed's textproto reading the DATA payload inside it
// (dataConn). Each op is one whole transaction (MAIL, RCPT and DATA
// pipelined, the 354, the payload, the 250), so the ratio is of what a
// client sees; the client is the same for both. benchstat -col /impl gives
// the ratio.
func BenchmarkGoSMTPData(b *testing.B) {
	for _, network := range []string{"tcp", "pipe"} {
		for _, size := range []int{4 << 10, 1 << 20} {
			msg, enc := benchMessage(size)
			for _, impl := range []string{"gosmtp", "wirespeed"} {
				b.Run(fmt.Sprintf("net=%s/size=%s/impl=%s", network, sizeName(size), impl), func(b *testing.B) {
					var n atomic.Int64
					dial := startInside(b, network, impl, 0, func(r io.Reader) error {
						m, err := io.Copy(io.Discard, r)
						n.Add(m)
						return err
					})
					cl := dialSMTP(b, dial)
					b.SetBytes(int64(len(msg)))
					b.ReportAllocs()
					ops := int64(0)
					for b.Loop() {
						if err := cl.send(enc, 250); err != nil {
							b.Fatal(err)
						}
						ops++
					}
					b.StopTimer()
					// The 250 comes after Data returned: n is complete.
					if got := n.Load(); got != ops*int64(len(msg)) {
						b.Fatalf("the server read %d bytes of messages, want %d", got, ops*int64(len(msg)))
					}
				})
			}
		}
	}
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprint(n)
}

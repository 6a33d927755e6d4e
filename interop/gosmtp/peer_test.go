package gosmtp

import (
	"bufio"
	"fmt"
	"io"
	"net"
	nettextproto "net/textproto"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/emersion/go-smtp"
)

// closer follows a payload that go-smtp has read to its end without ending
// the block. Whatever state a payload leaves either decoder in, "Z" starts or
// continues a line of data (after a lone "." it is an unstuffed "Z"; after a
// pending CR it makes that CR bare), so each of them ends the block exactly
// at the end of closer.
const closer = "Z\r\n.\r\n"

// followUp is sent after a block that ended exactly where the sent bytes do:
// both replies show that the server reads commands again.
const followUp = "RSET\r\nQUIT\r\n"

// A message is what a go-smtp Session.Data call read.
type message struct {
	body []byte
	err  error
}

// An event happens on a go-smtp connection's goroutine while an exchange is
// armed: go-smtp asked for input it had not been sent (starved), or it wrote
// a reply.
type event struct {
	starved bool
	off     int64  // bytes handed to go-smtp when the event happened
	line    string // the reply, when !starved
	msgs    int    // Session.Data calls made before the reply
}

// meteredConn is the server's end of a connection. It hands go-smtp at most
// chunk(i) bytes in its i-th Read, so with chunks of one byte go-smtp's
// bufio.Reader never holds a byte go-smtp has not used, and counts the bytes
// handed over. While armed, it reports on events the first reply written
// and a Read that finds nothing to hand over after exactly watch bytes.
type meteredConn struct {
	net.Conn
	chunk atomic.Pointer[func(i int) int]

	// Used only on go-smtp's connection goroutine.
	buf       []byte
	pending   []byte
	err       error
	reads     int
	delivered int64

	armed  atomic.Bool
	watch  atomic.Int64
	events chan event

	mu   sync.Mutex
	msgs []message
}

func newMeteredConn(c net.Conn) *meteredConn {
	m := &meteredConn{Conn: c, buf: make([]byte, 64<<10), events: make(chan event, 2)}
	m.watch.Store(-1)
	return m
}

func (m *meteredConn) Read(p []byte) (int, error) {
	if len(m.pending) == 0 {
		if m.err != nil {
			return 0, m.err
		}
		if m.delivered == m.watch.Load() && m.watch.CompareAndSwap(m.delivered, -1) {
			m.events <- event{starved: true, off: m.delivered}
		}
		n, err := m.Conn.Read(m.buf)
		m.pending, m.err = m.buf[:n], err
		if n == 0 {
			return 0, err
		}
	}
	n := len(p)
	if f := m.chunk.Load(); f != nil {
		n = min(n, max(1, (*f)(m.reads)))
	}
	m.reads++
	n = copy(p[:n], m.pending)
	m.pending = m.pending[n:]
	m.delivered += int64(n)
	return n, nil
}

func (m *meteredConn) Write(p []byte) (int, error) {
	if m.armed.CompareAndSwap(true, false) {
		m.watch.Store(-1)
		m.mu.Lock()
		n := len(m.msgs)
		m.mu.Unlock()
		m.events <- event{off: m.delivered, line: string(p), msgs: n}
	}
	return m.Conn.Write(p)
}

// arm starts watching for go-smtp to want input after watch bytes and for
// its next reply.
func (m *meteredConn) arm(watch int64) {
	m.watch.Store(watch)
	m.armed.Store(true)
}

func (m *meteredConn) record(msg message) {
	m.mu.Lock()
	m.msgs = append(m.msgs, msg)
	m.mu.Unlock()
}

func (m *meteredConn) messages() []message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]message(nil), m.msgs...)
}

// session records every message body it is given, read to the end.
type session struct{ conn *meteredConn }

func (s *session) Reset()                                         {}
func (s *session) Logout() error                                  { return nil }
func (s *session) Mail(from string, opts *smtp.MailOptions) error { return nil }
func (s *session) Rcpt(to string, opts *smtp.RcptOptions) error   { return nil }

func (s *session) Data(r io.Reader) error {
	body, err := io.ReadAll(r)
	s.conn.record(message{body: body, err: err})
	return err
}

// listener hands go-smtp meteredConns and the tests the same meteredConns,
// found by the client's address (TCP) or created with the pipe (net.Pipe).
type listener struct {
	net.Listener // nil for net.Pipe

	pipes  chan net.Conn
	closed chan struct{}
	once   sync.Once

	mu     sync.Mutex
	byAddr map[string]chan *meteredConn
}

func (l *listener) slot(addr string) chan *meteredConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch, ok := l.byAddr[addr]
	if !ok {
		ch = make(chan *meteredConn, 1)
		l.byAddr[addr] = ch
	}
	return ch
}

func (l *listener) Accept() (net.Conn, error) {
	if l.Listener == nil {
		select {
		case c := <-l.pipes:
			return c, nil
		case <-l.closed:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	m := newMeteredConn(c)
	l.slot(c.RemoteAddr().String()) <- m
	return m, nil
}

func (l *listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	if l.Listener == nil {
		return nil
	}
	return l.Listener.Close()
}

func (l *listener) Addr() net.Addr {
	if l.Listener == nil {
		return pipeAddr{}
	}
	return l.Listener.Addr()
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// A peer is a running go-smtp server.
type peer struct {
	srv *smtp.Server
	lst *listener
}

// serverOption adjusts the go-smtp server before it starts.
type serverOption func(*smtp.Server)

// startPeer starts a go-smtp server on 127.0.0.1:0, or on net.Pipe
// connections if pipe is set. Its line length limit is off unless an option
// sets it, so that long lines reach the data reader.
func startPeer(tb testing.TB, pipe bool, opts ...serverOption) *peer {
	tb.Helper()
	lst := &listener{closed: make(chan struct{}), byAddr: map[string]chan *meteredConn{}}
	if pipe {
		lst.pipes = make(chan net.Conn)
	} else {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		lst.Listener = l
	}
	log := &logRecorder{}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		m, ok := c.Conn().(*meteredConn)
		if !ok {
			return nil, fmt.Errorf("connection of type %T", c.Conn())
		}
		return &session{conn: m}, nil
	}))
	srv.Domain = "gosmtp.test"
	srv.MaxLineLength = 0
	srv.ErrorLog = log
	for _, o := range opts {
		o(srv)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lst) }()
	tb.Cleanup(func() {
		srv.Close()
		if err := <-served; err != nil {
			tb.Errorf("go-smtp Serve: %v", err)
		}
		if tb.Failed() {
			for _, m := range log.messages() {
				tb.Logf("go-smtp log: %s", m)
			}
		}
	})
	return &peer{srv: srv, lst: lst}
}

// dial opens a client connection and returns it with the server's end.
func (p *peer) dial(tb testing.TB) (net.Conn, *meteredConn) {
	tb.Helper()
	if p.lst.Listener == nil {
		client, server := net.Pipe()
		m := newMeteredConn(server)
		select {
		case p.lst.pipes <- m:
		case <-p.lst.closed:
			tb.Fatal("go-smtp server closed")
		}
		return client, m
	}
	c, err := net.Dial("tcp", p.lst.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	return c, <-p.lst.slot(c.LocalAddr().String())
}

// logRecorder keeps go-smtp's log so that the test can show it.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Printf(format string, v ...any) { l.add(fmt.Sprintf(format, v...)) }
func (l *logRecorder) Println(v ...any)               { l.add(fmt.Sprintln(v...)) }

func (l *logRecorder) add(s string) {
	l.mu.Lock()
	l.msgs = append(l.msgs, strings.TrimSuffix(s, "\n"))
	l.mu.Unlock()
}

func (l *logRecorder) messages() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

// transfer says how a payload travels.
type transfer struct {
	// serverChunk bounds each Read go-smtp makes; nil leaves Reads whole.
	// With one byte a Read, the DATA reply's offset is exactly where
	// go-smtp ended the block.
	serverChunk func(i int) int
	// clientChunk splits the payload into separate writes; nil writes it
	// whole.
	clientChunk func(i int) int
	// followUp sends followUp after the DATA reply when the block ended
	// where the sent bytes do: at followUpAt, or, if that is negative, at
	// the DATA reply's offset, which is exact only with one-byte Reads.
	followUp   bool
	followUpAt int64
	// pipeline sends followUp right behind the payload, without waiting
	// for the DATA reply, as a client pipelining commands may: only for a
	// payload known to end its block at its last byte.
	pipeline bool
}

// A transcript is what a go-smtp server did with one DATA payload.
type transcript struct {
	// sent is everything sent after the 354 reply and before followUp:
	// the payload, and closer if go-smtp wanted more.
	sent       []byte
	closerSent bool
	// end is the number of bytes of sent go-smtp had read when it replied
	// to DATA: where it ended the block, if it read a byte at a time.
	end       int64
	dataReply string
	// msgs are the Session.Data calls, in order.
	msgs []message
	// after are the replies to followUp, if it was sent.
	after []string
}

func (t transcript) String() string {
	return fmt.Sprintf("sent %s (closer %v), DATA reply %q after %d bytes, messages %v, then %q",
		q(t.sent), t.closerSent, t.dataReply, t.end, t.msgs, t.after)
}

func (m message) String() string { return fmt.Sprintf("{%s %v}", q(m.body), m.err) }

// A client is the test's end of a connection to go-smtp, after MAIL and
// RCPT.
type client struct {
	tb   testing.TB
	c    net.Conn
	m    *meteredConn
	w    *asyncWriter
	r    *nettextproto.Reader
	sent int64 // bytes sent on the connection so far
}

// open dials go-smtp, sets how it reads (see transfer.serverChunk) and
// starts a transaction with EHLO, MAIL (with mailParams, if any) and RCPT.
func (p *peer) open(tb testing.TB, serverChunk func(int) int, mailParams string) *client {
	tb.Helper()
	c, m := p.dial(tb)
	if serverChunk != nil {
		m.chunk.Store(&serverChunk)
	}
	cl := &client{tb: tb, c: c, m: m, w: newAsyncWriter(c), r: nettextproto.NewReader(bufio.NewReader(c))}
	cl.expect("", 220)
	cl.expect("EHLO client.test", 250)
	cl.expect("MAIL FROM:<from@client.test>"+mailParams, 250)
	cl.expect("RCPT TO:<to@gosmtp.test>", 250)
	return cl
}

// close closes the connection and waits for the writer.
func (cl *client) close() {
	cl.c.Close()
	cl.w.wait()
}

// send writes b in pieces of chunk(i) bytes, or whole if chunk is nil.
func (cl *client) send(b []byte, chunk func(int) int) {
	for i := 0; len(b) > 0; i++ {
		n := len(b)
		if chunk != nil {
			n = min(n, max(1, chunk(i)))
		}
		cl.w.write(b[:n])
		cl.sent += int64(n)
		b = b[n:]
	}
}

// expect sends cmd, unless it is empty, and reads a reply with code.
func (cl *client) expect(cmd string, code int) {
	cl.tb.Helper()
	if cmd != "" {
		cl.send([]byte(cmd+"\r\n"), nil)
	}
	if _, _, err := cl.r.ReadResponse(code); err != nil {
		cl.tb.Fatalf("go-smtp: %q: %v", cmd, err)
	}
}

// readLine reads one reply line.
func (cl *client) readLine(what string) string {
	cl.tb.Helper()
	line, err := cl.r.ReadLine()
	if err != nil {
		cl.tb.Fatalf("go-smtp: reading the reply to %s: %v", what, err)
	}
	return line
}

// exchange sends one message with payload as its DATA to go-smtp and
// records what happened.
func (p *peer) exchange(tb testing.TB, payload []byte, tr transfer) transcript {
	tb.Helper()
	cl := p.open(tb, tr.serverChunk, "")
	defer cl.close()
	m := cl.m
	send := cl.send
	cl.expect("DATA", 354)

	var t transcript
	start := cl.sent
	var ev event
	switch {
	case tr.pipeline:
		m.arm(-1)
		send(append(slices.Clip(payload), followUp...), tr.clientChunk)
		t.sent = append(t.sent, payload...)
		ev = <-m.events
	case len(payload) > 0:
		m.arm(start + int64(len(payload)))
		send(payload, tr.clientChunk)
		t.sent = append(t.sent, payload...)
		ev = <-m.events
	default:
		// go-smtp is already waiting for data: it cannot have ended the
		// block in no bytes.
		m.arm(-1)
		ev.starved = true
	}
	if ev.starved {
		t.closerSent = true
		send([]byte(closer), tr.clientChunk)
		t.sent = append(t.sent, closer...)
		ev = <-m.events
		if ev.starved {
			tb.Fatalf("go-smtp wants more data after %s", q(t.sent))
		}
	}
	t.end = ev.off - start
	line := cl.readLine("DATA")
	if line+"\r\n" != ev.line {
		tb.Fatalf("go-smtp wrote %q but the client read %q", ev.line, line)
	}
	t.dataReply = line
	// Only the messages before the reply: go-smtp may take more from
	// the bytes after the block.
	t.msgs = m.messages()[:ev.msgs]

	at := tr.followUpAt
	if at < 0 {
		at = t.end
	}
	if tr.pipeline || tr.followUp && at == int64(len(t.sent)) {
		if !tr.pipeline {
			send([]byte(followUp), nil)
		}
		for range 2 {
			t.after = append(t.after, cl.readLine(followUp))
		}
	}
	return t
}

// asyncWriter writes to a connection from its own goroutine, so that a
// test never blocks on a write that go-smtp will not read (net.Pipe has no
// buffer, and go-smtp stops reading once it has replied). Its queue has no
// bound.
type asyncWriter struct {
	mu     sync.Mutex
	queue  [][]byte
	closed bool
	wake   chan struct{}
	done   chan struct{}
}

func newAsyncWriter(c net.Conn) *asyncWriter {
	w := &asyncWriter{wake: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			w.mu.Lock()
			q, closed := w.queue, w.closed
			w.queue = nil
			w.mu.Unlock()
			for _, b := range q {
				if _, err := c.Write(b); err != nil {
					// The test or go-smtp closed the connection: what
					// go-smtp read before is all that counts.
					return
				}
			}
			if closed {
				return
			}
			if len(q) == 0 {
				<-w.wake
			}
		}
	}()
	return w
}

func (w *asyncWriter) write(b []byte) {
	w.mu.Lock()
	w.queue = append(w.queue, append([]byte(nil), b...))
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// wait stops the writer; call it after closing the connection.
func (w *asyncWriter) wait() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.done
}

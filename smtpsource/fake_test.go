package smtpsource

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/textproto"
)

// fakeServer is a small scripted SMTP/LMTP server on 127.0.0.1:0 for the
// tests: it answers every command with a default success reply unless
// reply says otherwise, reads DATA with textproto's Raw dot reader and BDAT
// chunks by their sizes, and keeps what it was sent. It sends its replies
// when it has read all the commands it was sent so far, as Postfix does,
// so the replies to a pipelined group leave together.
type fakeServer struct {
	ext  []string // EHLO keywords offered
	lmtp bool     // answer the end of data once per accepted recipient
	// reply, if set, returns the reply to a command ("CONNECT" for the
	// greeting, "." for the end of data, with the recipient as arg in
	// LMTP); "" for the default, "close" to drop the connection instead,
	// "close:" and a reply to send the reply and then drop it,
	// "hang" to read on and never answer, "part:" and text to send the
	// text without a line end and then read on and never finish it (a
	// reply cut short, as by a server that stalls in mid-line), "part!"
	// and text to send it so and then drop the connection, "stall:" and a
	// reply to send it and then neither read nor write again until the
	// test ends (a server that stops reading), and, to DATA only,
	// "midstall:" and a reply to send the 354, read the first byte of
	// the data, then send the reply (as the end of data's, ".") and
	// stall (a server that refuses a message mid-data and reads no
	// more). A 421 reply is sent and the connection closed, as RFC 5321
	// §3.8 has it.
	reply func(verb, arg string) string
	// clk, if set, is moved on by delay[verb] before each reply.
	clk   *fakeClock
	delay map[string]time.Duration
	// delayFor, if set, gives the delay instead, by command and argument.
	delayFor func(verb, arg string) time.Duration
	// chunkReset: a refused BDAT chunk ends the transaction, so the later
	// chunks, LAST included, are refused once each as commands without one
	// (go-smtp does this). Otherwise the later chunks get the same refusal
	// and LAST, as any end of data, one reply per accepted recipient in
	// LMTP (RFC 2033 §4.2; smtp-sink does this).
	chunkReset bool
	// step, if set, keeps the server in step with clients dialled with
	// f.dial: before it moves clk for a reply, the server waits until the
	// client has read all it was sent and waits for more, so the client
	// reads each reply at the instant the server sent it.
	step *stepper
	// eager sends each reply at once; otherwise replies to commands that
	// came in one read leave together, as Postfix sends them.
	eager bool
	// tlsConf, if set, is offered with STARTTLS or, with implicit, used
	// from the connect on.
	tlsConf  *tls.Config
	implicit bool
	tlsHang  bool // after STARTTLS's 220, read on and never make the handshake
	// stalls, if set, is called with the client's address when the
	// server begins to stall as a reply told it or at tlsHang (see
	// heldConn): answering nothing, or a line cut short ("hang",
	// "part:"), or after an answer the client is to read first
	// ("stall:", "midstall:", tlsHang).
	stalls func(client net.Addr, answered bool)
	// authMechs are the AUTH mechanisms offered (after TLS only, with
	// authAfterTLS), which take the credentials in users; loginPrompt, if
	// set, is LOGIN's password prompt instead of "Password:".
	authMechs    []string
	authAfterTLS bool
	users        map[string]string
	loginPrompt  string
	// loginAskUser: LOGIN asks "Username:" even after an initial
	// response, which it ignores (some servers do).
	loginAskUser bool
	// splitMax > 0 sends the replies in pieces of 1 to splitMax bytes,
	// each a write of its own (sizes from a PCG seeded with the
	// connection's number).
	splitMax int

	mu    sync.Mutex
	cmds  []string // command lines, in order, over all connections
	msgs  [][]byte // the data of each message, as received
	tlsN  int      // messages received over TLS
	conns int
	codes map[string]map[int]int64 // reply codes sent, by verb
	taken [][]byte                 // the data of each message accepted (2xx)
}

func (f *fakeServer) start(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.serveOn(t, ln)
	return ln.Addr().String()
}

// rawServer serves each connection of a listener of its own with handle,
// which closes it, until the test ends, and returns its address.
func rawServer(t testing.TB, handle func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln.Addr().String()
}

// serveOn serves the connections of ln until the test ends.
func (f *fakeServer) serveOn(t testing.TB, ln net.Listener) {
	stopped := make(chan struct{}) // closed when the test ends ("stall" waits for it)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			f.mu.Lock()
			f.conns++
			n := f.conns
			f.mu.Unlock()
			wg.Add(1)
			if f.step != nil {
				c = &stepServerConn{Conn: c, st: f.step, s: f.step.state(c.RemoteAddr().String())}
			}
			go func() { defer wg.Done(); defer c.Close(); f.serve(c, n, stopped) }()
		}
	}()
	t.Cleanup(func() {
		close(stopped)
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
}

func (f *fakeServer) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cmds...)
}

// connections returns the number of connections accepted so far and of
// the messages received over TLS.
func (f *fakeServer) connections() (conns, overTLS int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conns, f.tlsN
}

func (f *fakeServer) messages() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.msgs...)
}

// sentCodes returns the reply codes sent, by verb.
func (f *fakeServer) sentCodes() map[string]map[int]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.codes)
}

// accepted returns the data of the messages accepted.
func (f *fakeServer) accepted() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.taken...)
}

// splitConn writes each Write in pieces of 1 to max bytes.
type splitConn struct {
	net.Conn
	rnd *rand.Rand
	max int
}

func (c *splitConn) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := c.Conn.Write(p[n:min(len(p), n+1+c.rnd.IntN(c.max))])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// stalled tells f.stalls that the server stalls on c.
func (f *fakeServer) stalled(c net.Conn, answered bool) {
	if f.stalls != nil {
		f.stalls(c.RemoteAddr(), answered)
	}
}

func (f *fakeServer) serve(raw net.Conn, connNum int, stopped <-chan struct{}) {
	c := raw
	tlsOn := false
	if f.implicit {
		tc := tls.Server(c, f.tlsConf)
		if tc.Handshake() != nil {
			return
		}
		c, tlsOn = tc, true
	}
	tr := textproto.NewReader(bufio.NewReader(c))
	var wc io.Writer = c
	if f.splitMax > 0 {
		wc = &splitConn{Conn: c, rnd: rand.New(rand.NewPCG(uint64(connNum), 1)), max: f.splitMax}
	}
	w := bufio.NewWriter(wc)
	lastCode := 0 // of the last reply sent
	// send answers verb with the scripted reply or def; false: drop the
	// connection.
	// say sends r, already scripted, as the answer to verb.
	var say func(verb, arg, r string) bool
	send := func(verb, arg, def string) bool {
		r := def
		if f.reply != nil {
			if s := f.reply(verb, arg); s != "" {
				r = s
			}
		}
		return say(verb, arg, r)
	}
	say = func(verb, arg, r string) bool {
		if r == "close" {
			return false
		}
		if rest, ok := strings.CutPrefix(r, "close:"); ok {
			// The reply, then a close, as servers that give up on a
			// client do after a 5xx.
			say(verb, arg, rest)
			w.Flush()
			return false
		}
		if r == "hang" {
			f.stalled(raw, false)
			io.Copy(io.Discard, c) // until the client closes
			return false
		}
		if text, ok := strings.CutPrefix(r, "part:"); ok {
			w.WriteString(text)
			w.Flush()
			f.stalled(raw, false)
			io.Copy(io.Discard, c)
			return false
		}
		if rest, ok := strings.CutPrefix(r, "stall:"); ok {
			say(verb, arg, rest)
			w.Flush()
			f.stalled(raw, true)
			<-stopped
			return false
		}
		if text, ok := strings.CutPrefix(r, "part!"); ok {
			w.WriteString(text)
			w.Flush()
			return false
		}
		if f.step != nil {
			if err := w.Flush(); err != nil {
				return false
			}
			f.step.waitClient(raw)
		}
		if f.clk != nil {
			d := f.delay[verb]
			if f.delayFor != nil {
				d = f.delayFor(verb, arg)
			}
			f.clk.Advance(d)
		}
		f.mu.Lock()
		if f.codes == nil {
			f.codes = map[string]map[int]int64{}
		}
		if f.codes[verb] == nil {
			f.codes[verb] = map[int]int64{}
		}
		lastCode, _ = strconv.Atoi(r[:3])
		f.codes[verb][lastCode]++
		f.mu.Unlock()
		w.WriteString(r + "\r\n")
		if lastCode == 421 {
			// The server is closing the channel (RFC 5321 §3.8): the
			// commands after the one answered get no reply.
			w.Flush()
			return false
		}
		if tr.R.Buffered() > 0 && !f.eager {
			return true // pipelined commands: answer them together, as servers do
		}
		return w.Flush() == nil
	}
	code := func(r string) int { n, _ := strconv.Atoi(r[:3]); return n }
	reply := func(verb, arg, def string) string {
		if f.reply != nil {
			if s := f.reply(verb, arg); s != "" {
				return s
			}
		}
		return def
	}
	if !send("CONNECT", "", "220 fake ESMTP") {
		return
	}
	var rcpts []string // accepted in this transaction
	mailOK := false
	var chunked []byte
	chunkErr := "" // the refusal of an earlier chunk of this message
	// end answers the end of a message's data.
	end := func(data []byte) bool {
		f.mu.Lock()
		f.msgs = append(f.msgs, data)
		if tlsOn {
			f.tlsN++
		}
		f.mu.Unlock()
		ok, taken := true, false
		if f.lmtp {
			for _, rc := range rcpts {
				ok = ok && send(".", rc, "250 2.0.0 Ok: "+rc)
				taken = taken || ok && lastCode/100 == 2
			}
		} else {
			ok = send(".", "", "250 2.0.0 Ok: queued")
			taken = ok && lastCode/100 == 2
		}
		if taken {
			f.mu.Lock()
			f.taken = append(f.taken, data)
			f.mu.Unlock()
		}
		rcpts, mailOK = nil, false
		return ok
	}
	for {
		line, err := tr.ReadLine()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.cmds = append(f.cmds, line)
		f.mu.Unlock()
		verb, arg, _ := strings.Cut(line, " ")
		verb = strings.ToUpper(verb)
		switch verb {
		case "EHLO", "LHLO":
			r := reply(verb, arg, "")
			if r == "" {
				r = "250-fake"
				for _, e := range f.ext {
					r += "\r\n250-" + e
				}
				if f.tlsConf != nil && !tlsOn {
					r += "\r\n250-STARTTLS"
				}
				if len(f.authMechs) > 0 && (tlsOn || !f.authAfterTLS) {
					r += "\r\n250-AUTH " + strings.Join(f.authMechs, " ")
				}
				r += "\r\n250 8BITMIME"
			}
			if !say(verb, arg, r) {
				return
			}
		case "MAIL":
			r := reply(verb, arg, "250 2.1.0 Ok")
			mailOK = code(r)/100 == 2
			if !say(verb, arg, r) {
				return
			}
		case "RCPT":
			r := reply(verb, arg, "250 2.1.5 Ok")
			if mailOK && code(r)/100 == 2 {
				rcpts = append(rcpts, arg)
			}
			if !say(verb, arg, r) {
				return
			}
		case "DATA":
			r := reply(verb, arg, "354 go ahead")
			if !mailOK || len(rcpts) == 0 {
				r = reply(verb, arg, "554 5.5.1 no valid recipients")
			}
			mid, midstall := strings.CutPrefix(r, "midstall:")
			if midstall {
				r = "354 go ahead"
			}
			if !say(verb, arg, r) {
				return
			}
			if code(r) != 354 {
				continue
			}
			if midstall {
				if w.Flush() != nil {
					return
				}
				if _, err := tr.R.ReadByte(); err != nil {
					return
				}
				say(".", "", "stall:"+mid)
				return
			}
			data, err := io.ReadAll(tr.DotReaderMode(dot.Raw))
			if err != nil || !end(data) {
				return
			}
		case "BDAT":
			sz, last, _ := strings.Cut(arg, " ")
			n, _ := strconv.Atoi(sz)
			b := make([]byte, n)
			if _, err := io.ReadFull(tr.R, b); err != nil {
				return
			}
			chunked = append(chunked, b...)
			if !mailOK || len(rcpts) == 0 {
				chunked = nil
				v := verb
				if last == "LAST" {
					v = "." // the reply to the end of the data, as the client counts it
				}
				if !send(v, arg, "554 5.5.1 no valid recipients") {
					return
				}
				continue
			}
			if chunkErr != "" {
				if last != "LAST" {
					if !say(verb, arg, chunkErr) {
						return
					}
					continue
				}
				n := 1
				if f.lmtp {
					n = len(rcpts)
				}
				for range n {
					if !say(".", "", chunkErr) {
						return
					}
				}
				rcpts, mailOK, chunked, chunkErr = nil, false, nil, ""
				continue
			}
			if last != "LAST" {
				r := reply(verb, arg, "250 2.0.0 "+sz+" bytes")
				if code(r)/100 != 2 {
					if f.chunkReset {
						rcpts, mailOK, chunked = nil, false, nil
					} else {
						chunkErr = r
					}
				}
				if !say(verb, arg, r) {
					return
				}
				continue
			}
			data := chunked
			chunked = nil
			if !end(data) {
				return
			}
		case "RSET":
			rcpts, mailOK, chunked, chunkErr = nil, false, nil, ""
			if !send(verb, arg, "250 2.0.0 Ok") {
				return
			}
		case "STARTTLS":
			if f.tlsConf == nil || tlsOn {
				if !send(verb, arg, "502 5.5.1 no STARTTLS here") {
					return
				}
				continue
			}
			r := reply(verb, arg, "220 2.0.0 ready to start TLS")
			if !say(verb, arg, r) {
				return
			}
			if code(r) != 220 {
				continue
			}
			if w.Flush() != nil {
				return
			}
			if f.tlsHang {
				f.stalled(raw, true)
				io.Copy(io.Discard, raw) // until the client closes
				return
			}
			tc := tls.Server(raw, f.tlsConf)
			if tc.Handshake() != nil {
				return
			}
			c, tlsOn = tc, true
			tr, w = textproto.NewReader(bufio.NewReader(tc)), bufio.NewWriter(tc)
			rcpts, mailOK, chunked, chunkErr = nil, false, nil, ""
		case "AUTH":
			if !f.auth(arg, say, send, tr, tlsOn) {
				return
			}
		case "QUIT":
			send(verb, arg, "221 2.0.0 Bye")
			return
		case "XCLIENT": // a new greeting, as Postfix's smtpd
			if !send(verb, arg, "220 fake ESMTP") {
				return
			}
		default:
			if !send(verb, arg, "250 Ok") {
				return
			}
		}
	}
}

// writeLog wraps a dialer's connections to keep each Write as it was made.
type writeLog struct {
	mu     sync.Mutex
	writes []string
}

func (l *writeLog) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &loggedConn{Conn: c, l: l}, nil
}

type loggedConn struct {
	net.Conn
	l *writeLog
}

func (c *loggedConn) Write(b []byte) (int, error) {
	c.l.mu.Lock()
	c.l.writes = append(c.l.writes, string(b))
	c.l.mu.Unlock()
	return c.Conn.Write(b)
}

// choppyDial dials connections whose every Read returns 1 to max bytes
// (sizes from a PCG seeded with the connection's number), so that the
// client meets replies cut anywhere.
func choppyDial(max int) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var n atomic.Uint64
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &choppyConn{Conn: c, rnd: rand.New(rand.NewPCG(n.Add(1), 2)), max: max}, nil
	}
}

type choppyConn struct {
	net.Conn
	rnd *rand.Rand
	max int
}

func (c *choppyConn) Read(p []byte) (int, error) {
	return c.Conn.Read(p[:min(len(p), 1+c.rnd.IntN(c.max))])
}

// A stepper keeps a fake server in step with its clients (fakeServer.step).
// Each connection's state is found by the client's address, from both
// ends.
type stepper struct {
	mu    sync.Mutex
	cond  *sync.Cond
	conns map[string]*stepState
	lost  bool     // a client did not come to read in time
	log   writeLog // the clients' writes
}

type stepState struct {
	written, read int64 // bytes the server wrote, bytes the client read
	reading       bool  // the client is in a Read
}

func newStepper() *stepper {
	st := &stepper{conns: map[string]*stepState{}}
	st.cond = sync.NewCond(&st.mu)
	return st
}

func (st *stepper) state(addr string) *stepState {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.conns[addr]
	if s == nil {
		s = &stepState{}
		st.conns[addr] = s
	}
	return s
}

// lostStep reports whether a client lost its step.
func (st *stepper) lostStep() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.lost
}

// dial dials connections that report their reads to st.
func (st *stepper) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := st.log.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &stepClientConn{Conn: c, st: st, s: st.state(c.LocalAddr().String())}, nil
}

// waitClient waits until the client of the server's connection c has read
// every byte written to it and waits for more. After 10s it gives up and
// notes that a client lost its step (lost).
func (st *stepper) waitClient(c net.Conn) {
	s := c.(*stepServerConn).s
	deadline := time.Now().Add(10 * time.Second)
	stop := time.AfterFunc(10*time.Second, func() { st.mu.Lock(); st.cond.Broadcast(); st.mu.Unlock() })
	defer stop.Stop()
	st.mu.Lock()
	defer st.mu.Unlock()
	for !(s.reading && s.read >= s.written) {
		if !time.Now().Before(deadline) {
			st.lost = true
			return
		}
		st.cond.Wait()
	}
}

// stepServerConn counts what the server writes.
type stepServerConn struct {
	net.Conn
	st *stepper
	s  *stepState
}

func (c *stepServerConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.st.mu.Lock()
	c.s.written += int64(n)
	c.st.mu.Unlock()
	return n, err
}

// stepClientConn tells the stepper what the client reads and when it
// waits; its writes are logged.
type stepClientConn struct {
	net.Conn
	st *stepper
	s  *stepState
}

func (c *stepClientConn) Read(b []byte) (int, error) {
	c.st.mu.Lock()
	c.s.reading = true
	c.st.cond.Broadcast()
	c.st.mu.Unlock()
	n, err := c.Conn.Read(b)
	c.st.mu.Lock()
	c.s.reading = false
	c.s.read += int64(n)
	c.st.mu.Unlock()
	return n, err
}

// auth serves AUTH arg (PLAIN or LOGIN, with or without an initial
// response, "*" cancelling), reading the client's answers from tr; false:
// the connection is to be dropped.
func (f *fakeServer) auth(arg string, say func(verb, arg, r string) bool, send func(verb, arg, def string) bool, tr *textproto.Reader, tlsOn bool) bool {
	mech, ir, hasIR := strings.Cut(arg, " ")
	mech = strings.ToUpper(mech)
	if !slices.Contains(f.authMechs, mech) || f.authAfterTLS && !tlsOn {
		return send("AUTH", arg, "504 5.5.4 unrecognized authentication type")
	}
	// answer sends the challenge and returns the decoded answer; ok false
	// when the client cancelled (then answered) or the line is not base64.
	answer := func(challenge string) (b []byte, ok, alive bool) {
		if !say("AUTH", "", "334 "+base64.StdEncoding.EncodeToString([]byte(challenge))) {
			return nil, false, false
		}
		line, err := tr.ReadLine()
		if err != nil {
			return nil, false, false
		}
		f.mu.Lock()
		f.cmds = append(f.cmds, line)
		f.mu.Unlock()
		if line == "*" {
			return nil, false, send("AUTH", "", "501 5.7.0 authentication cancelled")
		}
		b, err = base64.StdEncoding.DecodeString(line)
		if err != nil {
			return nil, false, send("AUTH", "", "501 5.5.2 not base64")
		}
		return b, true, true
	}
	decode := func(s string) []byte {
		if s == "=" {
			return []byte{}
		}
		b, _ := base64.StdEncoding.DecodeString(s)
		return b
	}
	var user, pass string
	switch mech {
	case "PLAIN":
		resp := decode(ir)
		if !hasIR {
			b, ok, alive := answer("")
			if !ok {
				return alive
			}
			resp = b
		}
		parts := strings.Split(string(resp), "\x00")
		if len(parts) != 3 {
			return send("AUTH", "", "501 5.5.2 bad PLAIN response")
		}
		user, pass = parts[1], parts[2]
	case "LOGIN":
		if hasIR && !f.loginAskUser {
			user = string(decode(ir))
		} else {
			b, ok, alive := answer("Username:")
			if !ok {
				return alive
			}
			user = string(b)
		}
		prompt := "Password:"
		if f.loginPrompt != "" {
			prompt = f.loginPrompt
		}
		b, ok, alive := answer(prompt)
		if !ok {
			return alive
		}
		pass = string(b)
	case "CRAM-MD5":
		const challenge = "<1896.697170952@fake.test>"
		b, ok, alive := answer(challenge)
		if !ok {
			return alive
		}
		u, digest, _ := strings.Cut(string(b), " ")
		h := hmac.New(md5.New, []byte(f.users[u]))
		h.Write([]byte(challenge))
		user, pass = u, "\x00wrong"
		if _, known := f.users[u]; known && digest == hex.EncodeToString(h.Sum(nil)) {
			pass = f.users[u]
		}
	case "XOAUTH2", "OAUTHBEARER":
		resp := decode(ir)
		if !hasIR {
			b, ok, alive := answer("")
			if !ok {
				return alive
			}
			resp = b
		}
		// XOAUTH2: user=U^Aauth=Bearer T^A^A; OAUTHBEARER: n,a=U,^A...
		// auth=Bearer T^A^A.
		fields := strings.Split(string(resp), "\x01")
		if mech == "OAUTHBEARER" {
			gs2, _, _ := strings.Cut(fields[0], ",\x01")
			if !strings.HasPrefix(gs2, "n,a=") || !strings.HasSuffix(gs2, ",") {
				return send("AUTH", "", "501 5.5.2 bad GS2 header")
			}
			fields[0] = "user=" + strings.TrimSuffix(strings.TrimPrefix(gs2, "n,a="), ",")
		}
		for _, kv := range fields {
			if u, ok := strings.CutPrefix(kv, "user="); ok {
				user = u
			} else if tok, ok := strings.CutPrefix(kv, "auth=Bearer "); ok {
				pass = tok
			}
		}
		if p, ok := f.users[user]; !ok || p != pass {
			// The error goes as a challenge; the client answers it (an
			// empty line, or "*"), and is then refused.
			if _, ok, alive := answer(`{"status":"401","schemes":"bearer"}`); !ok {
				return alive
			}
		}
	}
	if p, ok := f.users[user]; ok && p == pass {
		return send("AUTH", "", "235 2.7.0 authenticated")
	}
	return send("AUTH", "", "535 5.7.8 authentication credentials invalid")
}

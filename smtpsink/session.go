package smtpsink

import (
	"bufio"
	"crypto/tls"
	"hash"
	"io"
	"net"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/wirespeed/wirespeed/internal/sleep"
	"github.com/wirespeed/wirespeed/textproto"
)

// A session is one client's connection.
type session struct {
	s     *Server
	cfg   *Config
	conn  net.Conn
	id    uint64
	r     *textproto.Reader // for message data; command lines are cut by lines from r.R
	lines lineScanner
	bw    replyWriter  // the replies: a bufio.Writer on cio, or the loop's
	cio   *connIO      // on the goroutine engine, the connection
	loop  *loopSession // on the loops engine, the connection's loop state

	// recent are the last command lines made strings (lineString), for
	// the lines a client repeats message after message.
	recent     [4]string
	nextRecent int

	remote net.Addr
	out    []byte    // the reply being built
	text   []byte    // the text of a reply with numbers in it (replyText)
	hash   hash.Hash // Config.Digest's, reused for each message
	sink   io.Writer // where message data goes: hash or io.Discard

	plain net.Conn // the connection below TLS and the trace (for STARTTLS)

	tls         bool        // speaking TLS
	handshaking bool        // in a TLS handshake (goroutine engine): nothing can be said in the clear
	tlsConn     *tls.Conn   // if so, over this
	clientCert  string      // the subject of the client's verified certificate
	authed      bool        // AUTH succeeded
	authUser    string      // as whom
	authPending string      // the user of the exchange in progress, once checked
	sasl        sasl.Server // the AUTH exchange in progress

	greeted bool // HELO, EHLO or LHLO accepted
	// restarted: STARTTLS or XCLIENT began the session anew, and HELO or
	// EHLO must come again before MAIL (RFC 3207 §4.2; Postfix's XCLIENT).
	restarted bool
	esmtp     bool // by EHLO or LHLO
	refused   bool // a forced CONNECT reply: only QUIT is served
	quit      bool
	// okReplies counts the 2xx and 3xx replies of okSlotCodes not yet
	// in the server's counters (see count).
	okReplies [len(okSlotCodes)]uint32
	nmsg      int

	// The transaction.
	inTx  bool
	from  string
	to    []string // kept only for OnMessage
	nrcpt int
	body  string
	utf8  bool
	bdat  *chunkState // a BDAT message in progress

	perRcpt []Reply // LMTP with dot rules: each recipient's reply (Code 0: 250)

	// For Config.Capture: the last HELO, EHLO or LHLO argument, what
	// followed MAIL's "FROM:" and when it was taken, what followed each
	// RCPT's "TO:", and the message's capture, while its data comes.
	helo     string
	mailArgs string
	mailAt   time.Time
	rcptArgs []string
	capture  *capture

	sleeper *sleep.Sleeper // Config.Delay's last stretch, made at the first wait
}

// A replyWriter takes a session's replies: Flush sends what is buffered
// and reports the first failure to send.
type replyWriter interface {
	io.Writer
	io.StringWriter
	Flush() error
}

// newSession makes the session of connection c, whose peer is remote;
// c is nil on the loops engine, which sets loop instead.
func newSession(s *Server, c net.Conn, remote net.Addr, id uint64) *session {
	ss := &session{s: s, cfg: &s.cfg, id: id, sink: io.Discard, remote: remote}
	ss.lines.max = s.cfg.MaxCommandBytes
	if s.cfg.Digest != 0 {
		ss.hash = s.cfg.Digest.New()
		ss.sink = ss.hash
	}
	if c != nil {
		ss.attach(c)
	}
	return ss
}

// attach gives the session its connection on the goroutine engine, and
// the buffers to read and write it with.
func (ss *session) attach(c net.Conn) {
	s := ss.s
	ss.conn = c
	cio := &connIO{c: c, timeout: max(s.cfg.Timeout, 0), kill: s.kill, onAck: s.h.ackNow, onRead: s.h.read, now: s.h.now}
	cio.dl = deadline{timeout: cio.timeout, rate: max(s.cfg.MinDataRate, 0)}
	if cio.now == nil {
		cio.now = time.Now
	}
	// The buffers are pooled: a client that opens a connection per
	// message (smtp-source without -d) would otherwise make 68 KiB of
	// garbage per message.
	bw, ok := s.writers.Get().(*bufio.Writer)
	if ok {
		bw.Reset(cio)
	} else {
		bw = bufio.NewWriterSize(cio, writeBufSize)
	}
	cio.bw, ss.bw = bw, bw
	ss.cio = cio
	ss.r = textproto.NewReader(s.reader(cio))
}

// reader returns a pooled read buffer on src.
func (s *Server) reader(src io.Reader) *bufio.Reader {
	br, ok := s.readers.Get().(*bufio.Reader)
	if ok {
		br.Reset(src)
		return br
	}
	return bufio.NewReaderSize(src, s.h.readBuf)
}

// release returns the session's buffers to the server's pools.
func (ss *session) release() {
	ss.foldReplies()
	ss.endCapture(ErrAborted)
	if ss.cio != nil {
		ss.cio.bw.Reset(nil)
		ss.s.writers.Put(ss.cio.bw)
	}
	ss.releaseReader()
	ss.bw = nil
	if ss.sleeper != nil {
		ss.sleeper.Close()
	}
}

// releaseReader returns the session's read buffer to the server's pool.
func (ss *session) releaseReader() {
	if ss.r != nil && ss.r.R != nil {
		ss.r.R.Reset(nil)
		ss.s.readers.Put(ss.r.R)
	}
	ss.r = nil
}

// run serves the session until QUIT (it then returns true), the peer
// leaves, a write fails, a forced reply closes it or the server closes:
// the client then gets 421 (RFC 5321 §3.8).
func (ss *session) run() bool { return ss.end(ss.serve()) }

// end ends a session on the goroutine engine that served its commands
// until QUIT (quit) or not.
func (ss *session) end(quit bool) bool {
	if quit {
		return true
	}
	if ss.handshaking {
		return false // the client reads TLS records: a 421 in the clear would be a bad one
	}
	select {
	case <-ss.s.kill:
		// Not counted in Stats.Errors: whether the client is still
		// there to get it is a race with its leaving.
		ss.bw.WriteString("421 4.3.2 Service shutting down, closing connection\r\n")
		ss.bw.Flush()
	default:
		if ss.cio.timedOut {
			ss.timeoutReply()
			ss.bw.Flush()
		}
	}
	return false
}

func (ss *session) serve() bool {
	if ss.cfg.TLSImplicit && !ss.handshake() {
		return false
	}
	if !ss.wait(ss.s.k.connect.delay, ss.greet) || ss.bw.Flush() != nil {
		return false
	}
	return ss.commands()
}

// greet sends the greeting, or the forced CONNECT reply (after which only
// QUIT is served); it returns false if the session ends.
func (ss *session) greet() bool {
	if f := ss.s.k.connect; f.forced {
		if !ss.forced(f.reply) {
			return false
		}
		ss.refused = true
		return true
	}
	if r, ok := ss.rule(StageConnect, clientIP(ss.remote)); ok {
		if !ss.forced(r) {
			return false
		}
		ss.refused = true
		return true
	}
	if ss.cfg.Greeting != "" {
		ss.reply(220, ss.cfg.Greeting)
		return true
	}
	proto := " ESMTP"
	switch {
	case ss.cfg.LMTP:
		proto = " LMTP"
	case ss.cfg.NoESMTP:
		proto = "" // clients look for "ESMTP" to try EHLO (RFC 5321 §3.2)
	}
	ss.reply(220, ss.cfg.Hostname+proto+" wirespeed smtp-sink")
	return true
}

// owe notes that the reply just written accepts a message, until it is
// known to have left (Stats.Unsent).
func (ss *session) owe() {
	if ss.loop != nil {
		ss.loop.owed++
		return
	}
	ss.cio.owe()
}

// commands serves command lines until QUIT (then it returns true) or the
// end of the session.
func (ss *session) commands() bool {
	for !ss.quit {
		line, tooLong, err := ss.readCommand()
		if err != nil {
			// The replies owed to what came before go first: a read may
			// bring the last commands together with the end of the
			// stream (TLS 1.2's close_notify) or a bad TLS record, and
			// then the end is all the next read returns.
			ss.bw.Flush()
			return false
		}
		if tooLong {
			ss.tooLong()
			continue
		}
		sync, ok := ss.command(line)
		if !ok {
			ss.bw.Flush()
			return false
		}
		if sync && ss.bw.Flush() != nil {
			return false
		}
	}
	return ss.bw.Flush() == nil
}

// timeoutReply is the 421 of a session out of time.
func (ss *session) timeoutReply() {
	ss.reply(421, "4.4.2 "+ss.cfg.Hostname+" Error: timeout exceeded")
}

// saslResponseBytes is the least bound of an AUTH exchange's response
// lines, RFC 4954 §4's 12288 octets, which OAuth 2.0 and Kerberos tokens
// approach.
const saslResponseBytes = 12288

// lineMax is the bound of the next command line: MaxCommandBytes, or in
// an AUTH exchange at least saslResponseBytes.
func (ss *session) lineMax() int {
	if ss.sasl != nil {
		return max(ss.cfg.MaxCommandBytes, saslResponseBytes)
	}
	return ss.cfg.MaxCommandBytes
}

// tooLong answers a command line longer than its bound (lineMax).
func (ss *session) tooLong() {
	if ss.sasl != nil {
		ss.sasl, ss.authPending = nil, "" // RFC 4954 §4: the exchange fails
		ss.reply(500, "5.5.6 Authentication exchange line is too long")
		return
	}
	ss.reply(500, "5.5.2 Error: line too long")
}

// recentLineMax bounds the command lines a session keeps in recent: a
// load's MAIL, RCPT and DATA fit, and an idle session holds little.
const recentLineMax = 128

// lineString returns line, a command line, as a string: the one kept for
// it if it is one of the session's recent lines, so the lines a client
// repeats message after message (the MAIL, RCPT and DATA of a load)
// cost no allocation each time.
func (ss *session) lineString(line []byte) string {
	for _, r := range ss.recent {
		if string(line) == r { // compared, not converted
			return r
		}
	}
	l := string(line)
	if len(l) <= recentLineMax && l != "" {
		ss.recent[ss.nextRecent] = l
		ss.nextRecent = (ss.nextRecent + 1) % len(ss.recent)
	}
	return l
}

// readCommand reads the next command line, whose line end has arrived;
// a line that the stream cuts off is never returned, only the read's
// error.
func (ss *session) readCommand() (line string, tooLong bool, err error) {
	br := ss.r.R
	ss.cio.dl.command()
	for {
		if br.Buffered() == 0 {
			if _, err := br.Peek(1); err != nil {
				return "", false, err
			}
		}
		p, _ := br.Peek(br.Buffered())
		ss.lines.max = ss.lineMax()
		n, l, done, long := ss.lines.scan(p)
		if done {
			line = ss.lineString(l) // before Discard: l may be in br's buffer
		}
		br.Discard(n)
		if done {
			return line, long, nil
		}
	}
}

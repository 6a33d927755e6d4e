package smtpsink

import (
	"bufio"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/dot"
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
	bw    *bufio.Writer
	cio   *connIO
	out   []byte    // the reply being built
	text  []byte    // the text of a reply with numbers in it (replyText)
	hash  hash.Hash // Config.Digest's, reused for each message
	sink  io.Writer // where message data goes: hash or io.Discard

	plain net.Conn // the connection below TLS and the trace (for STARTTLS)

	tls         bool        // speaking TLS
	tlsConn     *tls.Conn   // if so, over this
	authed      bool        // AUTH succeeded
	authUser    string      // as whom
	authPending string      // the user of the exchange in progress, once checked
	sasl        sasl.Server // the AUTH exchange in progress

	greeted bool // HELO, EHLO or LHLO accepted
	esmtp   bool // by EHLO or LHLO
	refused bool // a forced CONNECT reply: only QUIT is served
	quit    bool
	nmsg    int

	// The transaction.
	inTx  bool
	from  string
	to    []string // kept only for OnMessage
	nrcpt int
	body  string
	utf8  bool
	bdat  *chunkState // a BDAT message in progress

	sleeper *sleep.Sleeper // Config.Delay's last stretch, made at the first wait
}

// connIO is the session's side of the connection: reads flush the pending
// replies first, so a reply waits in the buffer only while more input is
// buffered (RFC 2920); reads get the session's deadline (a command's, or
// the data's), and each write the timeout.
type connIO struct {
	c        net.Conn
	bw       *bufio.Writer
	timeout  time.Duration // 0: none
	dl       deadline
	setAt    time.Time // the read deadline last set on c
	now      func() time.Time
	timedOut bool            // a read ran out of time
	kill     <-chan struct{} // the server's: closed when it closes

	// When a message's data takes a second read, the session asks the
	// kernel to acknowledge at once from then on (quickAck, which lasts
	// until the next reply). A client that leaves Nagle's algorithm on
	// (Postfix's smtp-source does) holds the small last piece of a large
	// message until its earlier segments are acknowledged, and a server
	// in the middle of a message has no reply to carry the ACK: without
	// this, the kernel's delayed-ACK timer (40 ms on Linux) stalls about
	// every other 1 MiB message. A message that arrives in one read gets
	// its ACK with the reply, as without this.
	qa     *quickAck // nil if not TCP
	onAck  func()    // hooks.ackNow
	inData bool      // reading a message's data
	nread  int       // reads since inData was set
}

// errClosing ends a session's reads once the server is closing.
var errClosing = errors.New("smtpsink: server closing")

func (f *connIO) Read(p []byte) (int, error) {
	if f.bw.Buffered() > 0 {
		if err := f.bw.Flush(); err != nil {
			return 0, err
		}
	}
	if at, ok, expired := f.dl.beforeRead(f.now()); expired {
		f.timedOut = true
		return 0, os.ErrDeadlineExceeded
	} else if ok {
		f.setReadDeadline(at)
	}
	// Checked after setting the deadline: Server.Close closes kill and
	// then moves the deadline into the past, so either this sees kill
	// closed or the read below wakes up.
	select {
	case <-f.kill:
		return 0, errClosing
	default:
	}
	if f.inData {
		if f.nread == 1 {
			if f.qa != nil {
				f.qa.ack() // a hint: a failure shows in the read, if at all
			}
			if f.onAck != nil {
				f.onAck()
			}
		}
		f.nread++
	}
	n, err := f.c.Read(p)
	f.dl.afterRead(n)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		select {
		case <-f.kill: // Close moved the deadline
			return n, errClosing
		default:
			f.timedOut = true
		}
	}
	return n, err
}

// setReadDeadline puts the deadline at on the connection, where it is
// not there yet. A command's is set as it is, once per command. Message
// data's moves on at each read: the connection gets it plus a 64th of the
// timeout, and a new one only once it has moved past that (or back), so
// that a stream of data costs a timer change every Timeout/64, not one a
// read; the data's deadline is then kept up to Timeout/64 late.
func (f *connIO) setReadDeadline(at time.Time) {
	if !f.dl.data {
		if !at.Equal(f.setAt) {
			f.c.SetReadDeadline(at)
			f.setAt = at
		}
		return
	}
	slack := f.timeout / 64
	if at.After(f.setAt) || at.Add(slack).Before(f.setAt) {
		f.setAt = at.Add(slack)
		f.c.SetReadDeadline(f.setAt)
	}
}

// startData and endData bracket the reads of a message's data (or a
// chunk's): the data's deadline, and quick ACKs.
func (f *connIO) startData() { f.inData, f.nread = true, 0; f.dl.startData() }
func (f *connIO) endData()   { f.inData = false; f.dl.command() }

func (f *connIO) Write(p []byte) (int, error) {
	timeout := f.timeout
	select {
	case <-f.kill:
		timeout = closeGrace // the 421 of a closing server
	default:
		if f.timedOut {
			timeout = closeGrace // the 421 of a session out of time
		}
	}
	if timeout > 0 {
		f.c.SetWriteDeadline(f.now().Add(timeout))
	}
	return f.c.Write(p)
}

func newSession(s *Server, c net.Conn, id uint64) *session {
	ss := &session{s: s, cfg: &s.cfg, conn: c, id: id, sink: io.Discard}
	cio := &connIO{c: c, timeout: max(s.cfg.Timeout, 0), kill: s.kill, onAck: s.h.ackNow, now: s.h.now}
	cio.dl = deadline{timeout: cio.timeout, rate: max(s.cfg.MinDataRate, 0)}
	if cio.now == nil {
		cio.now = time.Now
	}
	// The buffers are pooled: a client that opens a connection per
	// message (smtp-source without -d) would otherwise make 68 KiB of
	// garbage per message.
	if bw, ok := s.writers.Get().(*bufio.Writer); ok {
		bw.Reset(cio)
		ss.bw = bw
	} else {
		ss.bw = bufio.NewWriterSize(cio, writeBufSize)
	}
	cio.bw = ss.bw
	ss.cio = cio
	br, ok := s.readers.Get().(*bufio.Reader)
	if ok {
		br.Reset(cio)
	} else {
		br = bufio.NewReaderSize(cio, s.h.readBuf)
	}
	ss.r = textproto.NewReader(br)
	ss.lines.max = s.cfg.MaxCommandBytes
	if s.cfg.Digest != 0 {
		ss.hash = s.cfg.Digest.New()
		ss.sink = ss.hash
	}
	ss.out = make([]byte, 0, 256)
	return ss
}

// release returns the session's buffers to the server's pools.
func (ss *session) release() {
	ss.bw.Reset(nil)
	ss.s.writers.Put(ss.bw)
	ss.r.R.Reset(nil)
	ss.s.readers.Put(ss.r.R)
	ss.bw, ss.r = nil, nil
	if ss.sleeper != nil {
		ss.sleeper.Close()
	}
}

// run serves the session until QUIT (it then returns true), the peer
// leaves, a write fails, a forced reply closes it or the server closes:
// the client then gets 421 (RFC 5321 §3.8).
func (ss *session) run() bool {
	if ss.serve() {
		return true
	}
	select {
	case <-ss.s.kill:
		// Not counted in Stats.Errors: whether the client is still
		// there to get it is a race with its leaving.
		ss.bw.WriteString("421 4.3.2 Service shutting down, closing connection\r\n")
		ss.bw.Flush()
	default:
		if ss.cio.timedOut {
			ss.reply(421, "4.4.2 "+ss.cfg.Hostname+" Error: timeout exceeded")
			ss.bw.Flush()
		}
	}
	return false
}

func (ss *session) serve() bool {
	if ss.cfg.TLSImplicit && !ss.handshake() {
		return false
	}
	if c := ss.s.k.connect; c.delay > 0 && !ss.sleep(c.delay) {
		return false
	}
	if f := ss.s.k.connect; f.forced {
		if !ss.forced(f.reply) {
			return false
		}
		ss.refused = true
	} else {
		proto := " ESMTP"
		if ss.cfg.LMTP {
			proto = " LMTP"
		}
		ss.reply(220, ss.cfg.Hostname+proto+" wirespeed smtp-sink")
	}
	if ss.bw.Flush() != nil {
		return false
	}
	for !ss.quit {
		line, tooLong, err := ss.readCommand()
		if err != nil {
			return false
		}
		if tooLong {
			if ss.sasl != nil {
				ss.sasl, ss.authPending = nil, "" // RFC 4954 §4: the exchange fails
				ss.reply(500, "5.5.6 Authentication exchange line is too long")
				continue
			}
			ss.reply(500, "5.5.2 Error: line too long")
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
		n, l, done, long := ss.lines.scan(p)
		line = string(l)
		br.Discard(n)
		if done {
			return line, long, nil
		}
	}
}

// command serves one command line. sync reports a command after which the
// client waits for the replies (RFC 2920 §3.1: EHLO, DATA, VRFY, EXPN,
// TURN, QUIT and NOOP end a group); ok is false when the session must end.
func (ss *session) command(line string) (sync, ok bool) {
	verb, arg, args := line, "", "" // args: arg with the separator before it
	if i := verbEnd(line); i >= 0 {
		verb, arg, args = line[:i], line[i+1:], line[i:]
	}
	if ss.sasl != nil {
		ss.authLine(line) // a line of an AUTH exchange, not a command
		return true, true
	}
	verb = strings.ToUpper(verb) // no allocation when already upper case
	if !ss.delay(verb) {
		return false, false
	}
	if f, ok := ss.s.k.force[verb]; ok && verb != "BDAT" {
		if verb == "QUIT" {
			ss.quit = true
		}
		return endsGroup(verb), ss.forced(f)
	}
	if ss.refused && verb != "QUIT" {
		ss.reply(503, "5.5.1 Error: no service, QUIT only")
		return false, true
	}
	if ss.cfg.TLSRequired && !ss.tls && needsTLS(verb) {
		const text = "5.7.0 Must issue a STARTTLS command first" // RFC 3207 §4
		if verb == "BDAT" {
			return false, ss.refuseChunk(args, 530, text)
		}
		ss.reply(530, text)
		return endsGroup(verb), true
	}
	switch verb {
	case "HELO", "EHLO", "LHLO":
		ss.hello(verb, arg)
		return true, true
	case "MAIL":
		ss.mail(arg)
	case "RCPT":
		ss.rcpt(arg)
	case "DATA":
		// data flushes its 354 itself; the reply to the message may be
		// followed by more pipelined commands.
		return false, ss.data(arg)
	case "BDAT":
		if ss.cfg.NoChunking {
			return false, ss.bdatOff(args)
		}
		return false, ss.bdatCmd(args)
	case "RSET":
		if arg != "" {
			ss.reply(501, "5.5.4 Syntax: RSET")
			break
		}
		ss.reset()
		ss.reply(250, "2.0.0 Ok")
	case "NOOP":
		ss.reply(250, "2.0.0 Ok")
		return true, true
	case "VRFY":
		if strings.TrimSpace(arg) == "" {
			ss.reply(501, "5.5.4 Syntax: VRFY address")
		} else {
			ss.reply(252, "2.0.0 Cannot VRFY, but will take mail for it")
		}
		return true, true
	case "HELP":
		ss.reply(214, "2.0.0 Commands: HELO EHLO LHLO MAIL RCPT DATA BDAT RSET NOOP VRFY HELP QUIT")
		return true, true
	case "QUIT":
		ss.reply(221, "2.0.0 Bye")
		ss.quit = true
		return true, true
	case "EXPN", "TURN":
		ss.reply(502, "5.5.1 Error: command not implemented")
		return true, true
	case "STARTTLS":
		return true, ss.startTLS(arg)
	case "AUTH":
		ss.auth(arg)
		return true, true
	case "ETRN", "ATRN":
		ss.reply(502, "5.5.1 Error: command not implemented")
	default:
		ss.reply(500, "5.5.2 Error: command not recognized")
	}
	return false, true
}

// verbEnd returns the index of the space or tab after a command line's
// verb, or -1.
func verbEnd(line string) int {
	i := strings.IndexByte(line, ' ')
	end := line
	if i >= 0 {
		end = line[:i]
	}
	if j := strings.IndexByte(end, '\t'); j >= 0 {
		return j
	}
	return i
}

// needsTLS reports the commands refused before STARTTLS under
// Config.TLSRequired: all but those RFC 3207 §4 lets through (NOOP, EHLO,
// STARTTLS, QUIT), HELO, LHLO and RSET, which change nothing, and the
// unknown ones, which get 500.
func needsTLS(verb string) bool {
	switch verb {
	case "MAIL", "RCPT", "DATA", "BDAT", "VRFY", "EXPN", "AUTH", "HELP", "TURN", "ETRN", "ATRN":
		return true
	}
	return false
}

// endsGroup reports the commands after which a pipelining client waits
// for the replies (RFC 2920 §3.1), and HELP.
func endsGroup(verb string) bool {
	switch verb {
	case "HELO", "EHLO", "LHLO", "DATA", "VRFY", "EXPN", "TURN", "QUIT", "NOOP", "HELP":
		return true
	}
	return false
}

// forced sends a forced reply; it returns false if the session ends.
func (ss *session) forced(f Reply) bool {
	if f.Code != 0 {
		ss.reply(f.Code, f.text())
	}
	return !f.Close
}

// reply buffers one reply line; codes 400 to 599 are counted.
func (ss *session) reply(code int, text string) { replyLine(ss, code, text) }

// replyText is reply with a text built in ss.text, which it does not
// keep: the replies to messages and chunks, which carry numbers, without
// allocating.
func (ss *session) replyText(code int, text []byte) { replyLine(ss, code, text) }

func replyLine[T ~string | ~[]byte](ss *session, code int, text T) {
	ss.count(code)
	b := strconv.AppendInt(ss.out[:0], int64(code), 10)
	b = append(b, ' ')
	b = append(b, text...)
	b = append(b, '\r', '\n')
	ss.out = b
	ss.bw.Write(b) // a failed write shows at the next Flush
}

func (ss *session) count(code int) {
	if code >= 400 && code <= 599 {
		ss.s.stats.codes[code-400].Add(1)
	}
}

// reset ends the transaction.
func (ss *session) reset() {
	ss.inTx, ss.from, ss.nrcpt, ss.body, ss.utf8 = false, "", 0, "", false
	ss.to = ss.to[:0]
	ss.bdat = nil
}

func (ss *session) hello(verb, arg string) {
	switch {
	case ss.cfg.LMTP && verb != "LHLO":
		ss.reply(500, "5.5.1 Error: this is LMTP: send LHLO")
		return
	case !ss.cfg.LMTP && verb == "LHLO":
		ss.reply(500, "5.5.2 Error: command not recognized")
		return
	case verb == "EHLO" && ss.cfg.NoESMTP:
		ss.reply(502, "5.5.1 Error: command not implemented")
		return
	case strings.TrimSpace(arg) == "":
		ss.reply(501, "5.5.4 Syntax: "+verb+" hostname")
		return
	}
	ss.reset()
	ss.greeted, ss.esmtp = true, verb != "HELO"
	if !ss.esmtp {
		ss.reply(250, ss.cfg.Hostname)
		return
	}
	if ss.tls {
		ss.bw.Write(ss.s.ehloTLS)
		return
	}
	ss.bw.Write(ss.s.ehlo)
}

// ehloReply renders the EHLO (LHLO) reply once per server, for a session
// in the clear or over TLS: STARTTLS is offered before TLS, AUTH over it
// (or before, with AuthPlaintext).
func ehloReply(cfg *Config, tls bool) []byte {
	kw := []string{cfg.Hostname}
	if cfg.TLS != nil && !cfg.TLSImplicit && !tls {
		kw = append(kw, "STARTTLS")
	}
	if cfg.Auth && (tls || cfg.AuthPlaintext) {
		kw = append(kw, "AUTH "+authMechanisms)
	}
	if !cfg.NoPipelining {
		kw = append(kw, "PIPELINING")
	}
	if cfg.MaxSize > 0 {
		kw = append(kw, "SIZE "+strconv.FormatInt(cfg.MaxSize, 10))
	} else {
		kw = append(kw, "SIZE")
	}
	if !cfg.No8BitMIME {
		kw = append(kw, "8BITMIME")
	}
	if !cfg.NoChunking {
		kw = append(kw, "CHUNKING", "BINARYMIME")
	}
	if !cfg.NoSMTPUTF8 {
		kw = append(kw, "SMTPUTF8")
	}
	kw = append(kw, "ENHANCEDSTATUSCODES")
	var b []byte
	for i, k := range kw {
		sep := byte('-')
		if i == len(kw)-1 {
			sep = ' '
		}
		b = append(b, "250"...)
		b = append(b, sep)
		b = append(b, k...)
		b = append(b, '\r', '\n')
	}
	return b
}

func (ss *session) mail(arg string) {
	switch {
	case !ss.greeted:
		ss.reply(503, "5.5.1 Error: send HELO/EHLO first")
		return
	case ss.inTx:
		ss.reply(503, "5.5.1 Error: nested MAIL command")
		return
	}
	path, params, ok := parsePath(arg, "FROM:")
	if !ok {
		ss.reply(501, "5.5.4 Syntax: MAIL FROM:<address>")
		return
	}
	body, utf8 := "", false
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, " ")
		if p == "" {
			continue
		}
		key, val, hasVal := strings.Cut(p, "=")
		key = strings.ToUpper(key)
		if !ss.esmtp {
			ss.reply(555, "5.5.4 Error: MAIL parameters need EHLO")
			return
		}
		switch {
		case key == "SIZE":
			n, err := strconv.ParseInt(val, 10, 64)
			if !hasVal || err != nil || n < 0 || val[0] == '+' {
				ss.reply(501, "5.5.4 Syntax: SIZE=number")
				return
			}
			if ss.cfg.MaxSize > 0 && n > ss.cfg.MaxSize {
				ss.reply(552, "5.3.4 Error: message size exceeds fixed limit")
				return
			}
		case key == "BODY":
			b := strings.ToUpper(val)
			switch {
			case b == "7BIT", b == "8BITMIME" && !ss.cfg.No8BitMIME, b == "BINARYMIME" && !ss.cfg.NoChunking:
				body = b
			default:
				ss.reply(501, "5.5.4 Error: unsupported BODY type")
				return
			}
		case key == "SMTPUTF8" && !hasVal && !ss.cfg.NoSMTPUTF8:
			utf8 = true
		case key == "AUTH" && hasVal && ss.cfg.Auth:
			// RFC 4954 §5: the submitter's identity, "<>" if unknown;
			// taken and ignored.
		default:
			ss.reply(555, "5.5.4 Error: unsupported MAIL parameter")
			return
		}
	}
	ss.inTx, ss.body, ss.utf8 = true, body, utf8
	if ss.cfg.OnMessage != nil {
		ss.from = path
	}
	ss.reply(250, "2.1.0 Ok")
}

func (ss *session) rcpt(arg string) {
	switch {
	case !ss.inTx:
		ss.reply(503, "5.5.1 Error: need MAIL command")
		return
	case ss.bdat != nil:
		ss.reply(503, "5.5.1 Error: BDAT in progress")
		return
	}
	path, params, ok := parsePath(arg, "TO:")
	if !ok || path == "" {
		ss.reply(501, "5.5.4 Syntax: RCPT TO:<address>")
		return
	}
	if strings.TrimSpace(params) != "" {
		ss.reply(555, "5.5.4 Error: unsupported RCPT parameter")
		return
	}
	if ss.nrcpt >= ss.cfg.MaxRecipients {
		ss.reply(452, "4.5.3 Error: too many recipients")
		return
	}
	ss.nrcpt++
	if ss.cfg.OnMessage != nil {
		ss.to = append(ss.to, path)
	}
	ss.reply(250, "2.1.5 Ok")
}

// parsePath parses `FROM:<path> params` (prefix "FROM:") or `TO:...`:
// the prefix in any case, optional spaces, and a path in angle brackets
// (a quoted local part may hold '>'). It returns the path without its
// brackets and the rest after it.
func parsePath(arg, prefix string) (path, params string, ok bool) {
	if len(arg) < len(prefix) || !strings.EqualFold(arg[:len(prefix)], prefix) {
		return "", "", false
	}
	rest := strings.TrimLeft(arg[len(prefix):], " ")
	if rest == "" || rest[0] != '<' {
		return "", "", false
	}
	quoted := false
	for i := 1; i < len(rest); i++ {
		switch c := rest[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case c == '>' && !quoted:
			params = rest[i+1:]
			if params != "" && params[0] != ' ' {
				return "", "", false
			}
			return rest[1:i], strings.TrimLeft(params, " "), true
		}
	}
	return "", "", false
}

// checkData returns the reply to a DATA or BDAT command that cannot start
// a message, or 0 if it can.
func (ss *session) checkData() (int, string) {
	switch {
	case !ss.inTx:
		return 503, "5.5.1 Error: need MAIL command"
	case ss.nrcpt == 0 && ss.cfg.LMTP:
		return 503, "5.5.1 Error: no valid recipients" // RFC 2033 §4.2: MUST be 503
	case ss.nrcpt == 0:
		return 554, "5.5.1 Error: no valid recipients"
	}
	return 0, ""
}

func (ss *session) data(arg string) bool {
	code, text := ss.checkData()
	switch {
	case arg != "":
		code, text = 501, "5.5.4 Syntax: DATA"
	case code != 0:
	case ss.bdat != nil:
		code, text = 503, "5.5.1 Error: BDAT in progress"
	case ss.body == "BINARYMIME":
		code, text = 503, "5.5.1 Error: BODY=BINARYMIME needs BDAT"
	}
	if code != 0 {
		// A refused DATA ends a group too (RFC 2920).
		ss.reply(code, text)
		return ss.bw.Flush() == nil
	}
	ss.reply(354, "End data with <CR><LF>.<CR><LF>")
	if ss.bw.Flush() != nil {
		return false
	}
	if ss.cfg.AbortData {
		if d := ss.cfg.AbortDataDelay; d > 0 && !ss.sleep(d) {
			return false
		}
		ss.reply(550, "5.0.0 Error: data aborted by the server")
		ss.bw.Flush()
		return false
	}
	ss.startHash()
	ss.cio.startData()
	defer ss.cio.endData()
	dr := ss.r.DotReaderWith(textproto.DotOptions{
		Mode:            dot.Raw,
		Bare:            ss.cfg.Bare,
		MaxBytes:        limitOrNone(ss.cfg.MaxSize),
		MaxLineBytes:    int(limitOrNone(int64(ss.cfg.MaxDataLineBytes))),
		MaxDiscardBytes: limitOrNone(ss.cfg.MaxDiscardBytes),
	})
	_, err := dr.WriteTo(ss.sink)
	if errors.Is(err, textproto.ErrNotInStep) {
		return ss.tooMuchDiscarded()
	}
	if err != nil && !isDataError(err) {
		return false // the peer left or the connection failed
	}
	return ss.endMessage(err, dr.Size(), 0)
}

// tooMuchDiscarded ends a session that would have the sink read more
// than MaxDiscardBytes only to throw it away.
func (ss *session) tooMuchDiscarded() bool {
	ss.reply(421, "4.3.0 Error: too much data to discard, closing connection")
	return false
}

// limitOrNone turns a Config limit (0: none) into a DotOptions one
// (negative: none).
func limitOrNone(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

// isDataError reports an error about the message data, after which the
// session is still in step.
func isDataError(err error) bool {
	return errors.Is(err, dot.ErrTooLarge) || errors.Is(err, dot.ErrLineTooLong) ||
		errors.Is(err, dot.ErrBareLF) || errors.Is(err, dot.ErrBareCR)
}

// dataReply is the reply to a message's data that met err: RFC 5321's
// 552 for too much data, 500 for a line too long (§4.5.3.1.6), 550 for a
// bare CR or LF; the first that applies, in that order.
func dataReply(err error) (int, string) {
	switch {
	case errors.Is(err, dot.ErrTooLarge):
		return 552, "5.3.4 Error: message size exceeds fixed limit"
	case errors.Is(err, dot.ErrLineTooLong):
		return 500, "5.5.2 Error: line too long"
	case errors.Is(err, dot.ErrBareLF):
		return 550, "5.5.2 Error: bare <LF> received"
	case errors.Is(err, dot.ErrBareCR):
		return 550, "5.5.2 Error: bare <CR> received"
	}
	return 554, "5.6.0 Error: bad message data"
}

func (ss *session) startHash() {
	if ss.hash != nil {
		ss.hash.Reset()
	}
}

// endMessage replies to the end of a message's data (err: its data error)
// and ends the transaction. It returns false if the session ends.
func (ss *session) endMessage(err error, size int64, chunks int) bool {
	code, text := 250, ""
	e := ss.s.k.dataEnd
	f, forced := e.reply, e.forced
	switch {
	case forced:
		code, text = f.Code, f.text()
	case err != nil:
		code, text = dataReply(err)
	}
	if e.delay > 0 && !ss.sleep(e.delay) {
		return false
	}
	if code == 250 {
		ss.nmsg++
		ss.s.stats.messages.Add(1)
		ss.s.stats.bytes.Add(uint64(size))
		ss.s.stats.recipients.Add(uint64(ss.nrcpt))
		if ss.cfg.OnMessage != nil {
			m := Message{Session: ss.id, Seq: ss.nmsg, From: ss.from, To: append([]string(nil), ss.to...),
				Size: size, Body: ss.body, SMTPUTF8: ss.utf8, Chunks: chunks, RemoteAddr: ss.conn.RemoteAddr(),
				TLS: ss.tls, Authenticated: ss.authed, AuthUser: ss.authUser}
			if ss.hash != nil {
				m.Digest = ss.sum()
			}
			ss.cfg.OnMessage(m)
		}
	}
	n := 1
	if ss.cfg.LMTP {
		n = ss.nrcpt
	}
	for range n {
		switch {
		case code == 250:
			ss.replyText(250, ss.queuedText())
		case code != 0:
			ss.reply(code, text)
		}
	}
	ss.reset()
	return !(forced && f.Close)
}

// sum returns the digest of the message data hashed so far. (digest.Sum
// is built from its hexadecimal form: package digest makes Sums only from
// its own readers and from text.)
func (ss *session) sum() digest.Sum {
	var b [digest.MaxSize]byte
	var h [2 * digest.MaxSize]byte
	sum, _ := digest.ParseSum(ss.cfg.Digest, string(hex.AppendEncode(h[:0], ss.hash.Sum(b[:0]))))
	return sum
}

// queuedText is the text of the reply that accepts a message: its id is
// SESSION-N, as the -digest log names it.
func (ss *session) queuedText() []byte {
	b := append(ss.text[:0], "2.0.0 Ok: queued as "...)
	b = strconv.AppendUint(b, ss.id, 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(ss.nmsg), 10)
	ss.text = b
	return b
}

// delay waits as long as Config.Delay says for the verb, or until the
// server closes (then it returns false).
func (ss *session) delay(verb string) bool {
	if d := ss.s.k.delay[verb]; d > 0 {
		return ss.sleep(d)
	}
	return true
}

// The last stretch of a wait goes to a sleep.Sleeper, which wakes on time
// (a Go timer fires up to a millisecond late in a quiet process, which a
// client measuring the wait would see), spinning for its last sleepSpin;
// before it, a timer that Close cuts short.
const (
	preciseWait = 20 * time.Millisecond
	sleepSpin   = 30 * time.Microsecond
)

// sleep waits d, or until the server closes (then it returns false).
func (ss *session) sleep(d time.Duration) bool {
	if ss.s.h.sleep != nil {
		ss.s.h.sleep(d)
		return true
	}
	until := time.Now().Add(d)
	if far := d - preciseWait; far > 0 {
		t := time.NewTimer(far)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ss.s.kill:
			return false
		}
	}
	if ss.sleeper == nil {
		ss.sleeper, _ = sleep.New(sleepSpin) // on failure, still a working Sleeper
	}
	ss.sleeper.Until(until)
	select {
	case <-ss.s.kill:
		return false
	default:
		return true
	}
}

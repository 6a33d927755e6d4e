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

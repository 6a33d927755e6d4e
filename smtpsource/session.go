package smtpsource

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wirespeed/wirespeed/internal/sleep"
	"github.com/wirespeed/wirespeed/textproto"
)

// A session sends messages one after another, on one connection (Reuse)
// or on a connection per message. It records its latencies in the run's
// histograms as it goes, and keeps its own counts, which it merges into
// the run's when it ends.
type session struct {
	r       *run
	c       *smtpConn // nil: none open
	replies map[string]map[int]int64
	digests []Digest
	tls     TLSStats
	hdr     []byte  // the current message's header
	hdrDots []byte  // hdr dot-stuffed, if a Config.Headers line starts with a dot
	cur     msgBody // the current message's body
	mailBuf []byte  // the last MAIL command made, if not the run's
	// notifyBuf is the last RCPT command made with NOTIFY=.
	notifyBuf []byte
	msg       []byte // a BDAT chunk that holds the end of the header and the start of the body
	pipe      bool   // pipelining used on a connection
	chunk     bool   // BDAT used on a connection
	// ahead is the next message, when its envelope went out behind the
	// last message's data; nil otherwise.
	ahead   *ahead
	rcptBuf []byte // the last RCPT command made with NumberRecipients or ToList
	// backoff is the wait after the last connection that failed or
	// ended with nothing delivered, if no message has been delivered
	// since (0 then), and retryAt when it ends.
	backoff time.Duration
	retryAt int64
	// backedOff is set once the connection being opened, or last open,
	// has made the session back off.
	backedOff bool
	// stale says the kept connection the last transaction began on had
	// been closed by the server, silently, since the transaction before:
	// nothing of the message reached it, and it goes again on a new one.
	// retryable says the transaction under way writes nothing of the
	// message's data before its MAIL is answered (pipelined BDAT does), so
	// that a close found there is one.
	stale, retryable bool
	// counted says an error was counted for the message under way, or
	// for the last one if it failed: a message the run's end cuts short
	// is abandoned only without one, and a close by the server after it
	// (a refusal, then the connection closed) is no second error.
	counted bool
	// ehloRefusal is the refusal of EHLO while HELO is tried after it: a
	// close by the server then is the end of that refusal, counted as it.
	ehloRefusal error
	// opening says the connection being opened is Config.Reuse's first,
	// opened before the session takes a message; early holds its error,
	// if it failed (a refused greeting, a failed connect), for the first
	// message the session takes, which opens another: a failure of that
	// message stands for both, counted once, as with a connection a
	// message is sent on. Counted only if that message does not fail,
	// or if the session takes none.
	opening bool
	early   *earlyFail
}

// An earlyFail is an error of Config.Reuse's first connection, not yet
// counted (see session.early).
type earlyFail struct {
	counter interface{ Add(int64) int64 }
	err     error
}

// The bounds of the wait after a failed connection or a refused
// greeting: it starts at minBackoff and doubles with each failure that
// follows, up to maxBackoff.
const (
	minBackoff = 10 * time.Millisecond
	maxBackoff = time.Second
)

// An ahead message is one whose MAIL, RCPTs and DATA were written in the
// same group as the previous message's data and end line, as RFC 2920
// §3.1 allows (DATA ends the group). Its replies follow the previous
// message's end-of-data reply on c, and its turn comes with that reply.
type ahead struct {
	k, t0 int64     // the message and its start
	c     *smtpConn // the connection it was written on
	turn  int64     // when the previous message's last reply came; -1 until then
}

// maxErrText bounds the first error's text in the result.
const maxErrText = 1000

// replyReader returns a reader of the replies on c, within bounds of what
// a server's replies may make the client hold: a line of 2 KiB (Postfix's
// line_length_limit; RFC 5321 §4.5.3.1.5 allows 512 octets), and, in
// readResponse, a reply of 1,000 lines and 64 KiB. Past them the message
// fails, as against a server that floods.
func replyReader(c io.Reader) *textproto.Reader {
	tr := textproto.NewReader(bufio.NewReaderSize(c, 16<<10))
	tr.SetLimits(textproto.Limits{MaxLineBytes: maxLineBytes})
	return tr
}

// An smtpConn is one open connection and what its server offered.
type smtpConn struct {
	raw       net.Conn // the socket
	nc        net.Conn // raw, or the TLS connection on it
	id        int64    // the connection's number, from 1
	bw        *bufio.Writer
	tw        *textproto.Writer // on bw
	tr        *textproto.Reader
	offered   // by the last EHLO's reply
	stop      func() bool
	delivered bool // a message was delivered on it
	used      bool // a transaction was made on it: it is a kept connection
	// lastReplies is how many more replies to a refused message's LAST
	// chunk may come before the reply to the next command (see chunks).
	lastReplies int
}

// offered is what a server's EHLO reply offered. Each EHLO starts it
// anew: the one after STARTTLS (RFC 3207 §4.2) and the one after XCLIENT,
// whose reply is a new greeting, may offer less.
type offered struct {
	pipelining bool
	chunking   bool
	startTLS   bool
	size       bool // SIZE
	dsn        bool
	smtputf8   bool
	xclient    bool
	xforward   bool            // and asked for: sent before each MAIL
	auth       map[string]bool // the AUTH mechanisms
}

func newSession(r *run) *session {
	return &session{r: r, replies: map[string]map[int]int64{}}
}

func (s *session) run(ctx context.Context) {
	r := s.r
	if r.cfg.Reuse {
		// Connect first: the messages then go out on open connections. A
		// failure is retried with the first message, and counted with it
		// (session.early).
		s.opening = true
		s.open(ctx)
		s.opening = false
	}
	var sl sleep.Waiter // made when first needed
	defer func() {
		if sl != nil {
			sl.Close()
		}
	}()
	until := func(t time.Time) {
		if sl == nil {
			sl = r.env.clock.Waiter(r.cfg.Spin)
		}
		sl.Until(ctx, t)
	}
	for first := true; ctx.Err() == nil; first = false {
		var k, t0 int64
		if a := s.ahead; a != nil {
			k, t0 = a.k, a.t0 // already started and counted
		} else {
			if s.retryAt > r.now() && r.next.Load() < int64(r.cfg.Messages) {
				// A connection failed or its greeting was refused: back
				// off before the next connect, with no message taken
				// meanwhile, so that other sessions may send them (and
				// not at all when none is left).
				until(r.cut(r.base.Add(time.Duration(s.retryAt))))
				if ctx.Err() != nil {
					break
				}
			}
			k = r.next.Add(1) - 1
			// In open loop a message is due by its intended start, however
			// late the session is to it.
			if k >= int64(r.cfg.Messages) || !r.cfg.openLoop() && r.over(r.now()) {
				break
			}
			if d := s.wait(); d > 0 && !first {
				until(r.cut(r.env.clock.Now().Add(d)))
				if ctx.Err() != nil || !r.cfg.openLoop() && r.over(r.now()) {
					break
				}
			}
			if r.cfg.openLoop() {
				t0, _ = r.sched.at(k)
				if t0 == never || r.over(t0) {
					break
				}
				until(r.base.Add(time.Duration(t0)))
				if ctx.Err() != nil || r.over(r.now()) {
					// Duration is over, and no message starts after it:
					// this one, due earlier, is missed (Result.Missed).
					break
				}
				r.recordLate(r.now() - t0)
			} else {
				t0 = r.now()
			}
			r.n.started.Add(1)
		}
		out := s.message(ctx, k, t0)
		switch out {
		case delivered:
			r.n.delivered.Add(1)
		case failed:
			r.n.failed.Add(1)
		default:
			r.n.abandoned.Add(1)
		}
		if e := s.early; e != nil {
			s.early = nil
			if out != failed {
				s.countErr(e.counter, e.err)
			}
		}
	}
	if s.ahead != nil { // cancelled with a message started
		r.n.abandoned.Add(1)
		s.ahead = nil
	}
	if e := s.early; e != nil { // no message taken
		s.early = nil
		s.countErr(e.counter, e.err)
	}
	s.quit(ctx)
}

// wait returns how long to wait before the next message (Config.Wait
// and RandomWait).
func (s *session) wait() time.Duration {
	if w := s.r.cfg.RandomWait; w > 0 {
		return rand.N(w + 1)
	}
	return s.r.cfg.Wait
}

// merge adds the session's histograms and counts to the run's.
func (s *session) merge() {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	for phase, codes := range s.replies {
		m := r.replies[phase]
		if m == nil {
			m = map[int]int64{}
			r.replies[phase] = m
		}
		for code, n := range codes {
			m[code] += n
		}
	}
	r.digests = append(r.digests, s.digests...)
	if s.tls.Handshakes > 0 {
		if r.tlsStats == nil {
			r.tlsStats = &TLSStats{}
		}
		r.tlsStats.merge(&s.tls)
	}
	r.pipe = r.pipe || s.pipe
	r.chunk = r.chunk || s.chunk
}

// fail counts err in counter and keeps the first error's text, unless
// the run is being cancelled (closing the connections then breaks them).
// An error of Config.Reuse's first connection is held (session.early).
// One that comes once the run is stopping marks the run cut short.
func (s *session) fail(ctx context.Context, counter interface{ Add(int64) int64 }, err error) {
	if ctx.Err() != nil {
		s.r.brokenOff.Store(true)
		return
	}
	s.counted = true
	if s.opening {
		if s.early == nil {
			s.early = &earlyFail{counter, err}
		}
		return
	}
	s.countErr(counter, err)
}

// countErr counts err in counter and keeps the first error's text.
func (s *session) countErr(counter interface{ Add(int64) int64 }, err error) {
	counter.Add(1)
	r := s.r
	r.mu.Lock()
	if r.firstErr == "" {
		r.firstErr = err.Error()
		if n := maxErrText; len(r.firstErr) > n {
			for !utf8.RuneStart(r.firstErr[n]) {
				n-- // not within a character
			}
			r.firstErr = r.firstErr[:n] + "..."
		}
	}
	r.mu.Unlock()
}

// ioFail counts a failed read or write, or a malformed reply, and closes
// the connection.
func (s *session) ioFail(ctx context.Context, phase string, err error) {
	if s.c != nil && s.c.used && s.retryable && (phase == "mail" || phase == "xforward") && closedByPeer(err) {
		// A kept connection the server closed while it was idle (as
		// after a refusal, or at its idle timeout, without a 421): the
		// message's first command found it closed, so the message is
		// sent again on a new connection, as a client of a connection
		// cache does, and nothing failed.
		s.stale = true
		s.close()
		return
	}
	if s.c != nil && !s.c.delivered {
		s.backOff() // the server ended a connection that delivered nothing
	}
	if closedByPeer(err) && (s.counted || s.ehloRefusal != nil) {
		// The server refused a command, then closed the connection, as
		// servers that give up on a client do: a QUIT or RSET after the
		// refusal, a reply to a command pipelined behind it, or HELO
		// after a refused EHLO finds the connection closed. The message
		// failed once, with the refusal, as Postfix's smtp-source counts
		// it.
		if !s.counted {
			s.fail(ctx, &s.r.n.reject, s.ehloRefusal)
		}
		s.close()
		return
	}
	var pe textproto.ProtocolError
	if errors.As(err, &pe) || errors.Is(err, textproto.ErrLineTooLong) || errors.Is(err, textproto.ErrHeaderTooLarge) {
		s.fail(ctx, &s.r.n.protocol, fmt.Errorf("%s: %w", phase, err))
	} else {
		s.fail(ctx, &s.r.n.io, fmt.Errorf("%s: %w", phase, err))
	}
	s.close()
}

func (s *session) close() {
	if s.c != nil {
		s.r.n.open.Add(-1)
		s.c.stop()
		s.c.raw.Close() // not a TLS close_notify, which could wait on a peer that does not read
		s.c = nil
	}
}

// reply reads one reply of phase and counts its code; a 4xx or 5xx reply
// is a rejection, and a reply of another kind than the command wants (a
// 250 to DATA, a 354 to MAIL) a protocol error, after which client and
// server may be out of step (a reply too many, or the server reading a
// message where the client sends commands): the connection is closed
// (errOutOfStep), without QUIT or RSET.
func (s *session) reply(ctx context.Context, phase string) (int, string, error) {
	code, msg, err := s.readReply(ctx, phase)
	want := 2
	if phase == "data" {
		want = 3
	}
	switch {
	case err != nil:
	case code >= 400:
		s.reject(ctx, phase, code, msg)
	case code/100 != want:
		s.fail(ctx, &s.r.n.protocol, fmt.Errorf("%s: a %dxx reply was due: %d %s", phase, want, code, firstLine(msg)))
		s.close()
		err = errOutOfStep
	}
	return code, msg, err
}

// errOutOfStep is what reading a reply returns when the reply was of the
// wrong kind: the session has closed the connection.
var errOutOfStep = errors.New("smtpsource: a reply of the wrong kind: the connection is closed")

// errClosing is what reading a reply returns when the reply is a 421:
// the server is closing the channel (RFC 5321 §3.8), so the session has
// closed its end, without QUIT, and reads no reply after it.
var errClosing = errors.New("smtpsource: 421: the server is closing the connection")

// readReply reads one reply of phase and counts its code. Refusals that
// come first while c.lastReplies says that replies to a refused LAST
// chunk may still come are counted as those. A 421 is counted as a
// rejection and closes the connection (errClosing).
func (s *session) readReply(ctx context.Context, phase string) (int, string, error) {
	for {
		code, msg, err := readResponse(s.c.tr)
		if err != nil {
			s.ioFail(ctx, phase, err)
			return 0, "", err
		}
		counted := phase
		late := s.c.lastReplies > 0 && code >= 400
		if late {
			s.c.lastReplies--
			counted = "dot"
		} else {
			s.c.lastReplies = 0
		}
		s.count(counted, code)
		if code == 421 {
			s.reject(ctx, counted, code, msg)
			if !s.c.delivered {
				s.backOff() // the server ended a connection that delivered nothing
			}
			s.close()
			return code, msg, errClosing
		}
		if late {
			s.reject(ctx, counted, code, msg)
			continue
		}
		return code, msg, nil
	}
}

// count counts a reply of phase with code.
func (s *session) count(phase string, code int) {
	if l := s.r.cfg.Live; l != nil {
		l.reply(phase, code)
	}
	m := s.replies[phase]
	if m == nil {
		m = map[int]int64{}
		s.replies[phase] = m
	}
	m[code]++
}

func (s *session) reject(ctx context.Context, phase string, code int, msg string) {
	s.fail(ctx, &s.r.n.reject, fmt.Errorf("%s: %d %s", phase, code, firstLine(msg)))
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// done records the latency of message k, started at t0, as delivered
// (phaseMessage) or failed (phaseFailed), and with stages in its stage's
// too.
func (s *session) done(phase int, k, t0 int64) {
	r := s.r
	ns := r.now() - t0
	s.record(phase, ns)
	if r.stages != nil {
		_, i := r.sched.at(k)
		r.hmu.Lock()
		record(r.stages[i][phase-phaseMessage], ns)
		r.hmu.Unlock()
		if phase == phaseMessage {
			r.stageRec[i].record(ns)
		}
	}
}

// since records the latency of phase from t to now.
func (s *session) since(phase int, t int64) { s.record(phase, s.r.now()-t) }

// record records a latency of phase.
func (s *session) record(phase int, ns int64) {
	r := s.r
	r.hmu.Lock()
	record(r.phases[phase], ns)
	r.hmu.Unlock()
	if rec := r.rec[phase]; rec != nil {
		rec.record(ns)
	}
}

// flush writes what is buffered; a failure closes the connection.
func (s *session) flush(ctx context.Context, phase string) error {
	if err := s.c.bw.Flush(); err != nil {
		s.writeFail(ctx, phase, err)
		return err
	}
	return nil
}

// writeFail is ioFail for a failed write of phase's commands or data,
// but for a connection that the server has reset after its last word, or
// that timed out the write after the server's last word: a 4xx or 5xx
// that came before (an idle timeout's 421; a server giving up on a
// message it is sent, as smtp-sink -A's 550, or refusing it mid-data, a
// 552 "message too big" or a 554, and then reading no more) is counted
// as the reply to phase, once, and not the write's error. The read does
// not wait for a reply to come: on a reset connection only what has
// arrived is left to read, and after a timeout it is read only if it has
// arrived (replyCame).
func (s *session) writeFail(ctx context.Context, phase string, err error) {
	if isReset(err) || isTimeout(err) && s.replyCame() {
		if code, msg, rerr := readResponse(s.c.tr); rerr == nil && code >= 400 {
			s.count(phase, code)
			s.reject(ctx, phase, code, msg)
			s.close()
			return
		}
	}
	s.ioFail(ctx, phase, err)
}

// groupFail is writeFail for a pipelined group of MAIL, RCPTs and BDAT
// chunks: the replies that came before the server reset the connection
// or stopped reading are read in order, each counted as its command's,
// up to the first refusal, which is the message's (a server that takes
// the envelope and refuses the first chunk, 552 "message too big", then
// reads no more). With none, the write's error is the message's.
func (s *session) groupFail(ctx context.Context, chunks int, err error) {
	if !isReset(err) && !(isTimeout(err) && s.replyCame()) {
		s.ioFail(ctx, "mail", err)
		return
	}
	var phases []string
	if s.c.xforward {
		phases = append(phases, "xforward")
	}
	phases = append(phases, "mail")
	for range s.r.rcptCmds {
		phases = append(phases, "rcpt")
	}
	for range chunks - 1 {
		phases = append(phases, "bdat")
	}
	for _, phase := range append(phases, "dot") {
		code, _, rerr := s.reply(ctx, phase) // an error is counted, and closes
		if rerr != nil {
			return
		}
		if code >= 400 {
			s.close()
			return
		}
	}
	s.ioFail(ctx, "dot", err) // every reply a success, and yet
}

// replyGrace is how long, after a write timed out, a read is given for a
// reply the server may have sent before it stopped reading, when whether
// one came cannot be seen (see replyCame).
const replyGrace = 10 * time.Millisecond

// replyCame reports, after a write timed out, whether the server may have
// sent a reply before it stopped reading: bytes have come that were not
// read yet, in the reply reader's buffer or in the socket's. If so, it
// gives the read of that reply a Timeout of its own, the write's having
// passed. Over TLS, whose layer may hold what came out of sight, or on a
// connection whose socket it cannot look at without reading it (not on
// Unix; a dialer's net.Conn that is no socket), a reply is looked for
// with a read of replyGrace at most.
func (s *session) replyCame() bool {
	c := s.c
	d := s.r.cfg.Timeout
	if c.tr.R.Buffered() == 0 {
		came, known := pending(c.raw)
		switch {
		case came:
		case known && c.nc == c.raw:
			return false // nothing came: it stays a write timeout
		default:
			d = min(d, replyGrace)
		}
	}
	c.nc.SetReadDeadline(time.Now().Add(d))
	return true
}

// isTimeout reports whether err is a read's or a write's timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// open dials, reads the greeting, sends EHLO (LHLO), falling back to
// HELO when EHLO is refused, and starts TLS and authenticates as asked.
// An error leaves the connection closed.
func (s *session) open(ctx context.Context) error {
	r := s.r
	s.backedOff = false
	nc, err := s.dial(ctx)
	if err != nil {
		return err
	}
	id := r.n.conns.Add(1)
	r.n.open.Add(1)
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	nc.SetDeadline(time.Now().Add(r.cfg.Timeout))
	rd, w := r.traced(id, nc, nc)
	bw := bufio.NewWriterSize(w, 32<<10)
	s.c = &smtpConn{raw: nc, nc: nc, id: id, bw: bw, tw: textproto.NewWriter(bw), tr: replyReader(rd),
		stop: context.AfterFunc(ctx, func() { nc.Close() })}
	if err := s.setup(ctx); err != nil {
		s.close()
		s.backOff()
		return err
	}
	return nil
}

// dial opens a connection, trying as often as Config.ConnectTries says,
// one session at a time.
func (s *session) dial(ctx context.Context) (net.Conn, error) {
	r := s.r
	netw, addr := network(r.cfg.Addr, r.cfg.IPVersion, r.cfg.defaultPort())
	var nc net.Conn
	var err error
	var dialing int64 // the time in dials, the wait for dialMu not counted
	for try := 1; ; try++ {
		dctx, cancel := context.WithTimeout(ctx, r.cfg.DialTimeout)
		r.dialMu.Lock()
		t := r.now()
		nc, err = r.env.dial(dctx, netw, addr)
		dialing += r.now() - t
		r.dialMu.Unlock()
		cancel()
		if err == nil || try >= r.cfg.ConnectTries || ctx.Err() != nil {
			break
		}
		r.n.retries.Add(1) // and at once, as smtp-source -C (it waits 10µs)
	}
	if err != nil {
		s.fail(ctx, &r.n.connect, err)
		s.backOff()
		return nil, err
	}
	s.record(phaseConnect, dialing)
	return nc, nil
}

// setup takes a new connection from its greeting to where a transaction
// can start.
func (s *session) setup(ctx context.Context) error {
	r := s.r
	if r.cfg.TLSImplicit {
		t := r.now()
		if err := s.handshake(ctx); err != nil {
			return err
		}
		s.since(phaseTLS, t)
	}
	t := r.now()
	code, msg, err := readResponse(s.c.tr)
	if err != nil {
		s.ioFail(ctx, "banner", err)
		return err
	}
	s.count("banner", code)
	s.since(phaseBanner, t)
	if code != 220 {
		return s.refused(ctx, code, msg)
	}
	if r.cfg.OldMode {
		return nil // no EHLO, no extensions
	}
	if err := s.hello(ctx); err != nil {
		return err
	}
	if r.cfg.TLS {
		if err := s.startTLS(ctx); err != nil {
			return err
		}
	}
	if r.cfg.XClient != "" && s.c.xclient {
		if err := s.xclient(ctx); err != nil {
			return err
		}
	}
	if r.cfg.AuthUser != "" {
		return s.authenticate(ctx)
	}
	return nil
}

// xclient sends XCLIENT and, after the server's new greeting (220),
// EHLO again. A refusal ends the connection's setup.
func (s *session) xclient(ctx context.Context) error {
	c := s.c
	c.bw.WriteString("XCLIENT ")
	c.bw.WriteString(s.r.cfg.XClient)
	c.bw.WriteString("\r\n")
	if err := s.flush(ctx, "xclient"); err != nil {
		return err
	}
	code, msg, err := s.readReply(ctx, "xclient")
	if err != nil {
		return err
	}
	if code != 220 {
		s.reject(ctx, "xclient", code, msg)
		s.quit(ctx)
		return errors.New("XCLIENT refused")
	}
	return s.hello(ctx)
}

// refused counts a greeting other than 220: a refusal (4xx, 5xx) as a
// connect refusal, after which the session backs off, anything else as a
// protocol error. The caller closes the connection, without QUIT (RFC
// 5321 §3.1, §3.8: the server is closing it or means to).
func (s *session) refused(ctx context.Context, code int, msg string) error {
	r := s.r
	err := fmt.Errorf("banner: %d %s", code, firstLine(msg))
	if code < 400 {
		s.fail(ctx, &r.n.protocol, fmt.Errorf("%w: a greeting neither 220 nor a refusal", err))
		return err
	}
	s.fail(ctx, &r.n.refused, err)
	return err
}

// backOff makes the session wait before it connects again, after a
// connection that failed, or that the server ended before a message was
// delivered on it (a refused greeting, EHLO or STARTTLS, a 421, a broken
// connection): minBackoff after the first, doubling with each that
// follows, up to maxBackoff, until a message is delivered.
func (s *session) backOff() {
	if s.backedOff {
		return // once a connection
	}
	s.backedOff = true
	s.backoff = min(max(2*s.backoff, minBackoff), maxBackoff)
	s.retryAt = s.r.now() + int64(s.backoff)
}

// hello sends EHLO (LHLO), or HELO when EHLO is refused, and notes the
// extensions offered.
func (s *session) hello(ctx context.Context) error {
	r := s.r
	verb := "EHLO"
	if r.cfg.LMTP {
		verb = "LHLO"
	}
	s.c.offered = offered{} // HELO, if EHLO is refused, offers nothing
	for {
		fmt.Fprintf(s.c.bw, "%s %s\r\n", verb, r.cfg.Helo)
		t := r.now()
		if err := s.flush(ctx, strings.ToLower(verb)); err != nil {
			return err
		}
		// A 5xx to EHLO is no error when HELO then works (RFC 5321
		// §4.1.4): it is counted under "ehlo" but not as a rejection.
		code, msg, err := s.readReply(ctx, strings.ToLower(verb))
		if err != nil {
			return err
		}
		s.since(phaseEHLO, t)
		if code/100 == 2 {
			if verb != "HELO" {
				s.extensions(msg)
			}
			return nil
		}
		if verb != "EHLO" || code/100 != 5 {
			s.ehloRefusal = nil
			s.reject(ctx, strings.ToLower(verb), code, msg)
			s.quit(ctx)
			return errors.New("greeting refused")
		}
		verb = "HELO"
		s.ehloRefusal = fmt.Errorf("ehlo: %d %s", code, firstLine(msg))
		defer func() { s.ehloRefusal = nil }()
	}
}

// extensions notes the ones offered in an EHLO reply's lines.
func (s *session) extensions(msg string) {
	c := s.c
	lines := strings.Split(msg, "\n")
	for _, l := range lines[1:] {
		kw, rest, _ := strings.Cut(strings.ToUpper(strings.TrimSpace(l)), " ")
		switch kw {
		case "PIPELINING":
			c.pipelining = true
		case "CHUNKING":
			c.chunking = true
		case "STARTTLS":
			c.startTLS = true
		case "SIZE":
			c.size = true
		case "DSN":
			c.dsn = true
		case "SMTPUTF8":
			c.smtputf8 = true
		case "XCLIENT":
			c.xclient = true
		case "XFORWARD":
			c.xforward = s.r.cfg.XForward != ""
		case "AUTH":
			if c.auth == nil {
				c.auth = map[string]bool{}
			}
			for _, m := range strings.Fields(rest) {
				c.auth[m] = true
			}
		}
	}
}

// quit sends QUIT and closes the connection, if one is open.
func (s *session) quit(ctx context.Context) {
	if s.c == nil {
		return
	}
	// An exchange of its own (Config.Timeout), perhaps long after the
	// last message's began (a wait, the run's end).
	s.c.nc.SetDeadline(time.Now().Add(s.r.cfg.Timeout))
	s.c.bw.WriteString("QUIT\r\n")
	if s.flush(ctx, "quit") == nil {
		if _, _, err := s.reply(ctx, "quit"); err != nil {
			return
		}
	}
	s.close()
}

// rset ends a transaction that failed, on a connection that is kept.
func (s *session) rset(ctx context.Context) {
	// An exchange of its own (Config.Timeout), as QUIT: the message's
	// time may be all but spent by a refusal that came late in it, and an
	// RSET under what was left of it timed out at once, a second error
	// for one refused message, and the connection lost.
	s.c.nc.SetDeadline(time.Now().Add(s.r.cfg.Timeout))
	s.c.bw.WriteString("RSET\r\n")
	if s.flush(ctx, "rset") != nil {
		return
	}
	if code, _, err := s.reply(ctx, "rset"); err == nil && code/100 != 2 {
		s.close()
	}
}

// message sends message k, which started at t0 (ns since the run's
// base), opening a connection first if none is open, and reports what
// became of it.
func (s *session) message(ctx context.Context, k, t0 int64) outcome {
	r := s.r
	s.counted = false
	if s.c == nil {
		if err := s.open(ctx); err != nil {
			s.ahead = nil // sent ahead on a connection gone: it fails here, once
			return s.openFailed(ctx, k, t0, err)
		}
	}
	s.c.nc.SetDeadline(time.Now().Add(r.cfg.Timeout))
	// A message sent ahead on a connection that has since broken is sent
	// again from its MAIL on the new one.
	turn := int64(-1)
	if a := s.ahead; a != nil && a.c == s.c {
		turn = a.turn
	}
	s.ahead = nil
	ok, open := s.transaction(ctx, k, turn)
	if !ok && s.stale {
		s.stale = false
		if err := s.open(ctx); err != nil {
			return s.openFailed(ctx, k, t0, err)
		}
		s.c.nc.SetDeadline(time.Now().Add(r.cfg.Timeout))
		ok, open = s.transaction(ctx, k, -1) // s.c is new: not used, so not stale again
	}
	if s.c != nil {
		s.c.used = true
	}
	out := delivered
	if ok {
		s.counted = false // a refused recipient's: the message was delivered
		if s.c != nil {
			s.c.delivered = true
		}
		s.backoff = 0
		s.done(phaseMessage, k, t0)
		if r.cfg.Digests {
			s.digests = append(s.digests, r.tmpl.digest(k))
		}
	} else {
		out = s.failed(ctx, k, t0)
	}
	switch {
	case s.c == nil:
	case !r.cfg.Reuse:
		s.quit(ctx)
	case open:
		s.rset(ctx)
	}
	return out
}

// closedByPeer reports whether err is how a connection the peer has
// closed fails a read or a write.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err)
}

// What became of a message.
type outcome int

const (
	delivered outcome = iota
	failed
	abandoned // under way when the run stopped: unknown
)

// failed records message k, started at t0 and not delivered, as failed,
// or as abandoned if the run is stopping (its context ended) and no
// error was counted for it: its reply may be unread, so its fate is
// unknown.
func (s *session) failed(ctx context.Context, k, t0 int64) outcome {
	if ctx.Err() != nil && !s.counted {
		return abandoned
	}
	s.done(phaseFailed, k, t0)
	return failed
}

// openFailed records message k, whose connection failed to open with
// err, as failed or abandoned (failed). A setup that ended the run (an
// extension not offered, a certificate that does not verify, AUTH
// refused) sent no MAIL: the message failed, its fate known.
func (s *session) openFailed(ctx context.Context, k, t0 int64, err error) outcome {
	if errors.Is(err, errEnded) {
		s.done(phaseFailed, k, t0)
		return failed
	}
	return s.failed(ctx, k, t0)
}

// transaction sends MAIL, RCPT and the data of message k and reports
// whether the server accepted the message and whether a transaction is
// left open (to be reset). A broken connection is closed (s.c = nil).
// turn >= 0 says that the MAIL, RCPTs and DATA were written behind the
// last message's data, whose last reply came at turn.
func (s *session) transaction(ctx context.Context, k, turn int64) (ok, open bool) {
	r := s.r
	c := s.c
	s.hdr = r.tmpl.header(s.hdr[:0], k)
	bdat := c.chunking && r.cfg.Chunking
	s.cur = r.tmpl.bodyOf(k, !bdat)
	pipe := c.pipelining && r.cfg.Pipelining
	s.pipe, s.chunk = s.pipe || pipe, s.chunk || bdat
	s.retryable = !(bdat && pipe)
	defer func() { s.retryable = false }()
	if pipe {
		return s.pipelined(ctx, k, bdat, turn)
	}
	if c.xforward {
		s.xforward()
		if s.flush(ctx, "xforward") != nil {
			return false, false
		}
		if _, _, err := s.reply(ctx, "xforward"); err != nil {
			return false, false
		}
	}
	c.bw.Write(s.mail(k))
	t := r.now()
	if s.flush(ctx, "mail") != nil {
		return false, false
	}
	code, _, err := s.reply(ctx, "mail")
	if err != nil {
		return false, false
	}
	s.since(phaseMail, t)
	if code/100 != 2 {
		return false, false
	}
	accepted := 0
	for i := range r.rcptCmds {
		c.bw.Write(s.rcpt(k, i))
		t := r.now()
		if s.flush(ctx, "rcpt") != nil {
			return false, false
		}
		code, _, err := s.reply(ctx, "rcpt")
		if err != nil {
			return false, false
		}
		s.since(phaseRcpt, t)
		if code/100 == 2 {
			accepted++
		}
	}
	r.n.rcptOK.Add(int64(accepted))
	if accepted == 0 {
		return false, true
	}
	if bdat {
		return s.chunks(ctx, accepted, false)
	}
	c.bw.WriteString("DATA\r\n")
	t = r.now()
	if s.flush(ctx, "data") != nil {
		return false, false
	}
	code, _, err = s.reply(ctx, "data")
	if err != nil {
		return false, false
	}
	s.since(phaseData, t)
	if code != 354 {
		return false, true
	}
	return s.data(ctx, accepted)
}

// pipelined sends MAIL, the RCPTs and DATA (or the BDAT chunks) in one
// write, unless they were sent ahead (turn >= 0: their turn came then),
// and reads their replies.
func (s *session) pipelined(ctx context.Context, k int64, bdat bool, turn int64) (ok, open bool) {
	r := s.r
	c := s.c
	t := turn
	if turn < 0 {
		if bdat {
			s.envelope(k)
			return s.chunks(ctx, 0, true)
		}
		s.envelope(k)
		c.bw.WriteString("DATA\r\n")
		t = r.now()
		if s.flush(ctx, "mail") != nil {
			return false, false
		}
	}
	mailOK, accepted, err := s.envelopeReplies(ctx, t)
	if err != nil {
		return false, false
	}
	code, _, err := s.reply(ctx, "data")
	if err != nil {
		return false, false
	}
	s.since(phaseData, t)
	if code != 354 {
		return false, mailOK
	}
	if !mailOK || accepted == 0 {
		// The server takes data for a transaction it has refused (RFC
		// 2920 allows it): end the data at once.
		c.bw.WriteString(".\r\n")
		if s.flush(ctx, "dot") != nil {
			return false, false
		}
		if _, _, err := s.reply(ctx, "dot"); err != nil {
			return false, false
		}
		return false, false
	}
	return s.data(ctx, accepted)
}

// envelope buffers message k's XFORWARD (if sent), MAIL and RCPTs.
func (s *session) envelope(k int64) {
	s.xforward()
	s.c.bw.Write(s.mail(k))
	for i := range s.r.rcptCmds {
		s.c.bw.Write(s.rcpt(k, i))
	}
}

// mail returns message k's MAIL command, valid until the next call:
// with SIZE=, RET=, ENVID= and SMTPUTF8 as asked for and offered.
func (s *session) mail(k int64) []byte {
	r := s.r
	c := s.c
	size := !r.cfg.NoSize && c.size
	dsn := (r.cfg.DSNRet != "" || r.cfg.DSNEnvID != "") && c.dsn
	utf8 := c.smtputf8 && s.needsUTF8(k)
	if r.cfg.FromList == nil && !size && !dsn && !utf8 {
		return r.mailCmd
	}
	b := append(s.mailBuf[:0], "MAIL FROM:<"...)
	if l := r.cfg.FromList; l != nil {
		b = append(b, l[k%int64(len(l))]...)
	} else {
		b = append(b, r.cfg.From...)
	}
	b = append(b, '>')
	if size {
		b = append(b, " SIZE="...)
		b = strconv.AppendInt(b, r.tmpl.size(k), 10)
	}
	if dsn && r.cfg.DSNRet != "" {
		b = append(b, " RET="...)
		b = append(b, r.cfg.DSNRet...)
	}
	if dsn && r.cfg.DSNEnvID != "" {
		b = append(b, " ENVID="...)
		b = appendXtext(b, r.cfg.DSNEnvID)
		b = append(b, '.')
		b = strconv.AppendInt(b, k, 10)
	}
	if utf8 {
		b = append(b, " SMTPUTF8"...)
	}
	s.mailBuf = append(b, "\r\n"...)
	return s.mailBuf
}

// needsUTF8 reports whether message k's sender or a recipient is not
// all ASCII.
func (s *session) needsUTF8(k int64) bool {
	r := s.r
	if r.cfg.FromList == nil && r.cfg.ToList == nil {
		return r.utf8
	}
	if l := r.cfg.FromList; l != nil && !isASCII(l[k%int64(len(l))]) || l == nil && !isASCII(r.cfg.From) {
		return true
	}
	if l := r.cfg.ToList; l != nil {
		for i := range r.rcptCmds {
			if !isASCII(l[(k*int64(r.cfg.Recipients)+int64(i))%int64(len(l))]) {
				return true
			}
		}
		return false
	}
	return !isASCII(r.cfg.To)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// appendXtext appends v as RFC 3461 xtext: '+', '=' and characters
// outside '!' to '~' as "+XX".
func appendXtext(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < '!' || c > '~' || c == '+' || c == '=' {
			b = append(b, '+', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
		} else {
			b = append(b, c)
		}
	}
	return b
}

// rcpt returns the i-th RCPT command of message k, valid until the next
// call, with NOTIFY= if asked for and offered.
func (s *session) rcpt(k int64, i int) []byte {
	cmd := s.rcptCmd(k, i)
	if s.r.cfg.DSNNotify == "" || !s.c.dsn {
		return cmd
	}
	b := append(s.notifyBuf[:0], cmd[:len(cmd)-2]...)
	b = append(b, " NOTIFY="...)
	b = append(b, s.r.cfg.DSNNotify...)
	s.notifyBuf = append(b, "\r\n"...)
	return s.notifyBuf
}

// rcptCmd is rcpt without NOTIFY.
func (s *session) rcptCmd(k int64, i int) []byte {
	r := s.r
	if l := r.cfg.ToList; l != nil {
		b := append(s.rcptBuf[:0], "RCPT TO:<"...)
		b = append(b, l[(k*int64(r.cfg.Recipients)+int64(i))%int64(len(l))]...)
		s.rcptBuf = append(b, ">\r\n"...)
		return s.rcptBuf
	}
	if !r.cfg.NumberRecipients {
		return r.rcptCmds[i]
	}
	b := append(s.rcptBuf[:0], "RCPT TO:<"...)
	b = strconv.AppendInt(b, r.n.rcptSeq.Add(1), 10)
	b = append(b, r.cfg.To...)
	s.rcptBuf = append(b, ">\r\n"...)
	return s.rcptBuf
}

// xforward buffers XFORWARD when it is to be sent.
func (s *session) xforward() {
	if s.c.xforward {
		s.c.bw.WriteString("XFORWARD ")
		s.c.bw.WriteString(s.r.cfg.XForward)
		s.c.bw.WriteString("\r\n")
	}
}

// envelopeReplies reads the replies to a pipelined XFORWARD (if sent),
// MAIL and its RCPTs, whose turn came at t.
func (s *session) envelopeReplies(ctx context.Context, t int64) (mailOK bool, accepted int, err error) {
	if s.c.xforward {
		if _, _, err := s.reply(ctx, "xforward"); err != nil {
			return false, 0, err
		}
	}
	code, _, err := s.reply(ctx, "mail")
	if err != nil {
		return false, 0, err
	}
	s.since(phaseMail, t)
	mailOK = code/100 == 2
	for range s.r.rcptCmds {
		code, _, err := s.reply(ctx, "rcpt")
		if err != nil {
			return false, 0, err
		}
		s.since(phaseRcpt, t)
		if code/100 == 2 {
			accepted++
		}
	}
	if !mailOK {
		accepted = 0
	}
	s.r.n.rcptOK.Add(int64(accepted))
	return mailOK, accepted, nil
}

// data sends the message's header and dot-stuffed body after a 354 and
// reads the end-of-data reply (LMTP: one per accepted recipient). When
// pipelining on a kept connection, the next message's MAIL, RCPTs and
// DATA follow the end line in the same write, if there is a next message
// and (in open loop) it is due.
func (s *session) data(ctx context.Context, accepted int) (ok, open bool) {
	r := s.r
	c := s.c
	t := r.now()
	if r.tmpl.dotHeader {
		s.hdrDots = stuffLines(s.hdrDots[:0], s.hdr)
		c.bw.Write(s.hdrDots)
	} else {
		c.bw.Write(s.hdr)
	}
	s.cur.writeData(c.bw)
	if r.cfg.Reuse && r.cfg.Pipelining && c.pipelining && r.cfg.Wait == 0 && r.cfg.RandomWait == 0 {
		if k, t0, ok := s.claimDue(ctx); ok {
			s.envelope(k)
			c.bw.WriteString("DATA\r\n")
			s.ahead = &ahead{k: k, t0: t0, c: c, turn: -1}
		}
	}
	if s.flush(ctx, "dot") != nil {
		return false, false
	}
	ok, open = s.endReplies(ctx, accepted, t)
	if a := s.ahead; a != nil {
		// The next message's turn comes now: the server has done with
		// this one. In closed loop the message starts now too, as it
		// would have without pipelining; in open loop it counts from its
		// intended start, so the wait behind this one is charged to it.
		a.turn = r.now()
		if !r.cfg.openLoop() {
			a.t0 = a.turn
		}
	}
	return ok, open
}

// claimDue takes the next message of the run if there is one and, in open
// loop, its intended start has come, and counts it started.
func (s *session) claimDue(ctx context.Context) (k, t0 int64, ok bool) {
	r := s.r
	if ctx.Err() != nil {
		return 0, 0, false
	}
	if !r.cfg.openLoop() {
		if r.over(r.now()) {
			return 0, 0, false
		}
		k = r.next.Add(1) - 1
		if k >= int64(r.cfg.Messages) {
			return 0, 0, false
		}
		t0 = r.now()
	} else {
		if r.over(r.now()) {
			return 0, 0, false // no message starts after Duration
		}
		for {
			k = r.next.Load()
			if k >= int64(r.cfg.Messages) {
				return 0, 0, false
			}
			t0, _ = r.sched.at(k)
			if t0 > r.now() || r.over(t0) { // never is neither due nor under Duration
				return 0, 0, false // not due: it goes out on its own, on time
			}
			if r.next.CompareAndSwap(k, k+1) {
				break
			}
		}
		r.recordLate(r.now() - t0)
	}
	r.n.started.Add(1)
	return k, t0, true
}

// endReplies reads the replies to the end of a message's data, sent from
// t on: one, or in LMTP one per accepted recipient.
func (s *session) endReplies(ctx context.Context, accepted int, t int64) (ok, open bool) {
	r := s.r
	n := 1
	if r.cfg.LMTP {
		n = accepted
	}
	delivered := false
	for i := 0; i < n; i++ {
		code, _, err := s.reply(ctx, "dot")
		if err != nil {
			return false, false
		}
		if code/100 == 2 {
			delivered = true
		}
	}
	s.since(phaseDot, t)
	if r.cfg.Counter != nil {
		r.counterMu.Lock()
		fmt.Fprintf(r.cfg.Counter, "%d\r", r.n.data.Add(1))
		r.counterMu.Unlock()
	} else {
		r.n.data.Add(1)
	}
	if delivered {
		r.n.bytes.Add(int64(len(s.hdr) + s.cur.size()))
	}
	return delivered, false
}

// chunks sends the message as BDAT chunks of ChunkSize bytes, with
// textproto's chunk writers. In a pipelined group (the MAIL and RCPTs are
// buffered before them), all chunks go out in one go and the replies are
// read after; otherwise each chunk waits for its reply, and accepted says
// how many recipients the server took.
func (s *session) chunks(ctx context.Context, accepted int, pipelined bool) (ok, open bool) {
	r := s.r
	c := s.c
	size := r.cfg.ChunkSize
	if pipelined {
		t := r.now()
		cw := c.tw.ChunkWriter(size)
		cw.Write(s.hdr)
		cw.Write(s.cur.body)
		cw.Write(s.cur.bodyTail)
		if err := cw.Close(); err != nil { // flushes the group
			s.groupFail(ctx, cw.Chunks(), err)
			return false, false
		}
		mailOK, acc, err := s.envelopeReplies(ctx, t)
		if err != nil {
			return false, false
		}
		ok := true
		for i := 0; i < cw.Chunks()-1; i++ {
			code, _, err := s.reply(ctx, "bdat")
			if err != nil {
				return false, false
			}
			ok = ok && code/100 == 2
		}
		if !mailOK || acc == 0 {
			// No transaction: the last chunk is refused once.
			if _, _, err := s.reply(ctx, "dot"); err != nil {
				return false, false
			}
			return false, mailOK
		}
		if !ok {
			// A chunk was refused, and with it the message. In LMTP,
			// servers answer the last chunk either once per accepted
			// recipient, as RFC 2033 §4.2 has every end of data
			// answered, or once, the transaction being gone: read one,
			// and take up to acc-1 refusals before the reply to the
			// next command (RSET or QUIT, whose replies are 2xx) as the
			// rest. No recipient of a refused message can take it, so
			// none of those replies is a success.
			if _, _, err := s.reply(ctx, "dot"); err != nil {
				return false, false
			}
			if r.cfg.LMTP {
				c.lastReplies = acc - 1
			}
			return false, true
		}
		return s.endReplies(ctx, acc, t)
	}
	t := r.now()
	total := len(s.hdr) + s.cur.size()
	for off := 0; ; {
		n := min(size, total-off)
		last := off+n == total
		if err := c.tw.WriteChunk(s.span(off, n), last); err != nil { // flushes
			phase := "bdat"
			if last {
				phase = "dot" // as its reply is counted
			}
			s.writeFail(ctx, phase, err)
			return false, false
		}
		if last {
			return s.endReplies(ctx, accepted, t)
		}
		off += n
		code, _, err := s.reply(ctx, "bdat")
		if err != nil {
			return false, false
		}
		if code/100 != 2 {
			return false, true
		}
	}
}

// span returns bytes off to off+n of the message, its header, its body
// and the body's tail, as one slice: a piece of the header or the body,
// or where it holds parts of two, or of the tail, the parts copied into
// s.msg. So a session holds a chunk's worth, not a copy of the message.
func (s *session) span(off, n int) []byte {
	h, b, end := len(s.hdr), len(s.cur.body), off+n
	switch {
	case end <= h:
		return s.hdr[off:end]
	case off >= h && end <= h+b:
		return s.cur.body[off-h : end-h]
	}
	m := s.msg[:0]
	if off < h {
		m = append(m, s.hdr[off:]...)
	}
	if off < h+b {
		m = append(m, s.cur.body[max(off-h, 0):min(end-h, b)]...)
	}
	if end > h+b {
		m = append(m, s.cur.bodyTail[max(off-h-b, 0):end-h-b]...)
	}
	s.msg = m
	return m
}

package smtpsink

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/internal/sockbuf"
	"github.com/wirespeed/wirespeed/internal/unixsock"
	"github.com/wirespeed/wirespeed/netio"
)

// A Message is what Config.OnMessage learns about an accepted message.
type Message struct {
	Session uint64 // the session's number, from 1, in the order the sessions were accepted
	Seq     int    // the message's number in its session, from 1
	From    string // the reverse path, without its angle brackets ("" for <>)
	// To is the accepted recipients, without angle brackets: Decide's,
	// those RCPT accepted; OnMessage's, in LMTP, those whose reply to
	// the data accepted the message (as Stats.Recipients counts them).
	// Decide's and OnMessage's Message of one message share it where
	// these are the same: read it, do not change it.
	To         []string
	Size       int64      // bytes of data: CRLF line endings included, dot-stuffing removed
	Digest     digest.Sum // of the data, if Config.Digest is set
	Body       string     // the MAIL BODY parameter: "", "7BIT", "8BITMIME" or "BINARYMIME"
	SMTPUTF8   bool       // MAIL had the SMTPUTF8 parameter
	Chunks     int        // BDAT chunks; 0 for DATA
	RemoteAddr net.Addr   // the client's address
	TLS        bool       // the message came over TLS
	// ClientCert is the subject of the certificate the TLS client gave
	// and Config.TLS verified (ClientAuth, ClientCAs), if any.
	ClientCert string
	// Authenticated: the client had authenticated (AUTH), as AuthUser.
	Authenticated bool
	AuthUser      string
	// Refused is for Config.Decide: the sink's own reply, or its Rules',
	// refuses the message (in LMTP, for every recipient), unless Decide
	// chooses another. It is false in OnMessage's Message.
	Refused bool
}

// A SessionInfo is what Config.OnSessionEnd learns about a session that
// has ended.
type SessionInfo struct {
	Session    uint64   // as in Message
	RemoteAddr net.Addr // the client's address
	Messages   int      // messages accepted in the session
	// Quit: the session ended with QUIT. Otherwise the peer left, a
	// time limit or a forced reply closed it, or the server closed (it
	// is then counted in Stats.Aborted).
	Quit bool
}

// Stats are a Server's counters.
type Stats struct {
	Sessions uint64 `json:"sessions"` // accepted connections
	Active   uint64 `json:"active"`   // sessions open now
	Aborted  uint64 `json:"aborted"`  // sessions that ended without QUIT (the peer left, a timeout, a forced close, a callback's panic)
	Refused  uint64 `json:"refused"`  // connections over MaxConns answered with 421 (Config.RefuseOverMaxConns); not sessions
	TLS      uint64 `json:"tls"`      // TLS handshakes completed (STARTTLS or implicit TLS)
	Messages uint64 `json:"messages"` // messages accepted (counted once OnMessage has returned)
	// Unsent counts the messages accepted (and counted in Messages)
	// whose 250 never left: the connection failed before the reply
	// could be written to it (a reset, a write that failed, a bad TLS
	// record once TLS has failed, a callback's panic, which drops the
	// session's replies). Its client has no reply and will
	// most likely send the message again.
	Unsent     uint64 `json:"unsent"`
	Recipients uint64 `json:"recipients"` // recipients of the messages accepted (LMTP: replies 250 to the data)
	Bytes      uint64 `json:"bytes"`      // data bytes of the messages accepted
	// Errors counts the 4xx and 5xx replies written, by code, whether
	// or not they left (see Positive), but for the 421 that Close sends
	// to every session left (those are in Aborted) and the 421 to a
	// connection over MaxConns (in Refused).
	Errors map[int]uint64 `json:"errors"`
	// Positive counts the 2xx and 3xx replies written, by code (a
	// multiline reply once), whether or not they left: a reply that a
	// failed connection or a callback's panic dropped is counted still,
	// as the 250 of each message in Unsent is. A session adds those of
	// a message when the message's data has its reply, the rest when it
	// ends: the replies of a transaction still open are not in it yet.
	Positive map[int]uint64 `json:"positive"`
}

// ErrorCount returns the number of 4xx and 5xx replies.
func (s Stats) ErrorCount() uint64 {
	var n uint64
	for _, v := range s.Errors {
		n += v
	}
	return n
}

// counters are the live Stats.
type counters struct {
	sessions, active, aborted, refused, tls, messages, unsent, recipients, bytes atomic.Uint64
	codes                                                                        [200]atomic.Uint64 // replies 400 to 599
	okCodes                                                                      [200]atomic.Uint64 // replies 200 to 399
}

// A Server is a sink listening on a TCP address or a Unix domain socket.
type Server struct {
	cfg     Config
	h       hooks
	ln      net.Listener
	ehlo    []byte // the EHLO reply
	ehloTLS []byte // the EHLO reply over TLS
	help    string // HELP's reply text
	helpTLS string // HELP's reply text over TLS
	k       knobs  // Config.Force and Config.Delay
	rules   rules  // Config.Rules by stage

	removeSocket func() // removes a Unix socket's file while it is this server's
	keepEnvelope bool   // sessions keep the sender and recipients: OnMessage, Decide, Capture or rules want them
	stats        counters

	timerLag atomic.Int64 // how late the loops run a pause's timer, smoothed (ns)

	serving atomic.Bool
	stop    chan struct{} // closed: accept no more
	kill    chan struct{} // closed: sessions end now
	once    sync.Once
	// unwatch forgets Listen's ctx once the server has closed, so that
	// a ctx that lives on (a program's, a test suite's) does not keep
	// every server made with it (mu).
	unwatch func() bool
	kOnce   sync.Once
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
	// pending is wg's count, which Shutdown reads: none once it stops
	// accepting means none to wait for (enter and leave keep it).
	pending atomic.Int64
	nextID  atomic.Uint64
	traceMu sync.Mutex // serializes writes to Config.Trace
	// traceFailed: a write to Config.Trace failed, and it gets no more
	// (traceMu).
	traceFailed bool
	readers     sync.Pool // *bufio.Reader of h.readBuf bytes
	writers     sync.Pool // *bufio.Writer of writeBufSize bytes
	sem         chan struct{}

	// The loops engine's (mu guards all but drained).
	loops       *netio.Loops
	live        map[*loopSession]struct{} // the sessions on the loops
	waiting     []*loopSession            // for a slot of MaxConns, in order
	slots       int                       // of MaxConns, in use
	drainOnce   sync.Once
	drained     chan struct{} // closed when the loops' Shutdown has returned
	drainCtx    context.Context
	drainCancel context.CancelFunc // ends the loops' Shutdown: they close
}

// hooks let tests reach inside; Listen passes none.
type hooks struct {
	sleep   func(d time.Duration)   // Delay: waits d (nil: a timer, cut short by Close)
	wrap    func(net.Conn) net.Conn // wraps each accepted connection
	readBuf int                     // size of each session's read buffer (0: readBufSize)
	ackNow  func()                  // called at each quick-ACK request (see connIO)
	now     func() time.Time        // the sessions' clock for their deadlines (nil: time.Now)
	read    func(n int)             // told of each read of n bytes from a client (loops: once the session has served them)
	percent func() float64          // a Rule's draw in [0, 100) (nil: math/rand/v2)
	message func()                  // told of each Message built for Decide or OnMessage
}

// readBufSize is a session's read buffer: large enough that a pipelined
// group and most of a message window arrive in one read system call.
const readBufSize = 64 << 10

// writeBufSize is a session's reply buffer; one EHLO reply or a few
// hundred pipelined replies fit.
const writeBufSize = 4 << 10

// Listen listens on cfg.Addr and returns the Server; call Serve to accept
// sessions. The Server is closed when ctx is done, as if by Close; once
// Close or Shutdown has returned, ctx no longer refers to it. A
// Config it cannot serve is a *ConfigError, which matches ErrConfig.
func Listen(ctx context.Context, cfg Config) (*Server, error) {
	return listen(ctx, cfg, hooks{})
}

func listen(ctx context.Context, cfg Config, h hooks) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	switch cfg.Addr {
	case "":
		return nil, configErr("Addr", "Addr empty: want HOST:PORT (port 0 picks one) or unix:PATH")
	case "unix:":
		return nil, configErr("Addr", "Addr %q: no socket path", cfg.Addr)
	}
	cfg = cfg.withDefaults()
	var lc net.ListenConfig
	network, addr := "tcp", cfg.Addr
	switch cfg.IPVersion {
	case 4:
		network = "tcp4"
	case 6:
		network = "tcp6"
	}
	if cfg.WindowSize > 0 {
		lc.Control = sockbuf.Control(cfg.WindowSize)
	}
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		lc.Control = nil // as Postfix's smtp-sink -T: TCP only
		network, addr = "unix", path
	}
	var ln net.Listener
	var err error
	remove := func() {}
	if network == "unix" {
		ln, remove, err = unixsock.Listen(ctx, &lc, addr) // a stale socket taken over, as Postfix's smtp-sink does
	} else {
		ln, err = lc.Listen(ctx, network, addr)
	}
	if err != nil {
		return nil, err
	}
	s := newServer(cfg, h)
	s.ln, s.removeSocket = ln, remove
	s.mu.Lock() // a ctx done already runs Close at once
	s.unwatch = context.AfterFunc(ctx, func() { s.Close() })
	s.mu.Unlock()
	return s, nil
}

// newServer makes the Server of a Config that has been validated and
// given its defaults.
func newServer(cfg Config, h hooks) *Server {
	if h.readBuf == 0 {
		h.readBuf = readBufSize
	}
	s := &Server{cfg: cfg, h: h, stop: make(chan struct{}), kill: make(chan struct{}), conns: map[net.Conn]struct{}{},
		live: map[*loopSession]struct{}{}}
	s.drainCtx, s.drainCancel = context.WithCancel(context.Background())
	s.ehlo, s.ehloTLS = ehloReply(&cfg, false), ehloReply(&cfg, true)
	s.help, s.helpTLS = helpText(&cfg, false), helpText(&cfg, true)
	s.k = newKnobs(&cfg)
	s.rules = newRules(&cfg)
	s.keepEnvelope = cfg.OnMessage != nil || cfg.Decide != nil || cfg.Capture != nil ||
		s.rules[StageData] != nil || s.rules[StageDot] != nil
	if cfg.MaxConns > 0 {
		s.sem = make(chan struct{}, cfg.MaxConns)
	}
	return s
}

// Addr returns the address the server listens on: a *net.TCPAddr, or a
// *net.UnixAddr for an Addr of unix:PATH.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Engine returns the engine the server runs its sessions on:
// Config.Engine, or where that is empty the system's default.
func (s *Server) Engine() Engine { return s.cfg.Engine }

// ErrServing is returned by a second call to Serve.
var ErrServing = errors.New("smtpsink: Serve called twice")

// Serve accepts sessions until Close or Shutdown, and then returns nil;
// it returns an error if accepting fails otherwise.
func (s *Server) Serve() error {
	if !s.serving.CompareAndSwap(false, true) {
		return ErrServing
	}
	if s.cfg.Engine == EngineLoops {
		return s.serveLoops()
	}
	var backoff time.Duration
	wait := s.sem != nil && !s.cfg.RefuseOverMaxConns
	for {
		if wait {
			select {
			case s.sem <- struct{}{}:
			case <-s.stop:
				return nil
			}
		}
		c, err := s.ln.Accept()
		if err != nil {
			if wait {
				<-s.sem
			}
			select {
			case <-s.stop:
				return nil
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && !errors.Is(err, net.ErrClosed) {
				// Out of file descriptors and the like: wait and retry,
				// as net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.logf("smtpsink: accept: %v; retrying in %v", err, backoff)
				t := time.NewTimer(backoff)
				select {
				case <-t.C:
				case <-s.stop:
					t.Stop()
					return nil
				}
				continue
			}
			return err
		}
		backoff = 0
		if s.sem != nil && !wait {
			select {
			case s.sem <- struct{}{}:
			default:
				s.refuse(c)
				continue
			}
		}
		if !s.track(c) {
			c.Close()
			return nil
		}
		go func() {
			defer s.untrack(c)
			s.serveConn(c, func() {
				if s.sem != nil {
					<-s.sem
				}
			})
		}()
	}
}

// refuse answers a connection over MaxConns with 421 and closes it.
func (s *Server) refuse(c net.Conn) {
	s.stats.refused.Add(1)
	c.SetWriteDeadline(time.Now().Add(closeGrace))
	c.Write([]byte(s.inClear("421 4.7.0 " + s.cfg.Hostname + " Error: too many connections, try again later\r\n")))
	c.Close()
}

// inClear is reply, said to a connection that gets no session (over
// MaxConns, or as the server stops), unless the server speaks implicit
// TLS: that client would take it for a bad TLS record, and the close
// alone tells it to try again later.
func (s *Server) inClear(reply string) string {
	if s.cfg.TLSImplicit {
		return ""
	}
	return reply
}

// track registers c, unless the server is stopping.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.stop:
		return false
	default:
	}
	s.conns[c] = struct{}{}
	s.enter()
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.leave()
}

// enter counts what Close and Shutdown wait for: a session, or a
// goroutine of one. Once the server stops accepting, only a session
// already counted enters anything.
func (s *Server) enter() {
	s.pending.Add(1)
	s.wg.Add(1)
}

// leave ends what enter counted.
func (s *Server) leave() {
	s.pending.Add(-1)
	s.wg.Done()
}

// serveConn runs one session on c and closes c; then it calls closed
// (if not nil), which frees the session's slot, and OnSessionEnd.
func (s *Server) serveConn(c net.Conn, closed func()) {
	id := s.nextID.Add(1)
	s.stats.sessions.Add(1)
	s.stats.active.Add(1)
	plain := c
	if s.h.wrap != nil {
		plain = s.h.wrap(c)
	}
	rw := plain
	if s.cfg.Trace != nil {
		rw = &traceConn{Conn: plain, s: s, id: id}
	}
	ss := newSession(s, rw, c.RemoteAddr(), id)
	ss.plain = plain
	ss.cio.qa = newQuickAck(c)
	quit := false
	// Deferred, so that a callback that ends the goroutine
	// (runtime.Goexit: a t.FailNow in OnMessage) still closes the
	// connection, frees the slot and counts the session's end; one that
	// panics ends its session only, logged, as on the loops engine (see
	// Config.ErrorLog).
	defer func() {
		if v := recover(); v != nil {
			s.logf("smtpsink: session %d: panic in a callback: %v\n%s", id, v, debug.Stack())
		}
		if !quit {
			s.stats.aborted.Add(1)
		}
		ss.closeTLS()
		c.Close()
		s.stats.unsent.Add(ss.cio.unsent())
		nmsg := ss.nmsg
		s.guard(id, ss.release) // a Capture writer's Close
		s.stats.active.Add(^uint64(0))
		if closed != nil {
			closed()
		}
		if s.cfg.OnSessionEnd != nil {
			s.guard(id, func() {
				s.cfg.OnSessionEnd(SessionInfo{Session: id, RemoteAddr: c.RemoteAddr(), Messages: nmsg, Quit: quit})
			})
		}
	}()
	quit = ss.run()
}

// Close stops accepting, ends every session with a 421 reply (RFC 5321
// §3.8; a session whose client does not read gets closeGrace for it),
// closes the connections and waits for the sessions to end. It may be
// called more than once, and concurrently, but not from a Config callback
// (OnMessage, Decide, OnCommand, OnSessionEnd...), which would wait for its
// own session: there, call it in a goroutine of its own (go s.Close()).
func (s *Server) Close() error { return s.close(true) }

// close is Close; without wait it returns once the connections are
// closed, not waiting for the sessions' ends (a callback may still
// hold one), as Shutdown does once its ctx is done.
func (s *Server) close(wait bool) error {
	defer s.forgetCtx()
	err := s.stopAccepting()
	s.kOnce.Do(func() { close(s.kill) })
	s.mu.Lock()
	for c := range s.conns {
		c.SetReadDeadline(aLongTimeAgo) // wakes the session's read
	}
	loops := s.loops != nil
	s.mu.Unlock()
	if loops {
		s.closeLoops()
		defer func() {
			s.drainCancel() // the loops close what is left
			if wait {
				<-s.drained
			}
		}()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-done:
		return err
	case <-t.C:
	}
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	if loops {
		s.drainCancel()
	}
	if wait {
		<-done
	}
	return err
}

// aLongTimeAgo is a read deadline that has passed.
var aLongTimeAgo = time.Unix(1, 0)

// closeGrace bounds how long Close waits for a session to write its 421
// (and Shutdown's sessions, if its ctx ends).
const closeGrace = time.Second

// Shutdown stops accepting and waits for the open sessions to end
// (their clients to QUIT) until ctx is done, and then closes them as
// Close does, returning ctx's error. It returns nil if no session was
// left to wait for, even with a ctx done from the start, as net/http's
// Server.Shutdown does (a session whose OnSessionEnd still runs is
// left). A session that has not ended a second after ctx was done
// (closeGrace: a client that does not read its 421, or a Config
// callback that blocks) has its connection closed, and Shutdown does
// not wait for its end, where Close does: call Close after it to wait
// for every session's end (OnSessionEnd's call and Stats' count). On
// EngineLoops a callback that blocks holds its loop: the sessions on
// that loop get no 421 and keep their connections until it returns,
// though Shutdown has returned. As Close, it is not for a callback.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.stopAccepting()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.forgetCtx()
		return err
	case <-ctx.Done():
		if s.pending.Load() == 0 {
			// Nothing was left to wait for (done's goroutine may not
			// have told it yet): as net/http's Shutdown, no error.
			s.forgetCtx()
			return err
		}
		s.close(false)
		return ctx.Err()
	}
}

// forgetCtx stops watching Listen's ctx: the server has closed. (Not
// before: a Shutdown still waiting is cut short by it, as by Close.)
func (s *Server) forgetCtx() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unwatch != nil {
		s.unwatch()
	}
}

func (s *Server) stopAccepting() error {
	var err error
	s.once.Do(func() {
		s.mu.Lock()
		close(s.stop)
		loops := s.loops != nil
		s.mu.Unlock()
		switch {
		case loops:
			s.startDrain() // it closes the listener, which is the loops' now
		case s.ln != nil:
			err = s.ln.Close()
		}
		if s.removeSocket != nil {
			s.removeSocket()
		}
	})
	return err
}

// Stats returns the counters so far.
func (s *Server) Stats() Stats {
	st := Stats{
		Sessions:   s.stats.sessions.Load(),
		Active:     s.stats.active.Load(),
		Aborted:    s.stats.aborted.Load(),
		Refused:    s.stats.refused.Load(),
		TLS:        s.stats.tls.Load(),
		Messages:   s.stats.messages.Load(),
		Unsent:     s.stats.unsent.Load(),
		Recipients: s.stats.recipients.Load(),
		Bytes:      s.stats.bytes.Load(),
		Errors:     map[int]uint64{},
		Positive:   map[int]uint64{},
	}
	for i := range s.stats.codes {
		if n := s.stats.codes[i].Load(); n > 0 {
			st.Errors[400+i] = n
		}
		if n := s.stats.okCodes[i].Load(); n > 0 {
			st.Positive[200+i] = n
		}
	}
	return st
}

// traceConn copies a session's reads and writes to Config.Trace.
type traceConn struct {
	net.Conn
	s   *Server
	id  uint64
	buf []byte
}

func (t *traceConn) Read(p []byte) (int, error) {
	n, err := t.Conn.Read(p)
	if n > 0 {
		t.trace('<', p[:n])
	}
	return n, err
}

func (t *traceConn) Write(p []byte) (int, error) {
	n, err := t.Conn.Write(p)
	if n > 0 {
		t.trace('>', p[:n])
	}
	return n, err
}

func (t *traceConn) trace(dir byte, p []byte) { t.buf = t.s.trace(t.buf, t.id, dir, p) }

// trace writes a line of session id's to Config.Trace, built in buf,
// and returns buf for the next line.
func (s *Server) trace(buf []byte, id uint64, dir byte, p []byte) []byte {
	b := strconv.AppendUint(buf[:0], id, 10)
	b = append(b, ' ', dir, ' ')
	b = strconv.AppendQuote(b, string(p))
	b = append(b, '\n')
	s.traceMu.Lock()
	defer s.traceMu.Unlock() // deferred: a Write that panics ends its session only
	if s.traceFailed {
		return b
	}
	n, err := s.cfg.Trace.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		// A trace with holes would pass for a whole one: none at all.
		s.traceFailed = true
		s.logf("smtpsink: Trace: %v; tracing stopped", err)
	}
	return b
}

// logf writes to ErrorLog. A panic in its writer is dropped: it has
// nowhere to go, and the session ending or the error being told must
// still be counted.
func (s *Server) logf(format string, args ...any) {
	defer func() { recover() }()
	s.cfg.ErrorLog.Printf(format, args...)
}

// now is the sessions' clock.
func (s *Server) now() time.Time {
	if s.h.now != nil {
		return s.h.now()
	}
	return time.Now()
}

package smtpsink

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/sockbuf"
)

// Config describes a sink. The zero value (with Addr set) is an ESMTP sink
// with PIPELINING, 8BITMIME, CHUNKING, BINARYMIME and SMTPUTF8, no size
// limit, strict framing (a bare CR or LF fails the message with 550) and
// the default line and recipient limits.
type Config struct {
	// Addr is the TCP address to listen on (port 0 picks one), or
	// unix:PATH for a Unix domain socket (as Postfix's smtp-sink takes
	// it), whose file the server creates and removes when it closes, if
	// the file is still its own (not another server's, made after this
	// one's was deleted). Listen refuses an empty Addr and unix: without
	// a path.
	Addr string

	// IPVersion 4 or 6 listens on that IP version only (smtp-sink -4,
	// -6): a TCP Addr without a host then means that version's wildcard
	// address, and one of the other version fails to listen. 0 means
	// either. A unix: Addr ignores IPVersion and WindowSize.
	IPVersion int

	// WindowSize, if positive, sets the listening socket's receive and
	// send buffers (SO_RCVBUF, SO_SNDBUF) to that many bytes before it
	// listens; its connections take them on, and so a TCP window no
	// larger (smtp-sink -T; with DataReadDelay and a large message, a
	// client's writes block soon). Unix systems only.
	WindowSize int

	// LMTP serves LMTP (RFC 2033) instead of SMTP: LHLO instead of
	// HELO/EHLO, and one reply per accepted recipient after the data.
	LMTP bool

	// HeloRequired refuses MAIL before HELO or EHLO (503), as Postfix's
	// smtpd_helo_required does. By default MAIL may come first, as with
	// Postfix's smtp-sink and smtpd (smtp-source -o), except after
	// STARTTLS or XCLIENT, which begin the session anew; LMTP always
	// needs LHLO first.
	HeloRequired bool

	// Hostname is the name in the greeting and the HELO/EHLO reply;
	// empty means "smtp-sink".
	Hostname string

	// Greeting, if set, is the greeting's text after "220 " in place of
	// Hostname's, one line: "********" is the greeting of a Cisco PIX
	// (smtp-sink -P, with NoESMTP).
	Greeting string

	// MaxSize bounds the size of a message's data, CRLF line endings
	// included and dot-stuffing removed (RFC 1870), and is announced in
	// the EHLO reply's SIZE keyword. A MAIL command declaring more is
	// refused with 552; a message that turns out larger is read to its end
	// and refused with 552. 0 means no limit.
	MaxSize int64

	// MaxCommandBytes bounds a command line, CRLF not counted. A longer
	// line is skipped to its end and answered with 500, and the session
	// goes on. 0 means DefaultMaxCommandBytes; it also bounds the memory a
	// session holds for a command.
	MaxCommandBytes int

	// MaxDataLineBytes bounds each line of a message as sent, CRLF not
	// counted and, after DATA, a stuffing dot counted (RFC 5321 allows
	// 998 bytes and does not count the dot: 998 refuses a 998-byte line
	// that starts with a dot, 999 takes it and a 999-byte line without a
	// dot too); a message with a longer line is read to its end and
	// refused with 500. 0 means no limit: the data is streamed, so memory
	// stays bounded anyway.
	MaxDataLineBytes int

	// MaxRecipients bounds the recipients of one transaction; more are
	// refused with 452. 0 means DefaultMaxRecipients.
	MaxRecipients int

	// Bare says what to do with a bare CR or LF in a message (one not part
	// of a CRLF): dot.BareReject (the default) refuses the message with
	// 550 after reading it to its end, dot.BareKeep keeps it as data,
	// dot.BareNormalize takes a bare LF for a line ending. Under every
	// policy only CRLF "." CRLF ends DATA (RFC 5321 §4.1.1.4).
	Bare dot.BarePolicy

	// Extensions that are announced unless turned off.
	NoESMTP      bool // EHLO is refused (502); clients fall back to HELO
	NoPipelining bool
	No8BitMIME   bool
	NoChunking   bool // neither CHUNKING (BDAT) nor BINARYMIME
	NoSMTPUTF8   bool
	NoDSN        bool // DSN's parameters (RFC 3461) are checked, then ignored
	NoXCLIENT    bool // Postfix's XCLIENT: checked, then a new greeting (as smtpd)
	NoXFORWARD   bool // Postfix's XFORWARD: checked, then 250
	// NoEnhancedStatusCodes leaves ENHANCEDSTATUSCODES out of the EHLO
	// reply; the replies keep their enhanced codes, as Postfix's
	// smtp-sink -E does.
	NoEnhancedStatusCodes bool

	// TLS, if set, offers STARTTLS (RFC 3207) with this configuration
	// (its Certificates, GetCertificate or GetConfigForClient: one at
	// least, or ErrConfig; see SelfSigned), or with TLSImplicit speaks TLS
	// from the connection's first byte (SMTPS, RFC 8314) and offers no
	// STARTTLS. After STARTTLS the session forgets all it knew (RFC 3207
	// §4.2: the client must EHLO again, and authenticate again), and
	// whatever the client sent after the STARTTLS line before the
	// handshake, in the clear, is thrown away unread. TLSRequired refuses
	// MAIL, RCPT, DATA, BDAT, VRFY, EXPN, AUTH and HELP before TLS with
	// 530 (RFC 3207 §4). A failed handshake ends the session, and its
	// error (a callback's, such as GetCertificate's, or the client's, or
	// the Timeout) goes to ErrorLog, unless Close ended it.
	TLS         *tls.Config
	TLSImplicit bool
	TLSRequired bool

	// Auth offers AUTH PLAIN and LOGIN (RFC 4954, RFC 4616), initial
	// responses included; a client line "*" cancels an exchange (501).
	// AuthUsers, if set, holds the only credentials accepted (user name
	// to password); without it any are. Wrong ones get 535. AUTH is
	// offered and served over TLS only (before it, 538, RFC 4954 §6),
	// unless AuthPlaintext. Authenticating is never required to send
	// mail; Message says whether the client did, and as whom. The
	// response lines of an exchange are bounded by MaxCommandBytes or
	// 12288 bytes, whichever is more (RFC 4954 §4). AuthUsers,
	// AuthPlaintext or AuthMechanisms without Auth is ErrConfig.
	Auth          bool
	AuthUsers     map[string]string
	AuthPlaintext bool
	// AuthMechanisms are the SASL mechanisms AUTH offers, of
	// AuthMechanisms (the package variable): CRAM-MD5 (RFC 2195; it
	// needs the password, so with AuthUsers it checks the digest against
	// it, and without, takes any), XOAUTH2 and OAUTHBEARER (RFC 7628; the
	// token is checked as the password). Empty means PLAIN and LOGIN.
	AuthMechanisms []string

	// Digest, if set, hashes the data of every message; Message.Digest
	// holds the sum.
	Digest digest.Algorithm

	// OnCommand, if set, is called with each command line a session
	// takes as it came, before the reply (a forced one too), and with "."
	// at the end of a message's DATA: not with EHLO under NoESMTP, XCLIENT
	// or XFORWARD turned off, nor with the lines of an AUTH exchange or of
	// a message (what Postfix smtp-sink's -s logs). It is called as
	// OnMessage is, on the session's goroutine or loop, which it holds
	// meanwhile.
	OnCommand func(session uint64, line string)

	// OnMessage, if set, is called for each message accepted, after its
	// data has been read and before the reply that accepts it is sent, so
	// a client that has seen the reply knows the call has returned. It is
	// called from the session's goroutine, or on EngineLoops from its
	// event loop (which serves no other session meanwhile): sessions call
	// it concurrently.
	//
	// A callback that panics ends its session only (see ErrorLog). A
	// callback must not call runtime.Goexit (t.Fatal, t.FailNow:
	// the testing package allows them on the test's goroutine only; use
	// t.Error): on EngineGoroutine the session then ends as if the client
	// had left, but on EngineLoops it ends the event loop, and the
	// sessions on it hang.
	OnMessage func(Message)

	// Decide, if set, chooses the reply to a message's data once its
	// last byte has been read, from its envelope (and from its bytes, if
	// Capture has kept them): a Reply with a code of 200 to 299 accepts
	// the message with that reply (the sink's own if its Text is empty),
	// one of 400 to 599 refuses it (in LMTP, for every recipient, but a
	// 421 is sent once; 421 and Close close the connection after it),
	// Close with no code closes the connection with no reply, the message
	// not accepted (as Force's), and the zero Reply, or any other code,
	// leaves the sink's own reply
	// (and the Rules'); a Text that is not one line (a CR, LF or NUL in
	// it) is replaced by the generic one for its code. It is not called for a message whose
	// data failed (too large, a bare CR or LF) or whose reply Force sets; it is
	// called as OnMessage is, before it. Message.Seq is the number the
	// message gets if accepted; Message.Refused tells whether the sink
	// (its Rules) would refuse it.
	Decide func(Message) Reply

	// Capture, if set, is called when a message's data begins (after
	// DATA's 354, or with its first BDAT chunk) with its transaction;
	// the message's data, as Digest sees it (up to its first problem:
	// a bare CR or LF, the size limit), is written to the writer it
	// returns (nil: none), which is closed at the message's end, after
	// Decide's call and before its reply and before Delay["."]'s wait,
	// whatever the reply (so Decide sees what was written, not what a
	// writer keeps only when closed), or when the transaction or the
	// session ends in the data. How the data is split among the Writes
	// is unspecified, only what they add up to: a Write need not end at
	// a line's end, and the engines differ (EngineLoops writes what each
	// read brought as it comes, EngineGoroutine holds DATA's bytes up to
	// 32 KiB at a time), so a writer that wants lines must find them
	// itself. A writer that has a method CloseWithError(error) error,
	// as *io.PipeWriter does, is closed
	// with it instead when the data is not whole: with the data's error
	// (as dot's: too large, a bare CR or LF, a line too long) or, for a
	// message cut short, ErrAborted. A Write never fails the session,
	// but a writer that failed (a Write, after which it gets no more,
	// or its Close returned an error) refuses a message that would be
	// accepted with 451 4.3.0 (in LMTP, to each recipient that would
	// get 250): no message is acknowledged whose capture was not kept.
	// A Capture that returns nil captures nothing and refuses nothing. Capture, the writes
	// and Close are called as OnMessage is (on EngineLoops, from the
	// loop: no long waits).
	Capture func(Transaction) io.WriteCloser

	// OnSessionEnd, if set, is called when a session has ended and its
	// connection is closed, from the session's goroutine or event loop
	// (sessions call it concurrently); Stats counts the session as ended
	// by then, and its slot of MaxConns is free. Close waits for the call
	// to return, and so does Shutdown until its ctx is done; a call that
	// blocks holds its session (on EngineLoops, its loop and the sessions
	// on it) until it returns.
	OnSessionEnd func(SessionInfo)

	// Force gives commands a reply of their own instead of the normal one
	// (test knobs, as Postfix smtp-sink's -f, -r, -q and -Q). The keys are
	// command names in upper case (HELO, EHLO, LHLO, MAIL, RCPT, DATA,
	// BDAT, RSET, NOOP, VRFY, QUIT, ...), "CONNECT" for the greeting and
	// "." for the reply to a message's data (after DATA's end line or BDAT
	// LAST). These two pseudo keys name events only: a client's line "."
	// or "CONNECT ..." is an unknown command (500) whatever Force says.
	// A Force reply is sent as given: a 421 closes the connection only
	// with Close set (as Postfix smtp-sink's -b 421 with -r goes on),
	// where Rules and Decide close after any 421 (RFC 5321 §3.8). See
	// [Reply].
	Force map[string]Reply

	// Rules give the replies to given clients, addresses and stages, in
	// place of the sink's own (see Rule and ParseRule); the first that
	// matches and wins its odds decides.
	Rules []Rule

	// Delay is how long to wait before replying to each command named
	// (the names of Force), as Postfix smtp-sink's -W: "DATA" before the
	// 354 reply (smtp-sink's -w), "." before the reply to a message's data
	// (after DATA's end line or the LAST BDAT chunk), "CONNECT" before the
	// greeting (pseudo keys, as in Force: never a client's line). Replies
	// to earlier pipelined commands still in the buffer wait with it.
	Delay map[string]time.Duration

	// AbortData makes every DATA fail as Postfix smtp-sink's -A does: the
	// 354 reply, a wait of AbortDataDelay, then 550 and a closed
	// connection, with nothing more read from the client, which may be
	// in the middle of sending the message (the kernel may then reset
	// the connection before the client reads the 550). A test knob for
	// a client's handling of a server that gives up mid-message.
	AbortData      bool
	AbortDataDelay time.Duration

	// DataReadDelay, if positive, is a wait after the 354 reply to DATA
	// before the message's data is first read (smtp-sink -H): the client
	// may send meanwhile only what the socket buffers take (see
	// WindowSize), and then waits in a write, a test of its write
	// timeout. The wait does not count against Timeout.
	DataReadDelay time.Duration

	// Timeout bounds each command: a command line must arrive whole
	// within Timeout of the sink's starting to wait for it, and each
	// write to the client must complete within it. A session that runs
	// out of time gets 421 and is closed. 0 means DefaultTimeout;
	// negative, none.
	Timeout time.Duration

	// MinDataRate is the slowest a message's data may arrive, in bytes a
	// second, on average (DATA's, and each BDAT chunk's): the data's
	// deadline starts Timeout ahead, and each read of N bytes moves it on
	// by N/MinDataRate seconds but never to more than Timeout after that
	// read, as Postfix's smtpd_min_data_rate does; so a client dripping a
	// byte a second is ended about Timeout after its data began (the
	// data's deadline is kept up to Timeout/64 late, which spares a fast
	// stream a timer change at every read). 0 means
	// DefaultMinDataRate; negative, none (each read then has Timeout).
	MinDataRate int64

	// MaxConns bounds the sessions served at once. Further connections
	// wait in the listen queue (as with Postfix's smtp-sink; on
	// EngineLoops, accepted but not greeted) until a session ends, or,
	// with RefuseOverMaxConns, are accepted, answered with 421 and closed
	// (as Postfix's smtpd does), counted in Stats.Refused. Under
	// TLSImplicit they are closed with nothing said: the client reads
	// only TLS records. 0 means DefaultMaxConns; negative, no limit.
	MaxConns           int
	RefuseOverMaxConns bool

	// MaxDiscardBytes bounds what the sink reads only to throw away: the
	// rest of a message's DATA after a problem with it (too large, a
	// line too long, a bare CR or LF), counted from the problem; the rest
	// of the BDAT chunk the problem is in, counted from the end of what
	// was read with it (at most a read buffer, 64 KiB, more); and a
	// refused BDAT chunk, or the later chunks of a refused message,
	// counted from their start (so a message in chunks may have up to
	// twice the bound thrown away). Past it the session gets 421 and is
	// closed, as it cannot stay in step otherwise. 0 means
	// DefaultMaxDiscardBytes; negative, no limit.
	MaxDiscardBytes int64

	// Trace, if set, receives every read from and write to each client,
	// one line per system call: "ID < "..."" for what was read and
	// "ID > "..."" for what was written, quoted as Go strings, so a
	// pipelined group and the one write answering it show as such (as
	// Postfix smtp-sink's -v shows the conversations). Writes to it are
	// serialized. A Write that fails (or writes short) ends the trace:
	// its error goes to ErrorLog, once, and Trace gets no more, for a
	// trace with holes would pass for a whole one; the sessions go on.
	// A Write that panics ends the session it traces (see ErrorLog);
	// one that blocks holds up every traced session (on EngineLoops,
	// their loops), and Close waits for it (Shutdown, until its ctx is
	// done).
	Trace io.Writer

	// ErrorLog receives accept errors, failed TLS handshakes and the
	// panics of Config callbacks; nil means the log package's standard
	// logger.
	//
	// A callback (OnCommand, Decide, Capture and its writer, OnMessage,
	// OnSessionEnd, Trace's Write) that panics ends its own session only, on either
	// engine, as a net/http handler's panic does: the panic is recovered,
	// its value and stack are logged here, and the connection is closed
	// at once, its replies not yet sent dropped (a message whose
	// OnMessage or Decide panicked gets no reply, and is not counted in
	// Stats; the 250s dropped are in Stats.Unsent). The session then ends
	// as one the client left: it is counted in Stats.Aborted, and
	// OnSessionEnd is called, with Quit false, after the log line. A
	// panic in OnSessionEnd, or in a Capture writer's Close as its
	// session ends, is logged the same way, and the session's end still
	// counted. The server and its other sessions go on. A panic in
	// ErrorLog's own writer loses its line, nothing else; a Write of its
	// that blocks holds the session that logs (on EngineLoops, its loop),
	// and Close waits for it (Shutdown, until its ctx is done).
	ErrorLog *log.Logger

	// Engine is how sessions are run: EngineLoops (the default on Linux)
	// or EngineGoroutine (the default elsewhere).
	Engine Engine
}

// An Engine is how a Server runs its sessions.
type Engine string

const (
	// EngineGoroutine serves each session on a goroutine of its own, with
	// a 64 KiB read buffer and a 4 KiB reply buffer.
	EngineGoroutine Engine = "goroutine"
	// EngineLoops serves the sessions as state machines on netio's event
	// loops (Linux only): an idle session holds no buffer, and replies to
	// what one read brought leave in one write. A TLS handshake runs on a
	// goroutine, the session over TLS on the loop again; a Delay
	// pauses it with a timer on its loop; OnMessage and OnSessionEnd are called
	// from the loops, so they must not block. Connections
	// over MaxConns are accepted and wait unanswered until a slot is
	// free, up to 4096 of them (MaxConns, if more: what a listen queue
	// holds); beyond, they are refused as with RefuseOverMaxConns.
	EngineLoops Engine = "loops"
)

// Defaults for the zero fields of Config.
const (
	// DefaultMaxCommandBytes is Postfix's line_length_limit: RFC 5321
	// sets 512 bytes with CRLF, which extensions' parameters may exceed.
	DefaultMaxCommandBytes = 2048
	// DefaultMaxRecipients is the number of recipients of one
	// transaction that the sink accepts by default; RFC 5321 §4.5.3.1.8
	// requires at least 100.
	DefaultMaxRecipients = 1000
	// DefaultTimeout is Postfix smtp-sink's -t.
	DefaultTimeout = 100 * time.Second
	// DefaultMinDataRate is Postfix's smtpd_min_data_rate, in bytes a
	// second.
	DefaultMinDataRate = 500
	// DefaultMaxConns is Postfix smtp-sink's -m.
	DefaultMaxConns = 256
	// DefaultMaxDiscardBytes is what the sink reads of a refused
	// message's data, past its problem, before it gives up on the
	// session.
	DefaultMaxDiscardBytes = 64 << 20
)

// withDefaults returns the Config with its zero fields set to the
// defaults, and the negative ones that mean none to 0.
func (c Config) withDefaults() Config {
	if c.Hostname == "" {
		c.Hostname = "smtp-sink"
	}
	if c.MaxCommandBytes == 0 {
		c.MaxCommandBytes = DefaultMaxCommandBytes
	}
	if c.MaxRecipients == 0 {
		c.MaxRecipients = DefaultMaxRecipients
	}
	if len(c.AuthMechanisms) == 0 {
		c.AuthMechanisms = defaultAuthMechanisms
	}
	c.Timeout = orDefault(c.Timeout, DefaultTimeout)
	c.MinDataRate = orDefault(c.MinDataRate, DefaultMinDataRate)
	c.MaxConns = orDefault(c.MaxConns, DefaultMaxConns)
	c.MaxDiscardBytes = orDefault(c.MaxDiscardBytes, DefaultMaxDiscardBytes)
	if c.ErrorLog == nil {
		c.ErrorLog = log.Default()
	}
	if c.Engine == "" {
		c.Engine = defaultEngine
	}
	return c
}

// orDefault is v, or def if v is 0, or 0 (none) if v is negative.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// A Reply is a forced reply (see Config.Force). Code must be 0 or 400 to
// 599. A command with a forced reply has no effect, except that the data
// of a message ("." or BDAT) is still read to its end so the session stays
// in step; a forced BDAT reply fails its transaction.
type Reply struct {
	Code  int    // the reply code; 0 sends none (Close must then be set)
	Text  string // the text after the code, one line; empty: a generic one for the code
	Close bool   // close the connection after the reply
}

// text returns the reply's text, or Postfix smtp-sink's for its class
// ("4.3.0 Error: command failed", "5.3.0 ...").
func (r Reply) text() string {
	if r.Text != "" {
		return r.Text
	}
	return string(rune('0'+r.Code/100)) + ".3.0 Error: command failed"
}

// ForceCommands are the names Config.Force and Config.Delay accept:
// command verbs, and the pseudo keys "CONNECT" (the greeting) and "." (the
// reply to a message's data), which name events, never a client's line: a
// client line "." or "CONNECT x" is an unknown command (500) whatever
// Force and Delay say.
var ForceCommands = []string{"CONNECT", "HELO", "EHLO", "LHLO", "MAIL", "RCPT", "DATA", "BDAT", ".", "RSET", "NOOP", "VRFY", "EXPN", "HELP", "QUIT", "STARTTLS", "AUTH", "XCLIENT", "XFORWARD"}

// The pseudo keys of Force and Delay.
const (
	keyConnect = "CONNECT"
	keyDataEnd = "."
)

// knobs are Config.Force and Config.Delay split into two namespaces: the
// client's verbs, which a command line can name, and the events (the
// greeting, the end of a message's data), which no command line can.
type knobs struct {
	force   map[string]Reply         // by verb; no pseudo key
	delay   map[string]time.Duration // by verb; no pseudo key
	connect event
	dataEnd event
}

// An event's forced reply and delay.
type event struct {
	reply  Reply
	forced bool
	delay  time.Duration
}

func newKnobs(cfg *Config) knobs {
	k := knobs{force: map[string]Reply{}, delay: map[string]time.Duration{}}
	for name, r := range cfg.Force {
		switch name {
		case keyConnect:
			k.connect.reply, k.connect.forced = r, true
		case keyDataEnd:
			k.dataEnd.reply, k.dataEnd.forced = r, true
		default:
			k.force[name] = r
		}
	}
	for name, d := range cfg.Delay {
		switch name {
		case keyConnect:
			k.connect.delay = d
		case keyDataEnd:
			k.dataEnd.delay = d
		default:
			if d > 0 {
				k.delay[name] = d
			}
		}
	}
	return k
}

func (c *Config) validate() error {
	for _, f := range []struct {
		field string
		v     any // what the message shows
		neg   bool
	}{
		{"MaxSize", c.MaxSize, c.MaxSize < 0}, {"MaxCommandBytes", c.MaxCommandBytes, c.MaxCommandBytes < 0},
		{"MaxDataLineBytes", c.MaxDataLineBytes, c.MaxDataLineBytes < 0}, {"MaxRecipients", c.MaxRecipients, c.MaxRecipients < 0},
		{"AbortDataDelay", c.AbortDataDelay, c.AbortDataDelay < 0}, {"DataReadDelay", c.DataReadDelay, c.DataReadDelay < 0},
		{"WindowSize", c.WindowSize, c.WindowSize < 0},
	} {
		if f.neg {
			return configErr(f.field, "%s %v: negative limit", f.field, f.v)
		}
	}
	if c.WindowSize > sockbuf.MaxSize {
		return configErr("WindowSize", "WindowSize %d: more than a socket takes (%d)", c.WindowSize, sockbuf.MaxSize)
	}
	if c.IPVersion != 0 && c.IPVersion != 4 && c.IPVersion != 6 {
		return configErr("IPVersion", "IPVersion %d: want 4, 6 or 0", c.IPVersion)
	}
	if !oneLine(c.Hostname) {
		return configErr("Hostname", "Hostname %q: not one line", c.Hostname)
	}
	if !oneLine(c.Greeting) {
		return configErr("Greeting", "Greeting %q: not one line", c.Greeting)
	}
	if c.Digest != 0 && !c.Digest.Valid() {
		return configErr("Digest", "Digest %d: %w", uint8(c.Digest), digest.ErrUnknownAlgorithm)
	}
	if c.TLS != nil && len(c.TLS.Certificates) == 0 && c.TLS.GetCertificate == nil && c.TLS.GetConfigForClient == nil {
		// crypto/tls's Listen refuses it so: every handshake would fail.
		return configErr("TLS", "TLS: no certificate (neither Certificates, GetCertificate nor GetConfigForClient set)")
	}
	for _, f := range []struct {
		field string
		set   bool
	}{{"TLSImplicit", c.TLSImplicit}, {"TLSRequired", c.TLSRequired}} {
		if f.set && c.TLS == nil {
			return configErr(f.field, "%s needs TLS", f.field)
		}
	}
	for _, f := range []struct {
		field string
		set   bool
	}{{"AuthUsers", c.AuthUsers != nil}, {"AuthMechanisms", c.AuthMechanisms != nil}, {"AuthPlaintext", c.AuthPlaintext}} {
		if f.set && !c.Auth {
			return configErr(f.field, "%s needs Auth", f.field)
		}
	}
	if c.Auth && c.TLS == nil && !c.AuthPlaintext {
		return configErr("Auth", "Auth needs TLS, or AuthPlaintext")
	}
	for _, m := range c.AuthMechanisms {
		if !slices.Contains(AuthMechanisms, m) {
			return configErr("AuthMechanisms", "AuthMechanisms: unknown mechanism %q (of %s)", m, strings.Join(AuthMechanisms, " "))
		}
	}
	switch c.Engine {
	case "", EngineGoroutine, EngineLoops:
	default:
		return configErr("Engine", "unknown engine %q (goroutine or loops)", c.Engine)
	}
	if c.Bare > dot.BareNormalize {
		return configErr("Bare", "unknown bare CR/LF policy %d", c.Bare)
	}
	// The maps in the order of their keys: of several entries at fault,
	// the error names the same one every time.
	for _, name := range slices.Sorted(maps.Keys(c.Delay)) {
		if !slices.Contains(ForceCommands, name) {
			return configErr("Delay", "Delay: unknown command %q (one of %s)", name, strings.Join(ForceCommands, " "))
		}
		if d := c.Delay[name]; d < 0 {
			return configErr("Delay", "Delay[%s]: %v: negative", name, d)
		}
	}
	for i, r := range c.Rules {
		if err := r.check(); err != nil {
			return configErr("Rules", "Rules[%d]: %s: %w", i, r.Stage, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Force)) {
		if !slices.Contains(ForceCommands, name) {
			return configErr("Force", "Force: unknown command %q (one of %s)", name, strings.Join(ForceCommands, " "))
		}
		r := c.Force[name]
		if r.Code == 0 && !r.Close || r.Code != 0 && (r.Code < 400 || r.Code > 599) {
			return configErr("Force", "Force[%s]: code %d: want 400 to 599, or 0 with Close", name, r.Code)
		}
		if !oneLine(r.Text) {
			return configErr("Force", "Force[%s]: text %q: not one line", name, r.Text)
		}
	}
	return nil
}

// ErrConfig is what Listen returns for a Config it cannot serve: a
// *ConfigError says which field.
var ErrConfig = errors.New("smtpsink: bad configuration")

// A ConfigError is the error of a Config Listen cannot serve: it matches
// ErrConfig, and Field names the Config field at fault (as "Hostname";
// for a map's entry, the map, as "Force", with the key in the message).
// Where the fault is in two fields together, Field is the one that is
// set and needs the other (as "TLSRequired", without TLS).
type ConfigError struct {
	Field string
	msg   string
	err   error // what it wraps, if anything
}

func (e *ConfigError) Error() string        { return ErrConfig.Error() + ": " + e.msg }
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }
func (e *ConfigError) Unwrap() error        { return e.err }

// configErr returns a ConfigError for field, its message as fmt.Errorf
// makes it (a %w is unwrapped).
func configErr(field, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &ConfigError{Field: field, msg: err.Error(), err: errors.Unwrap(err)}
}

// oneLine reports whether s may go into a reply line as it is: a CR, LF
// or NUL in it would end the line early, or make a client read a reply
// the server never meant.
func oneLine(s string) bool { return !strings.ContainsAny(s, "\r\n\x00") }

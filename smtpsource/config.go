package smtpsource

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/sockbuf"
)

// Errors returned by Run. ErrStartTLS, ErrTLS and ErrAuth end a run at
// once: a server that does not offer STARTTLS, or refuses it for good, a
// certificate that does not verify, credentials or a mechanism the
// server refuses for good would fail every connection alike.
var (
	ErrConfig   = errors.New("smtpsource: bad configuration") // a *ConfigError says which field
	ErrConnect  = errors.New("smtpsource: no connection could be opened")
	ErrStartTLS = errors.New("smtpsource: STARTTLS not available")
	ErrTLS      = errors.New("smtpsource: TLS handshake failed")
	ErrAuth     = errors.New("smtpsource: authentication failed")
	// ErrHdrLog comes with the run's result, which it leaves whole:
	// writing Config.HdrLog failed, and the log stopped at that write
	// (none after it). The error wraps the writer's, and is joined to
	// the error that ended the run, if one did.
	ErrHdrLog = errors.New("smtpsource: writing the interval log (HdrLog) failed")
)

// A ConfigError is the error of a configuration Run cannot run (Check's,
// and Run's before it connects): it matches ErrConfig, and Field names
// the Config field at fault (as "From"; the first of them where the
// fault is in two together; empty where it is in none).
type ConfigError struct {
	Field string
	msg   string
}

func (e *ConfigError) Error() string        { return ErrConfig.Error() + ": " + e.msg }
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

// configErr returns a ConfigError for field, its message as fmt.Sprintf
// makes it.
func configErr(field, format string, args ...any) error {
	return &ConfigError{Field: field, msg: fmt.Sprintf(format, args...)}
}

// Config describes a run. Zero fields take the defaults noted; the ones
// that Postfix smtp-source(1) also has are named after its flags.
type Config struct {
	// Addr is host:port (port 25 if left out, 465 with TLSImplicit),
	// optionally "inet:host:port", or "unix:/path" for a UNIX-domain
	// socket.
	Addr     string
	Sessions int // -s: sessions in parallel (default 1, at most MaxSessions)
	Messages int // -m: messages in total (default 1)
	Length   int // -l: body bytes, not counting the header nor the last line's CRLF, at most MaxLength; 0: smtp-source's four-line default body
	// LengthMax, if above Length, spreads the bodies' lengths over Length
	// to LengthMax (-l MIN:MAX): message k's is picked by a hash of k, the
	// same in every run, and its body is the first that many bytes of the
	// LengthMax bytes' body (a CR left last becomes 'x'), then CRLF.
	LengthMax int
	// Reuse (-d) sends the next message on the same connection instead
	// of disconnecting. Each session then connects before it takes a
	// message; if that connection fails (a refused greeting, a failed
	// connect), the first message the session takes opens another, and a
	// failure of both is that message's, one error (whatever failed it);
	// the first connection's is an error of its own when that message is
	// delivered or abandoned at a stop, or the session takes none.
	Reuse      bool
	Recipients int    // -r: recipients per message (default 1, at most MaxRecipients), named "N"+To, ..., "2"+To, To
	From       string // -f: sender (default foo@Helo)
	To         string // -t: recipient (default foo@Helo)
	// Helo (-M) is the name given with EHLO (LHLO, HELO): a domain, its
	// labels of letters, digits, '-' and '_', or an address literal such
	// as [192.0.2.1] or [IPv6:2001:db8::1] (RFC 5321 §4.1.3); anything
	// else is ErrConfig. Default: the host name (localhost if it is no
	// such name).
	Helo    string
	Subject string // -S: a Subject header (default none; not with OldMode)
	LMTP    bool   // -L: speak LMTP (LHLO; one end-of-data reply per accepted recipient)
	// Counter, if set, gets a running count of completed messages as
	// smtp-source -c prints it: "N\r" each time, "\n" at the end of a
	// run that returns a Result (with no message completed, the "\n"
	// alone), none when no connection could be opened (ErrConnect).
	Counter io.Writer
	// NumberRecipients (-N) puts before each recipient a number no other
	// recipient of the run has (1, 2, 3, ...) instead of -r's numbers.
	NumberRecipients bool
	// OldMode (-o) sends neither EHLO (nor HELO, LHLO) nor a header: the
	// first transaction follows the greeting, and the message is its body.
	OldMode bool
	// Wait (-w) is how long a session waits after a message before it
	// starts its next; RandomWait (-R), a random time from 0 to it. One
	// of them at most, and not with QPS. A wait ends at Duration's end,
	// and the run with it.
	Wait, RandomWait time.Duration
	// ConnectTries (-C) is how many times a failed dial is tried before
	// the message fails (default 1); the retries are counted in
	// Result.ConnectRetries, the last failure as a connect error.
	ConnectTries int
	// WindowSize (-T), if positive, sets each socket's receive and send
	// buffers (SO_RCVBUF, SO_SNDBUF) before it connects, which bounds the
	// TCP window offered.
	WindowSize int
	// IPVersion 4 (-4) or 6 (-6) dials only that version; 0 either.
	IPVersion int

	// Pipelining sends MAIL, the RCPTs and DATA (or the BDAT chunks) in
	// one write when the server offers PIPELINING (RFC 2920); with Reuse
	// and DATA, that write is the one with the previous message's data.
	Pipelining bool
	// Chunking sends the message with BDAT when the server offers CHUNKING
	// (RFC 3030), in chunks of ChunkSize bytes (default 64 KiB).
	Chunking  bool
	ChunkSize int
	// Body is the body's kind: "" or "pattern" (smtp-source's lines of X
	// with a line counter), "mail" (text lines, some starting with '.'),
	// "base64" (76-character lines) or "longline" (one line of Length
	// bytes). Length bytes of it follow the header.
	Body string
	// Message, if set, is sent instead of a generated header and body, as
	// smtp-source -F does: its lines get CRLF endings (a missing last one
	// added) and are dot-stuffed on the wire. An empty one (or one of
	// MessageSet) is ErrConfig. Run never writes into Message nor
	// MessageSet's messages: one whose lines all end with CRLF already
	// (no bare CR or LF, a CRLF at its end) is sent from as it is, not
	// copied, and must not change while Run runs; Run holds a CRLF-ended
	// copy of any other for the run (so a caller that holds big messages
	// keeps them once by giving them CRLF-ended).
	Message []byte
	// MessageSet, if set, are messages sent in turn instead (-F with a
	// directory, an mbox or a Maildir; see LoadMessages): message k is
	// MessageSet[k mod len(MessageSet)], its lines CRLF-ended as Message's.
	MessageSet [][]byte
	// Headers are header lines ("Name: value") added to each message's
	// header, after the generated ones; with Message or MessageSet, before
	// the message's own.
	Headers []string
	// FromList and ToList, if set, are senders and recipients taken in
	// turn instead of From and To: message k is from FromList[k mod n] to
	// Recipients addresses of ToList from the (k*Recipients)-th on
	// (modulo its length). ToList needs at least Recipients addresses.
	FromList, ToList []string

	// TLS sends STARTTLS (RFC 3207) after EHLO and the rest of each
	// session over TLS, EHLO again first; TLSImplicit starts TLS as soon
	// as the connection is open instead (RFC 8314, port 465). TLSConfig,
	// if set, is used for them (a copy: its ServerName defaults to Addr's
	// host); its ClientSessionCache, if set, lets connections resume the
	// sessions of earlier ones.
	TLS, TLSImplicit bool
	TLSConfig        *tls.Config
	// NoSize leaves SIZE= out of MAIL. Otherwise each message's size (as
	// the server keeps it) goes with its MAIL as SIZE= (RFC 1870) when
	// the server offers SIZE.
	NoSize bool
	// XClient, if set, is sent as "XCLIENT " + XClient (Postfix's
	// XCLIENT: attributes such as "NAME=client.example ADDR=192.0.2.1")
	// once a connection is set up (after STARTTLS, before AUTH), when
	// the server offers XCLIENT; after its 220, EHLO is sent again.
	// XForward, if set, is sent as "XFORWARD " + XForward before each
	// MAIL (pipelined with it when pipelining), when the server offers
	// XFORWARD (Postfix's smtpd forgets the attributes after each
	// transaction). Where the server does not offer them, they are not
	// sent; their replies are counted under "xclient" and "xforward".
	XClient, XForward string
	// DSNNotify ("NEVER", or some of "SUCCESS,FAILURE,DELAY") is sent
	// with each RCPT as NOTIFY=, and DSNRet ("FULL" or "HDRS") and
	// DSNEnvID with MAIL as RET= and ENVID= (RFC 3461), when the server
	// offers DSN, and not otherwise. DSNEnvID gets ".k" (the message's
	// number) appended, and is sent xtext-encoded (ASCII, no control
	// characters).
	DSNNotify, DSNRet, DSNEnvID string
	// MAIL carries SMTPUTF8 (RFC 6531) when the server offers it and the
	// message's sender or a recipient is not all ASCII.

	// AuthUser, if set, has each connection authenticate with AUTH (RFC
	// 4954) after EHLO (and TLS) as AuthUser with AuthPass, by AuthMech:
	// "PLAIN" (the default; RFC 4616, its initial response on the AUTH
	// line), "LOGIN", "CRAM-MD5" (RFC 2195), or with AuthPass an OAuth 2.0
	// access token, "XOAUTH2" (Google's) or "OAUTHBEARER" (RFC 7628).
	AuthUser, AuthPass, AuthMech string

	// QPS > 0 starts messages on an open-loop schedule, message k at k/QPS
	// after the start, each on the next free session; its latency runs
	// from that intended start. 0: each session starts its next message as
	// soon as the last one is done.
	QPS float64
	// Stages, instead of QPS, is an open-loop schedule in stages, ramps
	// or constant rates one after another; after the last, the rate stays
	// at its To (none if 0). Each stage's messages have their latencies
	// apart in Result.Stages and in the interval log.
	Stages []Stage
	// Duration, if positive, ends the run when it has run so long (with
	// QPS, one interval, 1/QPS, at least): no message starts after it,
	// and the ones under way are finished (a message sent ahead behind
	// another's data, already started, too). In open loop, messages due
	// before it and not started by then are missed (Result.Missed).
	// With Messages 0 the messages are unlimited; with Messages 0 and
	// Stages, Duration 0 is the stages' total.
	Duration time.Duration
	// Spin is how long before each intended start a waiting session stops
	// sleeping and spins (default 30µs).
	Spin        time.Duration
	DialTimeout time.Duration // default 5s
	// Timeout bounds each exchange on a connection: its setup (the
	// greeting, EHLO, STARTTLS and the handshake, AUTH), each message
	// from MAIL to its last reply, the RSET after a failed one, QUIT
	// (default 100s, smtp-sink's own timeout). Past it the connection is
	// closed and an I/O error counted; but a refusal that had begun to
	// come when a write timed out is read within a Timeout of its own.
	Timeout time.Duration
	// Progress gets a line a second and one at the end of the run: the
	// time since the start, the messages delivered so far, the rate and
	// the latency percentiles of those delivered since the line before
	// ("-" where none was), failures and errors; nil for none. The last
	// line's rate is over the time since the line before, the part of a
	// second the run took after its last whole one.
	Progress io.Writer
	// HdrLog gets the HdrHistogram interval log of message latencies
	// (ns), written from Run's goroutine once the first connection has
	// opened; nil for none. At its first failed write (or short one) the
	// log stops, and Run returns the result with an error matching
	// ErrHdrLog.
	HdrLog io.Writer
	// Trace, if set, receives every read from and write to each
	// connection (after TLS, where TLS is used), one line per call:
	// "N < "..."" for what was read and "N > "..."" for what was written,
	// quoted as Go strings, N numbering the connections from 1; the
	// conversations, as Postfix's smtp-source -v shows them, with the
	// messages' data. Its writes are serialized with each other, not
	// with Progress's: one writer for both must be safe for concurrent
	// use (as an *os.File is).
	Trace io.Writer
	// Digests keeps the MD5 and size of each message the server accepted,
	// as it received the data (after dot-unstuffing, CRLF kept), in
	// Result.Digests, for Verify.
	Digests bool
	// Live, if set, is kept up to date with the run's counts as it goes,
	// for another goroutine to read (a metrics endpoint).
	Live *Live
}

// Check returns the error Run would return for cfg before connecting:
// one matching ErrConfig for a configuration it cannot run.
func (cfg Config) Check() error { return cfg.check() }

func (cfg *Config) check() error {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&cfg.Sessions, 1)
	if cfg.Messages == 0 && cfg.Duration == 0 && cfg.Stages != nil {
		for _, st := range cfg.Stages {
			cfg.Duration += st.Duration
		}
	}
	if cfg.Messages == 0 && cfg.Duration > 0 {
		cfg.Messages = math.MaxInt
	}
	def(&cfg.Messages, 1)
	def(&cfg.Recipients, 1)
	def(&cfg.ChunkSize, 64<<10)
	def(&cfg.ConnectTries, 1)
	if cfg.Helo == "" {
		// A host name EHLO cannot carry is not the user's doing: it
		// gives way to localhost rather than refuse the run.
		h, err := os.Hostname()
		if err != nil || checkHelo(h) != nil {
			h = "localhost"
		}
		cfg.Helo = h
	}
	if cfg.From == "" {
		cfg.From = "foo@" + cfg.Helo
	}
	if cfg.To == "" {
		cfg.To = "foo@" + cfg.Helo
	}
	cfg.From = strings.TrimSuffix(strings.TrimPrefix(cfg.From, "<"), ">")
	cfg.To = strings.TrimSuffix(strings.TrimPrefix(cfg.To, "<"), ">")
	if cfg.Spin == 0 {
		cfg.Spin = 30 * time.Microsecond
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 100 * time.Second
	}
	if cfg.Addr == "" {
		return configErr("Addr", "no address")
	}
	// Each negative count or time is refused naming its field.
	for _, f := range []struct {
		field string
		v     int64
	}{
		{"Sessions", int64(cfg.Sessions)}, {"Messages", int64(cfg.Messages)}, {"Length", int64(cfg.Length)},
		{"LengthMax", int64(cfg.LengthMax)}, {"Recipients", int64(cfg.Recipients)}, {"ChunkSize", int64(cfg.ChunkSize)},
		{"ConnectTries", int64(cfg.ConnectTries)}, {"WindowSize", int64(cfg.WindowSize)},
	} {
		if f.v < 0 {
			return configErr(f.field, "negative %s %d", f.field, f.v)
		}
	}
	for _, f := range []struct {
		field string
		v     time.Duration
	}{
		{"Duration", cfg.Duration}, {"Spin", cfg.Spin}, {"DialTimeout", cfg.DialTimeout}, {"Timeout", cfg.Timeout},
		{"Wait", cfg.Wait}, {"RandomWait", cfg.RandomWait},
	} {
		if f.v < 0 {
			return configErr(f.field, "negative %s %v", f.field, f.v)
		}
	}
	switch {
	case !(cfg.QPS >= 0) || math.IsInf(cfg.QPS, 1):
		return configErr("QPS", "QPS %g: want a rate of 0 or more", cfg.QPS)
	case cfg.Length > MaxLength:
		return configErr("Length", "body length %d over %d (1 GiB)", cfg.Length, MaxLength)
	case cfg.LengthMax > MaxLength:
		return configErr("LengthMax", "body length %d over %d (1 GiB)", cfg.LengthMax, MaxLength)
	case cfg.Sessions > MaxSessions:
		return configErr("Sessions", "%d sessions, over %d", cfg.Sessions, MaxSessions)
	case cfg.Recipients > MaxRecipients:
		return configErr("Recipients", "%d recipients per message, over %d", cfg.Recipients, MaxRecipients)
	case cfg.Wait > 0 && cfg.RandomWait > 0:
		return configErr("Wait", "a fixed and a random wait between messages")
	case cfg.Wait > 0 && cfg.openLoop():
		return configErr("Wait", "a wait between messages in open loop")
	case cfg.RandomWait > 0 && cfg.openLoop():
		return configErr("RandomWait", "a wait between messages in open loop")
	case cfg.QPS > 0 && cfg.Stages != nil:
		return configErr("QPS", "a rate and stages")
	case cfg.QPS > 0 && cfg.Duration > 0 && cfg.Duration.Seconds()*cfg.QPS < 1:
		// A message or none due in it is not a rate: at 1ns the one due
		// at the start was missed, "every session busy".
		return configErr("Duration", "duration %v shorter than one interval at %g msg/s", cfg.Duration, cfg.QPS)
	case cfg.WindowSize > sockbuf.MaxSize:
		return configErr("WindowSize", "window size %d: more than a socket takes (%d)", cfg.WindowSize, sockbuf.MaxSize)
	case cfg.IPVersion != 0 && cfg.IPVersion != 4 && cfg.IPVersion != 6:
		return configErr("IPVersion", "IP version %d is neither 4 nor 6", cfg.IPVersion)
	}
	// The EHLO name first: the default addresses are made of it.
	if err := checkHelo(cfg.Helo); err != nil {
		return configErr("Helo", "EHLO name %q: %v", cfg.Helo, err)
	}
	for _, f := range []struct {
		field, what, v string
		addr           bool
	}{{"From", "sender", cfg.From, true}, {"To", "recipient", cfg.To, true}, {"Subject", "subject", cfg.Subject, false}} {
		switch {
		case strings.ContainsAny(f.v, "\r\n\x00"):
			return configErr(f.field, "line break or NUL in the %s %q", f.what, f.v)
		case f.addr && strings.ContainsAny(f.v, "<>"):
			return configErr(f.field, "angle bracket in the %s %q", f.what, f.v)
		}
	}
	for _, f := range []struct{ field, verb, v string }{{"XClient", "XCLIENT", cfg.XClient}, {"XForward", "XFORWARD", cfg.XForward}} {
		if strings.ContainsAny(f.v, "\r\n\x00") {
			return configErr(f.field, "line break or NUL in the %s attributes %q", f.verb, f.v)
		}
	}
	if err := checkStages(cfg.Stages); err != nil {
		return err
	}
	if err := cfg.checkMessages(); err != nil {
		return err
	}
	cfg.AuthMech = strings.ToUpper(cfg.AuthMech)
	switch {
	case cfg.TLS && cfg.TLSImplicit:
		return configErr("TLS", "STARTTLS and implicit TLS together")
	case cfg.OldMode && (cfg.TLS || cfg.AuthUser != ""):
		return configErr("OldMode", "old mode (no EHLO) with STARTTLS or AUTH")
	case cfg.OldMode && (len(cfg.Headers) > 0 || cfg.Subject != ""):
		return configErr("OldMode", "old mode sends no header, so none of Headers or Subject")
	case cfg.AuthUser == "" && (cfg.AuthPass != "" || cfg.AuthMech != ""):
		return configErr("AuthUser", "a password or mechanism without a user")
	case cfg.AuthMech != "" && !slices.Contains(AuthMechs, cfg.AuthMech):
		return configErr("AuthMech", "AUTH mechanism %q is none of %s", cfg.AuthMech, strings.Join(AuthMechs, ", "))
	case strings.ContainsRune(cfg.AuthUser, 0):
		return configErr("AuthUser", "NUL in the user")
	case strings.ContainsRune(cfg.AuthPass, 0):
		return configErr("AuthPass", "NUL in the password")
	}
	if err := cfg.checkDSN(); err != nil {
		return err
	}
	if cfg.AuthUser != "" && cfg.AuthMech == "" {
		cfg.AuthMech = "PLAIN"
	}
	switch cfg.Body {
	case "", "pattern", "mail", "base64", "longline":
	default:
		return configErr("Body", "body %q is none of pattern, mail, base64, longline", cfg.Body)
	}
	if (cfg.Body == "base64" || cfg.Body == "longline" || cfg.Body == "mail") && cfg.Length == 0 && cfg.LengthMax == 0 && cfg.Message == nil && cfg.MessageSet == nil {
		return configErr("Body", "body %s needs a length", cfg.Body)
	}
	_, err := cfg.tlsConfig()
	return err
}

// MaxLength bounds Config.Length and LengthMax (-l): the body is made in
// memory before the run starts, one copy of it for all the sessions
// (each message's is a piece of it; DATA dot-stuffs it as it is written,
// BDAT sends it in chunks, neither from a copy).
const MaxLength = 1 << 30

// MaxSessions bounds Config.Sessions (-s): each is a goroutine, made at
// the start (with no message limit, all of them), and a connection, and
// TCP from one address to a server's port holds at most 65,535 at once.
// -s 1000000000 with -duration would have made a billion goroutines.
const MaxSessions = 100_000

// MaxRecipients bounds Config.Recipients (-r): their RCPT commands are
// made before the run starts.
const MaxRecipients = 1_000_000

// AuthMechs are the AUTH mechanisms Config.AuthMech may name.
var AuthMechs = []string{"PLAIN", "LOGIN", "CRAM-MD5", "XOAUTH2", "OAUTHBEARER"}

// checkDSN checks and upper-cases the DSN parameters.
func (cfg *Config) checkDSN() error {
	cfg.DSNNotify, cfg.DSNRet = strings.ToUpper(cfg.DSNNotify), strings.ToUpper(cfg.DSNRet)
	if n := cfg.DSNNotify; n != "" && n != "NEVER" {
		seen := map[string]bool{}
		for _, v := range strings.Split(n, ",") {
			if v != "SUCCESS" && v != "FAILURE" && v != "DELAY" || seen[v] {
				return configErr("DSNNotify", "NOTIFY=%s: want NEVER or some of SUCCESS,FAILURE,DELAY", n)
			}
			seen[v] = true
		}
	}
	if r := cfg.DSNRet; r != "" && r != "FULL" && r != "HDRS" {
		return configErr("DSNRet", "RET=%s: want FULL or HDRS", r)
	}
	for _, c := range cfg.DSNEnvID {
		if c < ' ' || c > '~' {
			return configErr("DSNEnvID", "ENVID %q: ASCII without control characters only", cfg.DSNEnvID)
		}
	}
	return nil
}

// openLoop reports whether messages start on a schedule.
func (cfg *Config) openLoop() bool { return cfg.QPS > 0 || cfg.Stages != nil }

// checkMessages checks the fields that choose the messages and their
// envelopes, trimming the lists' angle brackets.
func (cfg *Config) checkMessages() error {
	switch {
	case cfg.LengthMax < 0 || cfg.LengthMax > 0 && cfg.LengthMax < cfg.Length:
		return configErr("LengthMax", "length range %d:%d", cfg.Length, cfg.LengthMax)
	case cfg.Message != nil && cfg.MessageSet != nil:
		return configErr("Message", "a message and a message set")
	case cfg.MessageSet != nil && len(cfg.MessageSet) == 0:
		return configErr("MessageSet", "an empty message set")
	case cfg.Message != nil && len(cfg.Message) == 0 || slices.ContainsFunc(cfg.MessageSet, func(m []byte) bool { return len(m) == 0 }):
		return configErr("Message", "an empty message (no header, no body)")
	case cfg.LengthMax > cfg.Length && (cfg.Message != nil || cfg.MessageSet != nil):
		return configErr("LengthMax", "a length range with messages from files")
	case cfg.ToList != nil && len(cfg.ToList) < cfg.Recipients:
		return configErr("ToList", "%d recipients per message from a list of %d", cfg.Recipients, len(cfg.ToList))
	case cfg.ToList != nil && cfg.NumberRecipients:
		return configErr("NumberRecipients", "numbered recipients from a recipient list")
	case cfg.FromList != nil && len(cfg.FromList) == 0:
		return configErr("FromList", "an empty sender list")
	}
	for _, l := range []struct {
		field string
		list  *[]string
	}{{"FromList", &cfg.FromList}, {"ToList", &cfg.ToList}} {
		if *l.list == nil {
			continue
		}
		*l.list = slices.Clone(*l.list)
		for i, a := range *l.list {
			a = strings.TrimSuffix(strings.TrimPrefix(a, "<"), ">")
			if strings.ContainsAny(a, "\r\n\x00<>") {
				return configErr(l.field, "line break, NUL or angle bracket in address %q", a)
			}
			(*l.list)[i] = a
		}
	}
	for _, h := range cfg.Headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || name == "" || strings.ContainsAny(value, "\r\n") || strings.IndexFunc(name, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
			return configErr("Headers", "header %q is not \"Name: value\" on one line", h)
		}
	}
	return nil
}

// network returns the network and address to dial for addr, TCP over IP
// version ipv (4, 6, or 0 for either) to port if addr names none, unless
// it is a UNIX-domain socket.
func network(addr string, ipv int, port string) (string, string) {
	if p, ok := strings.CutPrefix(addr, "unix:"); ok {
		return "unix", p
	}
	tcp := "tcp"
	switch ipv {
	case 4:
		tcp = "tcp4"
	case 6:
		tcp = "tcp6"
	}
	addr = strings.TrimPrefix(addr, "inet:")
	if _, _, err := net.SplitHostPort(addr); err != nil {
		if strings.Count(addr, ":") > 1 && !strings.HasPrefix(addr, "[") {
			addr = "[" + addr + "]" // a bare IPv6 address
		}
		addr = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]")
		addr = net.JoinHostPort(addr, port)
	}
	return tcp, addr
}

// defaultPort is the port dialled when Addr names none.
func (cfg *Config) defaultPort() string {
	if cfg.TLSImplicit {
		return "465"
	}
	return "25"
}

// tlsConfig returns the TLS configuration of the run's connections, or nil
// for none.
func (cfg *Config) tlsConfig() (*tls.Config, error) {
	if !cfg.TLS && !cfg.TLSImplicit {
		return nil, nil
	}
	tc := &tls.Config{}
	if cfg.TLSConfig != nil {
		tc = cfg.TLSConfig.Clone()
	}
	if tc.ServerName == "" {
		if netw, addr := network(cfg.Addr, cfg.IPVersion, cfg.defaultPort()); netw != "unix" {
			tc.ServerName, _, _ = net.SplitHostPort(addr)
		}
	}
	if tc.ServerName == "" && !tc.InsecureSkipVerify {
		return nil, configErr("TLSConfig", "TLS over %s needs a server name to verify", cfg.Addr)
	}
	return tc, nil
}

// checkHelo returns why name is not what EHLO, HELO or LHLO may give
// (RFC 5321 §4.1.1.1, §4.1.3): a domain, its labels of letters, digits,
// hyphens and underscores (which host names in test setups often have,
// though DNS host names may not) starting and ending with no hyphen, at
// most 63 bytes each and 255 in all; or an address literal, [192.0.2.1],
// [IPv6:2001:db8::1] or [tag:content] (the general form). Anything else
// (a space, a tab, '<', non-ASCII) would make a malformed command line.
func checkHelo(name string) error {
	if lit, ok := strings.CutPrefix(name, "["); ok {
		lit, ok = strings.CutSuffix(lit, "]")
		if !ok {
			return errors.New("an address literal without its closing ']'")
		}
		if a, err := netip.ParseAddr(lit); err == nil && a.Is4() {
			return nil
		}
		tag, content, ok := strings.Cut(lit, ":")
		if strings.EqualFold(tag, "IPv6") {
			if a, err := netip.ParseAddr(content); err != nil || !a.Is6() || a.Zone() != "" {
				return fmt.Errorf("%q is not an IPv6 address", content)
			}
			return nil
		}
		// General-address-literal: a tag as a domain's label, then
		// printable ASCII but for '[', '\' and ']'.
		if !ok || checkLabel(tag) != nil || content == "" ||
			strings.IndexFunc(content, func(r rune) bool { return r < '!' || r > '~' || r == '[' || r == '\\' || r == ']' }) >= 0 {
			return errors.New("an address literal that is neither an IPv4 nor an IPv6 address nor of the form [tag:content]")
		}
		return nil
	}
	if len(name) > 255 {
		return errors.New("a domain of more than 255 bytes")
	}
	for label := range strings.SplitSeq(name, ".") {
		if err := checkLabel(label); err != nil {
			return err
		}
	}
	return nil
}

// checkLabel returns why label is not a label of a domain in EHLO.
func checkLabel(label string) error {
	switch {
	case label == "":
		return errors.New("an empty label (a leading, trailing or doubled '.')")
	case len(label) > 63:
		return fmt.Errorf("label %.10q... of more than 63 bytes", label)
	case label[0] == '-' || label[len(label)-1] == '-':
		return fmt.Errorf("label %q starts or ends with '-'", label)
	}
	for _, c := range []byte(label) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("%q in label %q: a domain has letters, digits, '-', '_' and '.'", c, label)
		}
	}
	return nil
}

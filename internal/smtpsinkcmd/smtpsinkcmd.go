// Package smtpsinkcmd is `wirespeed smtp-sink`, the command-line front end
// of package smtpsink: an SMTP (or, with -L, LMTP) server that accepts
// mail and discards it, with Postfix smtp-sink's flags where they mean the
// same (all of them: -4 -6 -8 -a -A -b -B -c -C -d -D -e -E -f -F -h -H
// -L -m -M -n -N -p -P -q -Q -r -R -s -S -t -T -u -v -w -W).
//
//	wirespeed smtp-sink -addr 127.0.0.1:2525                # until SIGINT/SIGTERM, then a summary
//	wirespeed smtp-sink -addr 127.0.0.1:0 -L -json          # LMTP; the summary as JSON
//	wirespeed smtp-sink -size 10485760 -data-line 998 -bare normalize
//	wirespeed smtp-sink -r RCPT -Q . -w 2                   # 450 to RCPT, 421 after the data, 2 s before 354
//	wirespeed smtp-sink -digest sha256 -digest-log sums.txt # "HEX BYTES SESSION-N" per message
//	wirespeed smtp-sink -n 10 -c                            # stop after 10 sessions QUIT; counters on stderr
//	wirespeed smtp-sink -tls -tls-required -auth            # a submission server: STARTTLS, then AUTH
//	wirespeed smtp-sink -tls-implicit -tls-cert c.pem -tls-key k.pem -auth -auth-file users
//	wirespeed smtp-sink -c 127.0.0.1:2525 100               # Postfix's form: the address and a backlog after the flags
//	wirespeed smtp-sink -u nobody -d /var/tmp/dumps/ :25 100 # as root: listen on port 25, then dump as nobody
//
// The first line printed is "listening on HOST:PORT".
package smtpsinkcmd

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/sockbuf"
	"github.com/wirespeed/wirespeed/smtpsink"
)

// Summary is the one-line description of the command.
const Summary = "SMTP/LMTP server that accepts mail and discards it (Postfix smtp-sink's flags)"

// Result is what the command prints when it stops: the server's address
// and counters.
type Result struct {
	Addr string `json:"addr"`
	// Engine is the engine that ran the sessions (-engine, or the
	// system's default: loops on Linux, goroutine elsewhere).
	Engine smtpsink.Engine `json:"engine"`
	smtpsink.Stats
	ErrorTotal uint64 `json:"error_replies"`
	DumpErrors uint64 `json:"dump_errors,omitempty"` // transactions -d or -D could not dump (their messages refused with 451)
}

// Run runs `wirespeed smtp-sink` with the arguments after "smtp-sink"
// until ctx is cancelled, then prints the summary.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runWith(ctx, args, stdout, stderr, hooks{})
}

// hooks let tests reach inside (runWith); Run passes none.
type hooks struct {
	digestLog func(*os.File) io.Writer // writes the -digest-log file's lines (nil: the file)
}

func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, h hooks) error {
	fs := flag.NewFlagSet("smtp-sink", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg smtpsink.Config
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:2525", "listen address: HOST:PORT (port 0 picks one), or unix:PATH for a Unix domain socket, as Postfix's smtp-sink takes it (mode 0666; the file is removed at exit unless another server has taken the path); or give it after the flags, as to Postfix's smtp-sink, with a backlog: ADDRESS [BACKLOG]")
	fs.BoolVar(&cfg.LMTP, "L", false, "speak LMTP instead of SMTP (as smtp-sink -L)")
	ipv4 := fs.Bool("4", false, "listen on IPv4 only (as smtp-sink -4; a port alone: on every IPv4 address)")
	ipv6 := fs.Bool("6", false, "listen on IPv6 only (as smtp-sink -6; a port alone: on every IPv6 address)")
	cli.DecimalVar(fs, &cfg.WindowSize, "T", 0, "set the listening socket's buffers, and so its connections' TCP window, to this many `bytes` (as smtp-sink -T; 0: the system's)")
	fs.BoolVar(&cfg.HeloRequired, "helo-required", false, "refuse MAIL before HELO or EHLO (503), as Postfix's smtpd_helo_required; by default MAIL may come first, as with Postfix's smtp-sink")
	fs.StringVar(&cfg.Hostname, "h", "smtp-sink", "host name in the greeting and the EHLO reply (as smtp-sink -h)")
	cli.DecimalVar(fs, &cfg.MaxSize, "size", 0, "message size limit in bytes, announced in EHLO SIZE (0: none)")
	cli.DecimalVar(fs, &cfg.MaxCommandBytes, "cmd-line", smtpsink.DefaultMaxCommandBytes, "command line limit in bytes, CRLF not counted (longer: 500)")
	cli.DecimalVar(fs, &cfg.MaxDataLineBytes, "data-line", 0, "message line limit in bytes as sent, CRLF not counted, a stuffing dot counted (0: none; RFC 5321: 998 besides a stuffing dot)")
	cli.DecimalVar(fs, &cfg.MaxRecipients, "max-rcpt", smtpsink.DefaultMaxRecipients, "recipients per transaction (more: 452)")
	bare := fs.String("bare", "reject", "a bare CR or LF in a message: reject (550), keep (as data) or normalize (bare LF ends a line)")
	fs.BoolVar(&cfg.No8BitMIME, "8", false, "do not announce 8BITMIME (as smtp-sink -8)")
	fs.BoolVar(&cfg.NoPipelining, "p", false, "do not announce PIPELINING (as smtp-sink -p)")
	fs.BoolVar(&cfg.NoESMTP, "e", false, "no ESMTP: refuse EHLO (as smtp-sink -e)")
	fs.BoolVar(&cfg.NoChunking, "no-chunking", false, "do not announce CHUNKING and BINARYMIME (BDAT is refused)")
	fs.BoolVar(&cfg.NoSMTPUTF8, "no-smtputf8", false, "do not announce SMTPUTF8 (an address that is not ASCII gets 553 5.6.7)")
	fs.BoolVar(&cfg.NoDSN, "N", false, "do not announce DSN (as smtp-sink -N); otherwise RET, ENVID, NOTIFY and ORCPT are checked and taken")
	fs.BoolVar(&cfg.NoXCLIENT, "C", false, "do not announce XCLIENT (as smtp-sink -C); otherwise XCLIENT is checked and answered with a new greeting, as Postfix's smtpd does")
	fs.BoolVar(&cfg.NoXFORWARD, "F", false, "do not announce XFORWARD (as smtp-sink -F); otherwise XFORWARD is checked and taken with 250")
	fs.BoolVar(&cfg.NoEnhancedStatusCodes, "E", false, "do not announce ENHANCEDSTATUSCODES (as smtp-sink -E; the replies keep their enhanced codes, as there)")
	noAuth := fs.Bool("a", false, "do not announce AUTH (as smtp-sink -a; it is announced only with -auth, which -a contradicts)")
	pix := fs.Bool("P", false, "greet as a Cisco PIX does, \"220 ********\", and refuse EHLO (as smtp-sink -P; implies -e)")
	hard := fs.String("f", "", "commands to refuse with 500 (as smtp-sink -f; implies -p), e.g. RCPT,.")
	soft := fs.String("r", "", "commands to refuse with 450 (as smtp-sink -r; implies -p)")
	hardReply := fs.String("B", "", "the `reply` of -f, \"5XX[ TEXT]\" (as smtp-sink -B; default \"500 5.3.0 Error: command failed\"; a code alone gets that text)")
	softReply := fs.String("b", "", "the `reply` of -r, \"4XX[ TEXT]\" (as smtp-sink -b; default \"450 4.3.0 Error: command failed\"; a code alone gets that text)")
	drop := fs.String("q", "", "commands after which to disconnect without a reply (as smtp-sink -q)")
	logged := fs.String("s", "", "commands to log to syslog, as the client typed them, facility mail, level info (as smtp-sink -s; \".\": a message's end), e.g. MAIL,RCPT")
	syslogAddr := fs.String("syslog", "", "where -s logs: NETWORK:ADDRESS (unixgram:/dev/log, udp:HOST:514, tcp:HOST:514); default the system's syslog")
	shut := fs.String("Q", "", "commands to answer with 421 and disconnect (as smtp-sink -Q)")
	var replies replyFlag
	fs.Func("rule", "STAGE:REGEXP[@ODDS%]=CODE TEXT: reply CODE TEXT (400-599; 421 closes) where REGEXP matches the argument of STAGE (connect: the client's IP; helo: its name; mail, rcpt: the address; data, dot: each recipient, in LMTP a dot rule per recipient; bdat: its arguments), in ODDS percent of the matches; repeatable, the first that applies decides, e.g. -rule 'rcpt:^bounce@=550 5.1.1 no such user'", func(s string) error {
		r, err := smtpsink.ParseRule(s)
		if err != nil {
			return err
		}
		cfg.Rules = append(cfg.Rules, r)
		return nil
	})
	fs.Var(&replies, "reply", "CMD=CODE[:TEXT]: force reply CODE (400-599) to CMD; repeatable, e.g. -reply RCPT=550")
	delays := delayFlag{}
	fs.Var(oneDelay{"DATA", delays}, "w", "wait this long before the reply to DATA (354), in seconds or as a duration (as smtp-sink -w)")
	fs.Var(delays, "W", "CMD:DELAY: wait DELAY before the reply to CMD (\".\": to a message's data); repeatable (as smtp-sink -W, without odds)")
	fs.Var((*seconds)(&cfg.DataReadDelay), "H", "wait `DELAY` (seconds or a duration) after the 354 reply to DATA before reading the message, so that a client with a large message waits in a write (as smtp-sink -H; see -T)")
	fs.Var(abortFlag{&cfg}, "A", "answer DATA with 354, wait `DELAY` (seconds or a duration; 0: not at all), then 550 and disconnect without reading the message (as smtp-sink -A)")
	cfg.Timeout = smtpsink.DefaultTimeout
	fs.Var((*seconds)(&cfg.Timeout), "t", "time limit for each command line to arrive and each reply to be written, in seconds or as a duration; a session past it gets 421 (as smtp-sink -t; 0: none)")
	cli.DecimalVar(fs, &cfg.MinDataRate, "min-rate", smtpsink.DefaultMinDataRate, "slowest average rate of a message's data, bytes a second: each read of N bytes extends the data's -t deadline by N/RATE seconds, up to -t ahead (as Postfix's smtpd_min_data_rate; 0: none, -t per read)")
	cli.DecimalVar(fs, &cfg.MaxDiscardBytes, "max-discard", smtpsink.DefaultMaxDiscardBytes, "bytes of a refused message's data (after its problem) or refused BDAT chunks to read and throw away before ending the session with 421 (0: no limit)")
	cli.DecimalVar(fs, &cfg.MaxConns, "m", smtpsink.DefaultMaxConns, "sessions served at once, the rest wait in the listen queue (as smtp-sink -m; 0: no limit)")
	fs.BoolVar(&cfg.RefuseOverMaxConns, "m-refuse", false, "answer connections over -m with 421 and close them (as Postfix's smtpd) instead of leaving them in the listen queue")
	startTLS := fs.Bool("tls", false, "offer STARTTLS (RFC 3207), with -tls-cert and -tls-key or else a self-signed certificate for -h and the listen address's host, made at start (its SHA-256 fingerprint goes to standard error)")
	certFile := fs.String("tls-cert", "", "PEM certificate (chain) `FILE` for -tls and -tls-implicit")
	keyFile := fs.String("tls-key", "", "PEM private key `FILE` of -tls-cert")
	clientCA := fs.String("tls-client-ca", "", "ask TLS clients for a certificate and verify one given against the PEM CA certificates in `FILE` (a client without one is served; see -tls-client-required)")
	clientRequired := fs.Bool("tls-client-required", false, "with -tls-client-ca: a TLS client without a verified certificate fails its handshake")
	fs.BoolVar(&cfg.TLSImplicit, "tls-implicit", false, "speak TLS from the first byte (SMTPS, RFC 8314; no STARTTLS)")
	fs.BoolVar(&cfg.TLSRequired, "tls-required", false, "refuse MAIL, RCPT, DATA, BDAT, AUTH and the like with 530 before STARTTLS (implies -tls)")
	fs.BoolVar(&cfg.Auth, "auth", false, "offer AUTH PLAIN and LOGIN (RFC 4954) over TLS, accepting any credentials or those of -auth-file; wrong ones get 535")
	authFile := fs.String("auth-file", "", "credentials for -auth: `FILE` of \"user:password\" lines (the password is all after the first colon; empty lines and lines starting with # are skipped)")
	fs.BoolVar(&cfg.AuthPlaintext, "auth-plaintext", false, "offer and serve AUTH before TLS too (otherwise 538 there)")
	fs.Func("auth-mechs", "SASL mechanisms AUTH offers, comma-separated, of "+strings.Join(smtpsink.AuthMechanisms, ",")+" (default PLAIN,LOGIN; CRAM-MD5 checks its digest against the -auth-file password, XOAUTH2 and OAUTHBEARER take the token as the password)", func(s string) error {
		for m := range strings.SplitSeq(s, ",") {
			m = strings.ToUpper(strings.TrimSpace(m))
			if !slices.Contains(smtpsink.AuthMechanisms, m) {
				return fmt.Errorf("unknown mechanism %q", m)
			}
			cfg.AuthMechanisms = append(cfg.AuthMechanisms, m)
		}
		return nil
	})
	maxMsgs, maxQuits := new(uint64), new(uint64)
	fs.Var((*count)(maxMsgs), "M", "stop after this many `messages` (as smtp-sink -M; 0: run until interrupted)")
	fs.Var((*count)(maxQuits), "n", "stop after this many `sessions` have ended with QUIT (as smtp-sink -n; 0: run until interrupted)")
	counters := fs.Bool("c", false, "show running counters \"sess=N quit=N mesg=N\" on standard error, rewritten in place at each message and each session's end (as smtp-sink -c, which uses standard output)")
	alg := fs.String("digest", "", "hash every message's data with ALG (md5, sha1, sha256, ...) and log \"HEX BYTES SESSION-N\" per message")
	digestLog := fs.String("digest-log", "-", "file for the -digest lines (-: standard output); a message whose line cannot be written gets 451, and the sink stops")
	verbose := fs.Bool("v", false, "show the conversations on standard error, one line per read or write (as smtp-sink -v)")
	jsonOut := fs.Bool("json", false, "print the summary at exit as one JSON object, the last line of standard output (the first is \"listening on ADDR\", which it repeats as \"addr\"; -digest lines to standard output come between)")
	dumpEach := fs.String("d", "", "dump each message's transaction to a file of its own, named by `TEMPLATE` expanded by strftime(3) and a random hexadecimal number, in Postfix smtp-sink's dump format with CRLF lines (as smtp-sink -d; missing directories are made; tried at start), e.g. -d 'dumps/%Y%m%d/'; a message whose dump fails (a full disk) gets 451, not 250")
	dumpAll := fs.String("D", "", "append each message's transaction to the file named by `TEMPLATE` expanded by strftime(3), in the format of -d, whole transactions only (as smtp-sink -D; missing directories are made; tried at start; a failed dump: 451)")
	dumpStart := fs.String("S", "", "a `string` written before each transaction -d or -D dumps, with C's escapes (\\n, \\t, \\\\, \\ooo in octal, ...) (as smtp-sink -S; without -d or -D a usage error, where Postfix's ignores it)")
	chroot := fs.String("R", "", "change the root directory to `DIR` once listening, before -u (as smtp-sink -R, which does it only with -u; needs root; -d and -D's templates are then inside it, and a unix: socket stays at exit)")
	runAs := fs.String("u", "", "take the user and group IDs and the groups of `USER` once listening (as smtp-sink -u; needs root); dumps are then written as USER, and a unix: socket the user cannot remove stays at exit, as Postfix's always does (a later sink takes it over)")
	metricsAddr := fs.String("metrics", "", "serve the counters at http://`addr`/metrics in Prometheus' text format (port 0 picks one; the address goes to stderr)")
	engine := fs.String("engine", "", "how sessions run: loops (state machines on netio's event loops; the default on Linux) or goroutine (one per session)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wirespeed smtp-sink [-addr HOST:PORT|unix:PATH] [-L] [-size N] [-bare reject|keep|normalize] [-f|-r|-q|-Q CMDS] [-reply CMD=CODE] [-w DELAY] [-M MSGS] [-n SESSIONS] [-c] [-digest ALG] [-tls|-tls-implicit] [-auth] [-json] [flags] [[inet:][HOST]:PORT|unix:PATH [BACKLOG]]")
		fmt.Fprintln(fs.Output(), "  (the address may come after the flags, as Postfix's smtp-sink takes it, with a backlog that is accepted and left to the system)")
		fs.PrintDefaults()
	}
	if err := cli.Parse(fs, cli.Grouped(fs, args), "wirespeed smtp-sink", stdout); err != nil {
		return cli.ParseError(err)
	}
	// Postfix's form: the address, then the listen queue's length, after
	// the flags. Go listens with the system's (net.core.somaxconn).
	addrName := "-addr" // where the address came from, for its errors
	switch fs.NArg() {
	case 0:
	case 1, 2:
		addrSet := false
		fs.Visit(func(f *flag.Flag) { addrSet = addrSet || f.Name == "addr" })
		if addrSet {
			return cli.Usagef("smtp-sink: an address both in -addr and as an argument (%q)", fs.Arg(0))
		}
		cfg.Addr, addrName = postfixAddr(fs.Arg(0)), "address"
		if cfg.Addr == "" {
			return cli.Usagef("smtp-sink: an empty address")
		}
		if fs.NArg() == 2 {
			if n, err := strconv.Atoi(fs.Arg(1)); err != nil || n <= 0 {
				return cli.Usagef("smtp-sink: backlog %q: want a positive number", fs.Arg(1))
			}
		}
	default:
		return cli.Usagef("smtp-sink: unexpected argument %q (after the address and the backlog)", fs.Arg(2))
	}
	if a, ok := strings.CutPrefix(cfg.Addr, "inet:"); ok { // as Postfix's smtp-sink takes it
		if strings.HasPrefix(a, "unix:") {
			return cli.Usagef("smtp-sink: address %q: inet: and unix: together", cfg.Addr)
		}
		cfg.Addr = a
	}
	switch {
	case *startTLS && cfg.TLSImplicit:
		return cli.Usagef("smtp-sink: -tls (STARTTLS) and -tls-implicit together: choose one")
	case cfg.Addr == "":
		return cli.Usagef("smtp-sink: an empty address (a port alone, :PORT, listens on every address)")
	case !strings.HasPrefix(cfg.Addr, "unix:") && strings.HasSuffix(cfg.Addr, ":"):
		return cli.Usagef("smtp-sink: address %q names no port (0 picks one)", cfg.Addr)
	case cfg.Addr == "unix:":
		return cli.Usagef("smtp-sink: the address unix: names no socket path")
	}
	if !strings.HasPrefix(cfg.Addr, "unix:") {
		if err := cli.CheckHostPort(cfg.Addr); err != nil {
			return cli.Usagef("smtp-sink: %s %q: %v", addrName, cfg.Addr, err)
		}
	}
	if *metricsAddr != "" {
		if err := cli.CheckHostPort(*metricsAddr); err != nil {
			return cli.Usagef("smtp-sink: -metrics %q: %v", *metricsAddr, err)
		}
	}
	switch e := smtpsink.Engine(*engine); e {
	case "", smtpsink.EngineLoops, smtpsink.EngineGoroutine:
		cfg.Engine = e
	default:
		return cli.Usagef("smtp-sink: -engine %q: want loops or goroutine", *engine)
	}
	switch *bare {
	case "reject":
		cfg.Bare = dot.BareReject
	case "keep":
		cfg.Bare = dot.BareKeep
	case "normalize", "normalise":
		cfg.Bare = dot.BareNormalize
	default:
		return cli.Usagef("smtp-sink: -bare %q: want reject, keep or normalize", *bare)
	}
	switch {
	case *ipv4 && *ipv6:
		return cli.Usagef("smtp-sink: -4 and -6: one or the other")
	case *ipv4:
		cfg.IPVersion = 4
	case *ipv6:
		cfg.IPVersion = 6
	}
	if cfg.WindowSize < 0 || cfg.WindowSize > sockbuf.MaxSize {
		return cli.Usagef("smtp-sink: -T %d: want a size in bytes up to %d (0: the system's)", cfg.WindowSize, sockbuf.MaxSize)
	}
	if w := sockbuf.Capped(cfg.WindowSize); cfg.WindowSize > 0 && w != "" && !strings.HasPrefix(cfg.Addr, "unix:") {
		fmt.Fprintf(stderr, "smtp-sink: -T %d: %s\n", cfg.WindowSize, w)
	}
	if *noAuth && cfg.Auth {
		return cli.Usagef("smtp-sink: -a (no AUTH) and -auth together")
	}
	if *pix {
		cfg.Greeting, cfg.NoESMTP = "********", true
	}
	if *hard != "" || *soft != "" {
		cfg.NoPipelining = true // -f and -r imply -p, as Postfix's do
	}
	hardR, err := bounceReply("-B", *hardReply, 500)
	if err != nil {
		return err
	}
	softR, err := bounceReply("-b", *softReply, 450)
	if err != nil {
		return err
	}
	cfg.Force = map[string]smtpsink.Reply{}
	// A command in more than one list gets the reply of the last flag
	// here, whatever the order given: as in Postfix's smtp-sink, -q comes
	// before -Q, -Q before -f, -f before -r.
	for _, f := range []struct {
		flag, list string
		r          smtpsink.Reply
	}{
		{"r", *soft, softR},
		{"f", *hard, hardR},
		{"Q", *shut, smtpsink.Reply{Code: 421, Text: "4.0.0 Server closing connection", Close: true}},
		{"q", *drop, smtpsink.Reply{Close: true}},
	} {
		for _, c := range strings.FieldsFunc(f.list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			c = strings.ToUpper(c)
			if !slices.Contains(smtpsink.ForceCommands, c) {
				return cli.Usagef("smtp-sink: -%s: unknown command %q (one of %s)", f.flag, c, strings.Join(smtpsink.ForceCommands, " "))
			}
			cfg.Force[c] = f.r
		}
	}
	for c, r := range replies {
		cfg.Force[c] = r
	}
	if *syslogAddr != "" && *logged == "" {
		return cli.Usagef("smtp-sink: -syslog needs -s (the commands to log)")
	}
	if *syslogAddr != "" {
		if err := checkSyslogAddr(*syslogAddr); err != nil {
			return cli.Usagef("smtp-sink: -syslog %q: %v", *syslogAddr, err)
		}
	}
	var toLog map[string]bool
	for _, c := range strings.FieldsFunc(*logged, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		c = strings.ToUpper(c)
		if !slices.Contains(smtpsink.ForceCommands, c) || c == "CONNECT" {
			return cli.Usagef("smtp-sink: -s: unknown command %q (one of %s)", c, strings.Join(smtpsink.ForceCommands[1:], " "))
		}
		if toLog == nil {
			toLog = map[string]bool{}
		}
		toLog[c] = true
	}
	if toLog != nil {
		sl, err := openSyslog(*syslogAddr)
		if err != nil && *syslogAddr != "" {
			// Named, and exit 1 as for smtp-source's server: a host
			// -syslog dials that is not found or not there is the
			// network's to change (what no dial could use was
			// refused above).
			return fmt.Errorf("smtp-sink: -syslog %q: %w", *syslogAddr, err)
		} else if err != nil {
			return fmt.Errorf("smtp-sink: -s: %w", err)
		}
		defer sl.Close()
		cfg.OnCommand = func(_ uint64, line string) {
			if toLog[syslogVerb(line)] {
				io.WriteString(sl, syslogLine(line)) // as Postfix's, a message syslog loses is lost
			}
		}
	}
	cfg.Delay = delays
	for _, f := range []struct {
		name string
		v    int64
	}{{"cmd-line", int64(cfg.MaxCommandBytes)}, {"max-rcpt", int64(cfg.MaxRecipients)}} {
		if f.v <= 0 {
			return cli.Usagef("smtp-sink: -%s %d: want more than 0", f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"size", cfg.MaxSize}, {"data-line", int64(cfg.MaxDataLineBytes)}, {"m", int64(cfg.MaxConns)}, {"min-rate", cfg.MinDataRate}, {"max-discard", cfg.MaxDiscardBytes}} {
		if f.v < 0 {
			return cli.Usagef("smtp-sink: -%s %d: negative, want 0 or more", f.name, f.v)
		}
	}
	// The flags' 0 is the library's none.
	grace := cfg.Timeout
	for _, v := range []*int64{&cfg.MinDataRate, &cfg.MaxDiscardBytes, (*int64)(&cfg.Timeout)} {
		if *v == 0 {
			*v = -1
		}
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = -1
	}
	if !cfg.Auth && (cfg.AuthPlaintext || cfg.AuthMechanisms != nil) {
		return cli.Usagef("smtp-sink: -auth-plaintext and -auth-mechs need -auth")
	}
	if *authFile != "" {
		if !cfg.Auth {
			return cli.Usagef("smtp-sink: -auth-file needs -auth")
		}
		users, err := readAuthFile(*authFile)
		if err != nil {
			return fmt.Errorf("smtp-sink: -auth-file: %w", err)
		}
		cfg.AuthUsers = users
	}
	if (*certFile == "") != (*keyFile == "") {
		return cli.Usagef("smtp-sink: -tls-cert and -tls-key go together")
	}
	if *startTLS || cfg.TLSImplicit || cfg.TLSRequired || *certFile != "" {
		if cfg.TLSImplicit && cfg.TLSRequired {
			return cli.Usagef("smtp-sink: -tls-required is for STARTTLS, not -tls-implicit")
		}
		tc, err := tlsConfig(*certFile, *keyFile, cfg.Hostname, cfg.Addr, stderr)
		if err != nil {
			return fmt.Errorf("smtp-sink: %w", err)
		}
		cfg.TLS = tc
	}
	switch {
	case *clientRequired && *clientCA == "":
		return cli.Usagef("smtp-sink: -tls-client-required needs -tls-client-ca")
	case *clientCA != "" && cfg.TLS == nil:
		return cli.Usagef("smtp-sink: -tls-client-ca needs -tls or -tls-implicit")
	case *clientCA != "":
		pem, err := cli.ReadPEM(*clientCA)
		if err != nil {
			return fmt.Errorf("smtp-sink: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("smtp-sink: -tls-client-ca: no PEM certificate in %s", *clientCA)
		}
		cfg.TLS.ClientCAs, cfg.TLS.ClientAuth = pool, tls.VerifyClientCertIfGiven
		if *clientRequired {
			cfg.TLS.ClientAuth = tls.RequireAndVerifyClientCert
		}
	}
	if cfg.Auth && cfg.TLS == nil && !cfg.AuthPlaintext {
		return cli.Usagef("smtp-sink: -auth needs -tls, -tls-implicit or -auth-plaintext")
	}
	// -M cancels runCtx; a signal cancels ctx, which also closes the
	// server at once.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var logMu sync.Mutex
	var logW *sumLog
	var logErr error
	if *alg == "" && *digestLog != "-" {
		return cli.Usagef("smtp-sink: -digest-log needs -digest (an algorithm: md5, sha256, ...)")
	}
	if *alg != "" {
		a, err := digest.ParseAlgorithm(*alg)
		if err != nil {
			return cli.Usagef("smtp-sink: -digest: %v", err)
		}
		cfg.Digest = a
		if *digestLog == "-" {
			logW = &sumLog{w: stdout}
		} // else opened once listening: a sink that cannot start leaves the file as it was
	}
	// The counters of -c, -M and -n, under logMu; stopped is set when
	// -n is reached.
	var received, ended, quits uint64
	var stopped atomic.Bool
	var counterLine []byte
	showCounters := func() {
		counterLine = fmt.Appendf(counterLine[:0], "sess=%d quit=%d mesg=%d\r", ended, quits, received)
		stderr.Write(counterLine)
	}
	if *counters || *maxQuits > 0 {
		cfg.OnSessionEnd = func(e smtpsink.SessionInfo) {
			logMu.Lock()
			defer logMu.Unlock()
			ended++
			if e.Quit {
				quits++
			}
			if e.Quit && quits == *maxQuits {
				stopped.Store(true) // before the counters show it
				cancel()
			}
			if *counters {
				showCounters()
			}
		}
	}
	// logDigest writes a message's digest line, before its 250 (from
	// Decide, once its dump, if any, is stored): a line that cannot be
	// written refuses the message with 451, as a dump that cannot, and
	// the sink stops rather than refuse every message after it.
	var line []byte
	logDigest := func(m smtpsink.Message) error {
		logMu.Lock()
		defer logMu.Unlock()
		if logW == nil {
			return nil
		}
		line = m.Digest.AppendHex(line[:0])
		line = append(line, ' ')
		line = strconv.AppendInt(line, m.Size, 10)
		line = append(line, ' ')
		line = strconv.AppendUint(line, m.Session, 10)
		line = append(line, '-')
		line = strconv.AppendInt(line, int64(m.Seq), 10)
		line = append(line, '\n')
		err := logW.write(line)
		if err != nil && logErr == nil {
			logErr = err
			cancel()
		}
		return err
	}
	if *maxMsgs > 0 || *counters {
		cfg.OnMessage = func(m smtpsink.Message) {
			logMu.Lock()
			defer logMu.Unlock()
			if received++; *maxMsgs > 0 && received == *maxMsgs {
				cancel()
			}
			if *counters {
				showCounters()
			}
		}
	}
	cfg.ErrorLog = log.New(stderr, "", log.LstdFlags)
	var dumps *dumper
	var emptyDump string // -d or -D given an empty template, which names no file
	fs.Visit(func(f *flag.Flag) {
		if (f.Name == "d" || f.Name == "D") && f.Value.String() == "" {
			emptyDump = f.Name
		}
	})
	switch {
	case emptyDump != "":
		return cli.Usagef("smtp-sink: -%s '': an empty template names no file to dump to", emptyDump)
	case *dumpEach != "" && *dumpAll != "":
		return cli.Usagef("smtp-sink: -d and -D: one or the other")
	case *dumpStart != "" && *dumpEach == "" && *dumpAll == "":
		return cli.Usagef("smtp-sink: -S needs -d or -D (it begins each dumped transaction)")
	case *dumpEach != "" || *dumpAll != "":
		dumps = &dumper{tmpl: *dumpEach + *dumpAll, append: *dumpAll != "", start: unescape(*dumpStart), host: cfg.Hostname, now: time.Now, newID: randomID, logf: cfg.ErrorLog.Printf}
		flag := "-d"
		if dumps.append {
			flag = "-D"
		}
		dumps.flag = flag
		if err := dumps.checkUsage(); err != nil {
			return cli.Usagef("smtp-sink: %v", err)
		}
		cfg.Capture = dumps.capture
	}
	if *maxMsgs > 0 || *maxQuits > 0 || *alg != "" {
		// Past -M, or once -n sessions have ended, a message is refused,
		// not dumped, and its session closed, where Postfix's smtp-sink
		// exits at once: sessions that go on while the sink stops (or
		// that it accepted meanwhile) deliver nothing more.
		var decided atomic.Uint64
		stopping := func(m smtpsink.Message) smtpsink.Reply {
			if dumps != nil {
				dumps.drop(m.Session)
			}
			return smtpsink.Reply{Code: 421, Text: "4.3.2 Error: the sink is stopping (-M or -n)", Close: true}
		}
		cfg.Decide = func(m smtpsink.Message) smtpsink.Reply {
			if m.Refused {
				// A -rule refuses it: it takes no place of -M's.
				if *maxMsgs > 0 && decided.Load() >= *maxMsgs || stopped.Load() {
					return stopping(m)
				}
				return smtpsink.Reply{}
			}
			if *maxMsgs > 0 && decided.Add(1) > *maxMsgs || stopped.Load() {
				return stopping(m)
			}
			if dumps != nil && dumps.commit(m.Session) != nil {
				// Not stored: the capture's Close reports it, and the
				// message is refused (451); it does not count for -M.
				decided.Add(^uint64(0))
				return smtpsink.Reply{}
			}
			if *alg != "" && logDigest(m) != nil {
				// Not recorded: refused as a dump that failed is.
				decided.Add(^uint64(0))
				return smtpsink.Reply{Code: 451, Text: "4.3.0 Error: queue file write error"}
			}
			return smtpsink.Reply{}
		}
	}
	if *verbose {
		cfg.Trace = stderr
	}
	s, err := smtpsink.Listen(ctx, cfg)
	if errors.Is(err, smtpsink.ErrConfig) {
		return configUsage(err) // -h or -reply with a line break, say
	} else if err != nil {
		// An address no run can listen on is a usage error, as serve's
		// -addr (see cli.ListenError); one in use is not.
		return fmt.Errorf("smtp-sink: %w", cli.ListenError(addrName, cfg.Addr, err))
	}
	if path, ok := strings.CutPrefix(cfg.Addr, "unix:"); ok && !strings.HasPrefix(path, "@") {
		// Any local user may connect, as to Postfix's smtp-sink (a
		// Postfix lmtp client runs as another user): not the umask's.
		// A ctx that has ended (a signal at start-up) closes the sink
		// at once, in a goroutine of Listen's, removing the socket file:
		// then the sink stops as it would have, without the chmod.
		if err := os.Chmod(path, 0o666); err != nil && ctx.Err() == nil {
			s.Close()
			return fmt.Errorf("smtp-sink: %w", err)
		}
	}
	// The -digest-log file: opened now (before -u, as the user who
	// started the sink), emptied once the sink has started, so that one
	// that cannot start leaves it as it was; one it made for nothing goes
	// again, unless the root directory has changed meanwhile.
	var digestFile *os.File
	if *alg != "" && *digestLog != "-" {
		_, err := os.Lstat(*digestLog)
		made := errors.Is(err, os.ErrNotExist)
		digestFile, err = os.OpenFile(*digestLog, os.O_RDWR|os.O_CREATE, 0o666) // read too, as os.Create: a FIFO's open then waits for no reader
		if err != nil {
			s.Close()
			return fmt.Errorf("smtp-sink: -digest-log: %w", err)
		}
		defer func() {
			digestFile.Close()
			if made && logW == nil && *chroot == "" {
				os.Remove(*digestLog)
			}
		}()
	}
	stopMetrics, err := serveMetrics(*metricsAddr, s, dumps, stderr)
	if err != nil {
		s.Close()
		return err
	}
	defer stopMetrics()
	// Every socket is open: the privileges go, and then the dumps are
	// tried, as the user who will write them.
	if err := dropPrivileges(*chroot, *runAs); err != nil {
		s.Close()
		if errors.Is(err, cli.ErrUsage) {
			return cli.Usagef("smtp-sink: %v", err)
		}
		return fmt.Errorf("smtp-sink: %w", err)
	}
	if dumps != nil {
		if err := dumps.check(); errors.Is(err, cli.ErrUsage) {
			s.Close()
			return cli.Usagef("smtp-sink: %v", err)
		} else if err != nil {
			s.Close()
			return fmt.Errorf("smtp-sink: %s: %w", dumps.flag, err)
		}
	}
	if digestFile != nil {
		l := &sumLog{w: digestFile}
		if fi, err := digestFile.Stat(); err == nil && fi.Mode().IsRegular() { // not /dev/null, a FIFO
			if err := digestFile.Truncate(0); err != nil {
				s.Close()
				return fmt.Errorf("smtp-sink: -digest-log: %w", err)
			}
			l.f = digestFile
		}
		if h.digestLog != nil {
			l.w = h.digestLog(digestFile)
		}
		logW = l // no session has begun: Serve has not
	}
	fmt.Fprintf(stdout, "listening on %s\n", addrString(s.Addr()))
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	var serveErr error
	select {
	case <-runCtx.Done():
	case serveErr = <-served:
	}
	if ctx.Err() == nil && runCtx.Err() != nil {
		// -M or -n: let the sessions have the last reply; QUIT ends
		// them, or else the time limit -t.
		if grace == 0 {
			grace = 10 * time.Second
		}
		sctx, scancel := context.WithTimeout(context.Background(), grace)
		s.Shutdown(sctx)
		scancel()
	}
	s.Close()
	if *counters {
		logMu.Lock()
		showCounters()
		stderr.Write([]byte("\n")) // the counters stay on the screen
		logMu.Unlock()
	}
	res := Result{Addr: addrString(s.Addr()), Engine: s.Engine(), Stats: s.Stats()}
	res.ErrorTotal = res.ErrorCount()
	if dumps != nil {
		res.DumpErrors = dumps.errs.Load()
	}
	if *jsonOut {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return err
		}
	} else if err := Print(stdout, res); err != nil {
		return err
	}
	if serveErr != nil {
		return fmt.Errorf("smtp-sink: %w", serveErr)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if logErr != nil {
		return fmt.Errorf("smtp-sink: -digest-log: %w", logErr)
	}
	return nil
}

// Print writes the summary for people: two lines, the counts and the
// error replies by code.
func Print(w io.Writer, r Result) error {
	more := "" // counts shown where they are not 0
	if r.Refused > 0 {
		more = fmt.Sprintf(", refused %d", r.Refused)
	}
	if r.TLS > 0 {
		more += fmt.Sprintf(", tls %d", r.TLS)
	}
	unsent := "" // accepted messages whose 250 never left, where any did
	if r.Unsent > 0 {
		unsent = fmt.Sprintf(" (%d unsent: their 250 never left)", r.Unsent)
	}
	if r.DumpErrors > 0 {
		unsent += fmt.Sprintf(" (%d not dumped)", r.DumpErrors)
	}
	fmt.Fprintf(w, "sessions %d (aborted %d%s), messages %d%s, recipients %d, bytes %d\n",
		r.Sessions, r.Aborted, more, r.Messages, unsent, r.Recipients, r.Bytes)
	codes := make([]int, 0, len(r.Errors))
	for c := range r.Errors {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var b strings.Builder
	fmt.Fprintf(&b, "error replies %d", r.ErrorTotal)
	for i, c := range codes {
		sep := ", "
		if i == 0 {
			sep = " ("
		}
		fmt.Fprintf(&b, "%s%d: %d", sep, c, r.Errors[c])
	}
	if len(codes) > 0 {
		b.WriteString(")")
	}
	_, err := fmt.Fprintln(w, b.String())
	return err
}

// count is a flag of a number of things, 0 or more, in decimal (as
// cli.DecimalVar's), whose errors say what is wrong with the value (the
// flag package's own says "parse error").
type count uint64

func (c *count) String() string { return strconv.FormatUint(uint64(*c), 10) }

func (c *count) Set(v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	switch {
	case err == nil:
		*c = count(n)
		return nil
	case errors.Is(err, strconv.ErrRange):
		return fmt.Errorf("too large (at most %d)", uint64(math.MaxUint64))
	}
	if abs, ok := strings.CutPrefix(v, "-"); ok {
		if _, err := strconv.ParseUint(abs, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("negative: want 0 or more")
		}
	}
	return fmt.Errorf("want a whole number, 0 or more")
}

// seconds is a duration flag that also takes plain seconds, as Postfix's
// tools do ("-w 2" or "-w 1.5" or "-w 300ms").
type seconds time.Duration

func (s *seconds) String() string { return time.Duration(*s).String() }

func (s *seconds) Set(v string) error {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(f) {
			return fmt.Errorf("not a number")
		}
		if f < 0 {
			return fmt.Errorf("negative")
		}
		if f*float64(time.Second) >= math.MaxInt64 {
			return fmt.Errorf("too long (at most %.0f seconds)", time.Duration(math.MaxInt64).Seconds())
		}
		*s = seconds(f * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("want seconds or a duration such as 250ms")
	}
	*s = seconds(d)
	return nil
}

// flagOf is the flag of each smtpsink.Config field a ConfigError names
// (IPVersion, of -4 or -6, is not; those that the checks above refuse
// first are here too). Force's entries that Listen can refuse come from
// -reply: -f, -r, -q and -Q take known commands only, and -b and -B's
// texts are checked as they are parsed.
var flagOf = map[string]string{
	"MaxSize": "-size", "MaxCommandBytes": "-cmd-line", "MaxDataLineBytes": "-data-line", "MaxRecipients": "-max-rcpt",
	"AbortDataDelay": "-A", "DataReadDelay": "-H", "WindowSize": "-T", "Hostname": "-h", "Greeting": "-P",
	"Digest": "-digest", "TLS": "-tls", "TLSImplicit": "-tls-implicit", "TLSRequired": "-tls-required",
	"Auth": "-auth", "AuthUsers": "-auth-file", "AuthMechanisms": "-auth-mechs", "AuthPlaintext": "-auth-plaintext",
	"Engine": "-engine", "Bare": "-bare", "Delay": "-W", "Rules": "-rule", "Force": "-reply",
}

// configUsage is the usage error of err, smtpsink.Listen's ErrConfig: it
// names the flag of the field at fault ("smtp-sink: smtpsink: bad
// configuration: Hostname ..." named none), and errors.Is still takes it
// for smtpsink.ErrConfig.
func configUsage(err error) error {
	var ce *smtpsink.ConfigError
	if errors.As(err, &ce) && flagOf[ce.Field] != "" {
		return cli.FlagUsage("smtp-sink", "smtpsink", flagOf[ce.Field], err)
	}
	return cli.Usagef("smtp-sink: %v", err) // IPVersion: -4 or -6
}

// bounceReply parses the reply of -b or -B, "CODE[ TEXT]" with CODE of
// def's class, as Postfix's smtp-sink checks it; empty is def with its
// default text. Unlike Postfix's, it takes no "CODE-TEXT": a reply that
// is not the last of its lines would leave the client waiting for one.
func bounceReply(flag, v string, def int) (smtpsink.Reply, error) {
	if v == "" {
		return smtpsink.Reply{Code: def}, nil
	}
	code, text, _ := strings.Cut(v, " ")
	n, err := strconv.Atoi(code)
	if err != nil || len(code) != 3 || n/100 != def/100 || strings.ContainsAny(text, "\r\n\x00") {
		return smtpsink.Reply{}, cli.Usagef("smtp-sink: %s %q: want \"%dXX[ TEXT]\", one line", flag, v, def/100)
	}
	return smtpsink.Reply{Code: n, Text: text}, nil
}

// unescape expands the C escapes of smtp-sink -S as Postfix's does:
// \a \b \f \n \r \t \v, \\, and up to three octal digits (modulo 256);
// any other character after a backslash stands for itself, a backslash
// at the end is dropped, and a NUL, given or escaped (\0, \400), ends the
// string, as it ends a C string.
func unescape(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			if i++; i == len(s) {
				break
			}
			switch c = s[i]; c {
			case 'a':
				c = '\a'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'v':
				c = '\v'
			case '0', '1', '2', '3', '4', '5', '6', '7':
				n := 0
				for j := 0; j < 3 && i < len(s) && '0' <= s[i] && s[i] <= '7'; j++ {
					n = n*8 + int(s[i]-'0')
					i++
				}
				i--
				c = byte(n)
			}
		}
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// delayFlag collects -W CMD:DELAY.
type delayFlag map[string]time.Duration

func (f delayFlag) String() string { return "" }

func (f delayFlag) Set(v string) error {
	cmd, d, ok := strings.Cut(v, ":")
	cmd = strings.ToUpper(cmd)
	if !ok || !slices.Contains(smtpsink.ForceCommands, cmd) {
		return fmt.Errorf("want CMD:DELAY with CMD one of %s", strings.Join(smtpsink.ForceCommands, " "))
	}
	var s seconds
	if err := s.Set(d); err != nil {
		return err
	}
	f[cmd] = time.Duration(s)
	return nil
}

// oneDelay sets dst[cmd]: -w is -W DATA:DELAY.
type oneDelay struct {
	cmd string
	dst delayFlag
}

func (o oneDelay) String() string { return "0s" }

func (o oneDelay) Set(v string) error {
	var s seconds
	if err := s.Set(v); err != nil {
		return err
	}
	o.dst[o.cmd] = time.Duration(s)
	return nil
}

// abortFlag is -A DELAY: Config.AbortData after DELAY.
type abortFlag struct{ cfg *smtpsink.Config }

func (a abortFlag) String() string { return "" }

func (a abortFlag) Set(v string) error {
	var s seconds
	if err := s.Set(v); err != nil {
		return err
	}
	a.cfg.AbortData, a.cfg.AbortDataDelay = true, time.Duration(s)
	return nil
}

// replyFlag collects -reply CMD=CODE[:TEXT].
type replyFlag map[string]smtpsink.Reply

func (f *replyFlag) String() string { return "" }

func (f *replyFlag) Set(v string) error {
	cmd, rest, ok := strings.Cut(v, "=")
	cmd = strings.ToUpper(cmd)
	if !ok || !slices.Contains(smtpsink.ForceCommands, cmd) {
		return fmt.Errorf("want CMD=CODE[:TEXT] with CMD one of %s", strings.Join(smtpsink.ForceCommands, " "))
	}
	code, text, _ := strings.Cut(rest, ":")
	n, err := strconv.Atoi(code)
	if err != nil || n < 400 || n > 599 {
		return fmt.Errorf("code %q: want 400 to 599", code)
	}
	if *f == nil {
		*f = replyFlag{}
	}
	(*f)[cmd] = smtpsink.Reply{Code: n, Text: text, Close: n == 421}
	return nil
}

// tlsConfig loads the certificate and key files, or makes a self-signed
// certificate for the host name and the listen address's host, and
// reports its fingerprint on w.
func tlsConfig(certFile, keyFile, hostname, addr string, w io.Writer) (*tls.Config, error) {
	var cert tls.Certificate
	var err error
	what := "certificate " + certFile
	if certFile != "" {
		cert, err = cli.LoadKeyPair(certFile, keyFile)
	} else {
		host, _, _ := net.SplitHostPort(addr)
		cert, err = smtpsink.SelfSigned(hostname, host)
		what = "self-signed certificate for " + hostname
	}
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(cert.Certificate[0])
	hexSum := strings.ToUpper(hex.EncodeToString(sum[:]))
	var fp strings.Builder
	for i := 0; i < len(hexSum); i += 2 {
		if i > 0 {
			fp.WriteByte(':')
		}
		fp.WriteString(hexSum[i : i+2])
	}
	fmt.Fprintf(w, "smtp-sink: TLS with %s, SHA-256 fingerprint %s\n", what, fp.String())
	return &tls.Config{Certificates: []tls.Certificate{cert}}, nil
}

// readAuthFile reads -auth-file: "user:password" lines.
func readAuthFile(name string) (map[string]string, error) {
	b, err := cli.ReadFileMax(name, cli.MaxPEM, "a list of users")
	if err != nil {
		return nil, err
	}
	users := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		user, pass, ok := strings.Cut(line, ":")
		if !ok || user == "" {
			return nil, fmt.Errorf("%s:%d: want user:password", name, i+1)
		}
		if _, dup := users[user]; dup {
			return nil, fmt.Errorf("%s:%d: user %q again", name, i+1, user)
		}
		users[user] = pass
	}
	return users, nil
}

// addrString is how the sink's address is printed: as -addr takes it.
func addrString(a net.Addr) string {
	if a.Network() == "unix" {
		return "unix:" + a.String()
	}
	return a.String()
}

// postfixAddr is the address a, given after the flags as to Postfix's
// smtp-sink, in the form net.Listen takes: a port alone listens on every
// address (":PORT"), and an IPv6 address without brackets ends at the
// last colon ("::1:2525" is "[::1]:2525").
func postfixAddr(a string) string {
	rest := strings.TrimPrefix(a, "inet:")
	switch {
	case rest == "" || strings.HasPrefix(a, "unix:"):
		return a // empty, or inet: alone: refused later
	case !strings.Contains(rest, ":"):
		return ":" + rest
	case strings.Count(rest, ":") > 1 && !strings.HasPrefix(rest, "["):
		i := strings.LastIndex(rest, ":")
		return net.JoinHostPort(rest[:i], rest[i+1:])
	}
	return a
}

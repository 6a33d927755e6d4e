// Package smtpsourcecmd is `wirespeed smtp-source`, the command-line front
// end of package smtpsource: Postfix smtp-source's flags with their
// meanings, and more.
package smtpsourcecmd

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/metrics"
	"github.com/wirespeed/wirespeed/internal/sockbuf"
	"github.com/wirespeed/wirespeed/smtpsource"
)

// Summary is the one-line description of the command.
const Summary = "SMTP/LMTP load client: Postfix smtp-source's flags, plus pipelining, BDAT, STARTTLS and AUTH, open loop, per-phase percentiles"

// Run runs `wirespeed smtp-source` with the arguments after
// "smtp-source" until the messages are sent or ctx is cancelled. A run
// that counted errors or failed messages (those cut short when ctx was
// cancelled too), that ctx cut short (its QUIT exchanges too), or whose
// -verify found a difference, returns cli.StatusError 1 after printing
// its result.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return run(ctx, args, stdout, stderr, createHdrLog)
}

// run is Run with -hdr-log's file opened by createLog (tests make its
// Close fail).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, createLog func(string) (io.WriteCloser, error)) (err error) {
	fs := flag.NewFlagSet("smtp-source", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg smtpsource.Config
	// Postfix smtp-source's flags, with its meanings.
	cli.DecimalVar(fs, &cfg.Sessions, "s", 1, "`sessions` in parallel, at most 100000 (smtp-source -s)")
	cli.DecimalVar(fs, &cfg.Messages, "m", 1, "`messages` in total (smtp-source -m)")
	fs.Var(&lengthFlag{&cfg.Length, &cfg.LengthMax}, "l", "body `length` in bytes, not counting the header nor the last CRLF, or MIN:MAX to spread the messages' lengths over that range, at most 1 GiB (held in memory once, for all the sessions); 0: smtp-source's four-line body (smtp-source -l)")
	fs.BoolVar(&cfg.Reuse, "d", false, "don't disconnect after a message: send the next one on the same connection (smtp-source -d)")
	cli.DecimalVar(fs, &cfg.Recipients, "r", 1, "`recipients` per message, at most 1000000, named N<to>, ..., 2<to>, <to> (smtp-source -r)")
	fs.StringVar(&cfg.From, "f", "", "sender `address` (default foo@<-M name>; '' or <>: the null sender) (smtp-source -f)")
	fs.StringVar(&cfg.To, "t", "", "recipient `address` (default foo@<-M name>; '': <>) (smtp-source -t)")
	fs.StringVar(&cfg.Helo, "M", "", "`name` for EHLO and the default addresses (default: the host name) (smtp-source -M)")
	fs.StringVar(&cfg.Subject, "S", "", "add a \"Subject: `subject`\" header (smtp-source -S)")
	fs.BoolVar(&cfg.LMTP, "L", false, "speak LMTP (smtp-source -L)")
	fs.Bool("A", false, "accepted for smtp-source's -A (don't abort on an unexpected reply): runs never stop at one, they count it")
	counter := fs.Bool("c", false, "a running count of completed messages on stdout, as smtp-source -c prints it (stderr with -json)")
	fs.BoolVar(&cfg.NumberRecipients, "N", false, "put a number no other recipient of the run has before each recipient (smtp-source -N)")
	fs.BoolVar(&cfg.OldMode, "o", false, "old mode: send no EHLO/HELO and no message header (smtp-source -o)")
	fs.Var((*seconds)(&cfg.Wait), "w", "wait this long between a session's messages, in seconds or as a duration (smtp-source -w)")
	fs.Var((*seconds)(&cfg.RandomWait), "R", "wait a random time from 0 to this between a session's messages, in seconds or as a duration (smtp-source -R)")
	cli.DecimalVar(fs, &cfg.ConnectTries, "C", 1, "try a failed connect this many `times` (smtp-source -C)")
	cli.DecimalVar(fs, &cfg.WindowSize, "T", 0, "set the socket buffers, and so the TCP window, to this many `bytes` before connecting (smtp-source -T)")
	ipv4 := fs.Bool("4", false, "connect over IPv4 only (smtp-source -4)")
	ipv6 := fs.Bool("6", false, "connect over IPv6 only (smtp-source -6)")
	// Beyond smtp-source.
	fs.BoolVar(&cfg.Pipelining, "pipelining", false, "send MAIL, RCPT and DATA (or BDAT) in one write when the server offers PIPELINING")
	fs.BoolVar(&cfg.Chunking, "chunking", false, "send BDAT chunks instead of DATA when the server offers CHUNKING")
	cli.DecimalVar(fs, &cfg.ChunkSize, "chunk-size", 64<<10, "BDAT chunk `bytes` (with -chunking)")
	msgFile := fs.String("F", "", "send this `file` as the message, header included, lines ended with CRLF (smtp-source -F; = -body file:PATH); a directory (a message a file), an mbox or a Maildir: their messages in turn")
	fs.Func("header", "add this header `line`, \"Name: value\", to each message's header (repeatable)", func(v string) error {
		cfg.Headers = append(cfg.Headers, v)
		return nil
	})
	fromFile := fs.String("from-file", "", "take the senders in turn from this `file`, an address a line (instead of -f)")
	toFile := fs.String("to-file", "", "take the recipients in turn from this `file`, an address a line (instead of -t; -r of them a message)")
	body := fs.String("body", "pattern", "`kind` of body: pattern (smtp-source's), mail (text, lines that need dot-stuffing), base64, longline, or file:PATH (a whole message, header included, as smtp-source -F)")
	fs.Var(&qpsFlag{&cfg.QPS, &cfg.Stages}, "qps", "open loop: start `rate` messages per second over all sessions, latency from each intended start; or stages, FROM:TO/DURATION (a ramp) or RATE/DURATION, comma-separated, each stage's latencies apart (the rate then stays at the last); 0: closed loop")
	fs.DurationVar(&cfg.Duration, "duration", 0, "end the run after this `duration`: no message starts after it, those under way finish, each exchange within -timeout (with -qps, those due by then and not started are counted as missed; no message limit unless -m is given)")
	fs.DurationVar(&cfg.Spin, "spin", 30*time.Microsecond, "open loop (with -qps): spin this long (more than 0) before each start instead of sleeping (and before the end of a -w or -R wait)")
	fs.DurationVar(&cfg.Timeout, "timeout", 100*time.Second, "bound each exchange (a connection's setup: greeting, EHLO, TLS, AUTH; a message from MAIL to its last reply; the RSET after a failed one; QUIT)")
	fs.DurationVar(&cfg.DialTimeout, "dial-timeout", 5*time.Second, "wait this long for a connection")
	fs.BoolVar(&cfg.TLS, "tls", false, "send STARTTLS after EHLO and the rest of each session over TLS; a server that does not offer it ends the run")
	fs.BoolVar(&cfg.TLSImplicit, "tls-implicit", false, "start TLS as soon as the connection is open (SMTPS, RFC 8314; port 465 if the address names none)")
	tlsCA := fs.String("tls-ca", "", "verify the server's certificate against the CA certificates in this PEM `file` instead of the system's")
	tlsInsecure := fs.Bool("tls-insecure", false, "do not verify the server's certificate")
	tlsName := fs.String("tls-name", "", "the server `name` to ask for (SNI) and to verify the certificate against (default: the address's host)")
	tlsResume := fs.Bool("tls-resume", false, "resume TLS sessions across connections (session tickets), as mail clients do")
	auth := fs.String("auth", "", "authenticate each connection with AUTH as `user:password` (after TLS with -tls; other users may see the command line)")
	fs.StringVar(&cfg.AuthMech, "auth-mech", "", "AUTH `mechanism` (with -auth): PLAIN, LOGIN, CRAM-MD5, or with an OAuth 2.0 access token as the password XOAUTH2 or OAUTHBEARER (default PLAIN)")
	tlsCert := fs.String("tls-cert", "", "present the client certificate (chain) in this PEM `file` (with -tls-key)")
	tlsKey := fs.String("tls-key", "", "the private key of -tls-cert, in this PEM `file`")
	size := fs.Bool("size", true, "send each message's size as SIZE= with MAIL when the server offers SIZE (RFC 1870); -size=false: never")
	fs.StringVar(&cfg.XClient, "xclient", "", "when the server offers XCLIENT, send XCLIENT `attributes` (e.g. 'NAME=client.example ADDR=192.0.2.1') once a connection is set up, then EHLO again (Postfix's XCLIENT)")
	fs.StringVar(&cfg.XForward, "xforward", "", "when the server offers XFORWARD, send XFORWARD `attributes` (e.g. 'NAME=client.example ADDR=192.0.2.1') before each MAIL (Postfix's XFORWARD)")
	fs.StringVar(&cfg.DSNNotify, "dsn-notify", "", "when the server offers DSN, send NOTIFY=`value` with each RCPT: NEVER, or some of SUCCESS,FAILURE,DELAY (RFC 3461)")
	fs.StringVar(&cfg.DSNRet, "dsn-ret", "", "when the server offers DSN, send RET=`value` with MAIL: FULL or HDRS")
	fs.StringVar(&cfg.DSNEnvID, "dsn-envid", "", "when the server offers DSN, send ENVID=`id`.N with message N's MAIL")
	jsonOut := fs.Bool("json", false, "print the result as one JSON object")
	hdrLog := fs.String("hdr-log", "", "write an HdrHistogram interval log of latencies (ns) to `file`: the delivered messages' untagged, each phase's (failed messages too) tagged with its name")
	verify := fs.String("verify", "", "after the run, compare the messages delivered with a sink's digest log `file` (lines \"<hex md5> <bytes> ...\")")
	quiet := fs.Bool("q", false, "no progress lines on stderr")
	verbose := fs.Bool("v", false, "show the conversations on stderr, one line per read or write: \"N < ...\" read and \"N > ...\" written on connection N, quoted, the messages' data too (as smtp-source -v)")
	metricsAddr := fs.String("metrics", "", "serve the run's counters at http://`addr`/metrics in Prometheus' text format while it runs (port 0 picks one; the address goes to stderr)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wirespeed smtp-source [-46cdLNov] [-s sessions] [-m messages] [-l length] [-r recipients] [-f from] [-t to] [-C tries] [-T window] [-w|-R wait] [-pipelining] [-chunking] [-body kind] [-qps rate] [-tls|-tls-implicit] [-tls-ca file|-tls-insecure] [-tls-resume] [-tls-cert file -tls-key file] [-auth user:password [-auth-mech mechanism]] [-size=false] [-xclient attrs] [-xforward attrs] [-dsn-notify n] [-dsn-ret r] [-F file|dir|mbox|maildir] [-header line] [-from-file f] [-to-file f] [-duration d] [-metrics addr] [-json] [-hdr-log file] [-verify file] [inet:]host[:port] | unix:path")
		fs.PrintDefaults()
	}
	if err := cli.Parse(fs, cli.Grouped(fs, args), "wirespeed smtp-source", stdout); err != nil {
		return cli.ParseError(err)
	}
	if fs.NArg() != 1 {
		return cli.Usagef("smtp-source: want one server address (host:port), got %d arguments; see -h", fs.NArg())
	}
	// With -json, a run past the flags prints one JSON object whatever
	// happens: the result (with the error, if one stopped the run), or,
	// for an error that leaves none (no connection could be opened, a
	// file that cannot be read), the error alone.
	printed := false
	if *jsonOut {
		defer func() {
			if !printed {
				err = cli.JSONError(ctx, stdout, err)
			}
		}()
	}
	cfg.Addr = fs.Arg(0)
	if err := checkServerAddr(cfg.Addr); err != nil {
		return cli.Usagef("smtp-source: server address %q: %v", cfg.Addr, err)
	}
	if *metricsAddr != "" {
		if err := cli.CheckHostPort(*metricsAddr); err != nil {
			return cli.Usagef("smtp-source: -metrics %q: %v", *metricsAddr, err)
		}
	}
	cfg.NoSize = !*size
	mSet := false
	fs.Visit(func(f *flag.Flag) {
		mSet = mSet || f.Name == "m"
		// -f '' (or -t '') is the null address, as with Postfix's
		// smtp-source, not the default.
		if f.Name == "f" && cfg.From == "" {
			cfg.From = "<>"
		}
		if f.Name == "t" && cfg.To == "" {
			cfg.To = "<>"
		}
	})
	if err := conflicts(fs); err != nil {
		return err
	}
	if !mSet && (cfg.Duration > 0 || cfg.Stages != nil) {
		cfg.Messages = 0 // as many as the time allows
	}
	// A time limit of 0 would be taken for the default: given, it is a
	// mistake; so is a -spin of 0, which Config takes for its default,
	// 30µs, not for no spinning. No time may be negative.
	for _, d := range []struct {
		flag   string
		v      time.Duration
		zeroOK bool
	}{{"timeout", cfg.Timeout, false}, {"dial-timeout", cfg.DialTimeout, false}, {"duration", cfg.Duration, true}, {"spin", cfg.Spin, false}} {
		if d.v < 0 || d.v == 0 && !d.zeroOK {
			want := "more than 0"
			if d.zeroOK {
				want = "0 or more"
			}
			return cli.Usagef("smtp-source: -%s %v: want %s", d.flag, d.v, want)
		}
	}
	// As Postfix's smtp-source: a count of 0 is a mistake, not the default.
	for _, c := range []struct {
		n    int
		what string
	}{{cfg.Messages, "message count"}, {cfg.Sessions, "session count"}, {cfg.Recipients, "recipient count"}} {
		if c.n < 1 && (c.what != "message count" || mSet) {
			return cli.Usagef("smtp-source: bad %s: %d", c.what, c.n)
		}
	}
	// A chunk size of 0 would be the library's default, which the flag
	// already shows: given on the command line, it is a mistake.
	if cfg.ConnectTries < 1 {
		return cli.Usagef("smtp-source: -C %d: want at least 1 try", cfg.ConnectTries)
	}
	if cfg.WindowSize < 0 || cfg.WindowSize > sockbuf.MaxSize {
		return cli.Usagef("smtp-source: -T %d: want a size in bytes up to %d (0: the system's)", cfg.WindowSize, sockbuf.MaxSize)
	}
	if w := sockbuf.Capped(cfg.WindowSize); cfg.WindowSize > 0 && w != "" {
		fmt.Fprintf(stderr, "smtp-source: -T %d: %s\n", cfg.WindowSize, w)
	}
	if cfg.ChunkSize < 1 {
		return cli.Usagef("smtp-source: -chunk-size %d: want at least 1 byte", cfg.ChunkSize)
	}
	if cfg.Sessions > smtpsource.MaxSessions {
		return cli.Usagef("smtp-source: -s %d: want at most %d sessions", cfg.Sessions, smtpsource.MaxSessions)
	}
	if cfg.Recipients > smtpsource.MaxRecipients {
		return cli.Usagef("smtp-source: -r %d: want at most %d recipients", cfg.Recipients, smtpsource.MaxRecipients)
	}
	switch {
	case *ipv4 && *ipv6:
		return cli.Usagef("smtp-source: -4 and -6 together")
	case *ipv4:
		cfg.IPVersion = 4
	case *ipv6:
		cfg.IPVersion = 6
	}
	if cfg.TLS || cfg.TLSImplicit {
		tc, err := tlsConfig(*tlsCA, *tlsName, *tlsInsecure, *tlsResume, *tlsCert, *tlsKey)
		if err != nil {
			return err
		}
		cfg.TLSConfig = tc
	}
	if *auth != "" {
		user, pass, ok := strings.Cut(*auth, ":")
		if !ok || user == "" {
			return cli.Usagef("smtp-source: -auth wants user:password")
		}
		cfg.AuthUser, cfg.AuthPass = user, pass
	}
	if *msgFile != "" {
		*body = "file:" + *msgFile
	}
	if path, ok := strings.CutPrefix(*body, "file:"); ok {
		// CRLF-ended as loaded, in the files' buffers: the run sends
		// them as they are and holds them once, not a copy of them too.
		msgs, err := smtpsource.LoadMessages(path)
		if err != nil {
			return fmt.Errorf("smtp-source: -F: %w", err)
		}
		if len(msgs) == 1 {
			cfg.Message = msgs[0]
		} else {
			cfg.MessageSet = msgs
		}
	} else {
		cfg.Body = *body
	}
	for _, l := range []struct {
		flag, file string
		to         *[]string
	}{{"-from-file", *fromFile, &cfg.FromList}, {"-to-file", *toFile, &cfg.ToList}} {
		if l.file == "" {
			continue
		}
		addrs, err := addressList(l.file)
		if err != nil {
			return fmt.Errorf("smtp-source: %s: %w", l.flag, err)
		}
		if len(addrs) == 0 {
			return cli.Usagef("smtp-source: %s: no address in %s", l.flag, l.file)
		}
		*l.to = addrs
	}
	if cfg.ToList != nil && len(cfg.ToList) < cfg.Recipients {
		return cli.Usagef("smtp-source: -r %d: more than the %d addresses of -to-file %s", cfg.Recipients, len(cfg.ToList), *toFile)
	}
	if *counter {
		cfg.Counter = stdout
		if *jsonOut {
			cfg.Counter = stderr
		}
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	if *verbose {
		cfg.Trace = stderr
	}
	// What Check would refuse for these flags' values, naming them.
	switch {
	case (cfg.TLS || cfg.TLSImplicit) && noHostName(cfg.Addr) && *tlsName == "" && !*tlsInsecure:
		return cli.Usagef("smtp-source: -tls or -tls-implicit over %s needs -tls-name (or -tls-insecure): no host name to verify the certificate against", cfg.Addr)
	case cfg.QPS > 0 && cfg.Duration > 0 && cfg.Duration.Seconds()*cfg.QPS < 1:
		return cli.Usagef("smtp-source: -duration %v shorter than one interval of -qps %g", cfg.Duration, cfg.QPS)
	case slices.Contains([]string{"base64", "longline", "mail"}, cfg.Body) && cfg.Length == 0 && cfg.LengthMax == 0:
		return cli.Usagef("smtp-source: -body %s needs -l (a length above 0)", cfg.Body)
	}
	// Refused before -hdr-log is opened, with the exit status of a bad
	// flag.
	if err := cfg.Check(); err != nil {
		return configUsage(err)
	}
	var logFile io.WriteCloser // -hdr-log's, closed after the run, its error said
	if *hdrLog != "" {
		// Emptied only when the run writes to it, once a connection has
		// opened: a run that opens none leaves an earlier run's file as
		// it was.
		f, err := createLog(*hdrLog)
		if err != nil {
			return fmt.Errorf("smtp-source: -hdr-log: %w", err)
		}
		logFile = f
		defer func() {
			if logFile != nil {
				logFile.Close() // a return before the run: nothing written
			}
		}()
		cfg.HdrLog = f
	}
	cfg.Digests = *verify != ""
	if *verify != "" {
		// The log may be written during the run, by the sink; its
		// directory must be there now, or the run would be for nothing.
		if fi, err := os.Stat(filepath.Dir(*verify)); err != nil || !fi.IsDir() {
			return cli.Usagef("smtp-source: -verify %s: no such directory", *verify)
		}
		if fi, err := os.Stat(*verify); err == nil && fi.IsDir() {
			return cli.Usagef("smtp-source: -verify %s: a directory, not a digest log", *verify)
		}
	}
	if *metricsAddr != "" {
		cfg.Live = &smtpsource.Live{}
		ms, err := metrics.Serve(*metricsAddr, sourceMetrics(cfg.Live))
		if err != nil {
			// As smtp-sink's -metrics and serve's -addr: named, and a
			// usage error where no run could listen there.
			return fmt.Errorf("smtp-source: %w", cli.ListenError("-metrics", *metricsAddr, err))
		}
		defer ms.Close()
		fmt.Fprintf(stderr, "metrics on http://%s/metrics\n", ms.Addr())
	}
	res, runErr := smtpsource.Run(ctx, cfg) // it names smtpsource
	var closeErr error
	if logFile != nil {
		// The log's last bytes may fail only here (a file system that
		// writes back at close: NFS, a quota); unless a write failed
		// first, which stopped the log, that is the log's error.
		closeErr = logFile.Close()
		logFile = nil
	}
	runErr = nameHdrLog(runErr) // reported after the result, which is whole
	if closeErr != nil && !errors.Is(runErr, smtpsource.ErrHdrLog) {
		runErr = errors.Join(runErr, fmt.Errorf("smtp-source: -hdr-log: %w", closeErr))
	}
	if res == nil {
		return runErr // no connection opened (the log's Close may still fail)
	}
	var v *smtpsource.Verification
	var verr error // reported after the result, which is not lost for it
	if *verify != "" {
		var f *os.File
		if f, verr = os.Open(*verify); verr == nil {
			v, verr = smtpsource.Verify(f, res.Digests)
			f.Close()
		}
		if verr != nil {
			verr = fmt.Errorf("smtp-source: -verify: %w", verr)
		}
	}
	if *jsonOut {
		printed = true
		out := struct {
			*smtpsource.Result
			Verify *smtpsource.Verification `json:"verify,omitempty"`
			Error  string                   `json:"error,omitempty"`
		}{res, v, ""}
		if e := errors.Join(runErr, verr); e != nil {
			out.Error = e.Error()
		}
		if err := json.NewEncoder(stdout).Encode(out); err != nil {
			return err
		}
	} else if err := Print(stdout, res, v); err != nil {
		return err
	}
	if runErr != nil && verr != nil {
		return errors.Join(runErr, verr) // neither hides the other
	}
	if runErr != nil {
		return runErr // a fatal stop, after the result so far
	}
	if verr != nil {
		return verr
	}
	if res.Errors > 0 || res.Failed > 0 || res.Interrupted || (v != nil && !v.OK()) {
		return cli.StatusError{Status: 1}
	}
	return nil
}

// createHdrLog opens the -hdr-log file, a cli.Output.
func createHdrLog(path string) (io.WriteCloser, error) {
	f, err := cli.CreateOutput(path)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// nameHdrLog names -hdr-log in the part of err, Run's error, that is the
// interval log's (smtpsource.ErrHdrLog), alone or joined to the error of
// a fatal stop, which keeps its own words.
func nameHdrLog(err error) error {
	j, joined := err.(interface{ Unwrap() []error })
	switch {
	case !errors.Is(err, smtpsource.ErrHdrLog):
		return err
	case joined && !slices.Contains(j.Unwrap(), smtpsource.ErrHdrLog):
		var errs []error
		for _, e := range j.Unwrap() {
			errs = append(errs, nameHdrLog(e))
		}
		return errors.Join(errs...)
	}
	return fmt.Errorf("smtp-source: -hdr-log: %w", err)
}

// flagOf is the flag of each smtpsource.Config field a ConfigError
// names (the ones that are no flag's, or that the checks above refuse
// first, are not here).
var flagOf = map[string]string{
	"Sessions": "-s", "Messages": "-m", "Length": "-l", "LengthMax": "-l", "Recipients": "-r",
	"From": "-f", "To": "-t", "Helo": "-M", "Subject": "-S", "OldMode": "-o", "NumberRecipients": "-N",
	"Wait": "-w", "RandomWait": "-R", "ConnectTries": "-C", "WindowSize": "-T",
	"ChunkSize": "-chunk-size", "Body": "-body", "Message": "-F", "MessageSet": "-F", "Headers": "-header",
	"FromList": "-from-file", "ToList": "-to-file", "TLS": "-tls", "XClient": "-xclient", "XForward": "-xforward",
	"DSNNotify": "-dsn-notify", "DSNRet": "-dsn-ret", "DSNEnvID": "-dsn-envid",
	"AuthUser": "-auth", "AuthPass": "-auth", "AuthMech": "-auth-mech",
	"QPS": "-qps", "Stages": "-qps", "Duration": "-duration",
}

// configUsage is the usage error of err, Config.Check's: it names the
// flag of the field at fault ("line break or NUL in the sender" named
// none), and errors.Is still takes it for smtpsource.ErrConfig.
func configUsage(err error) error {
	var ce *smtpsource.ConfigError
	if errors.As(err, &ce) && flagOf[ce.Field] != "" {
		return cli.FlagUsage("smtp-source", "smtpsource", flagOf[ce.Field], err)
	}
	return cli.Usage(err)
}

// conflictingFlags are pairs of flags that ask for contradictory things:
// each given (a boolean true, -w, -R or -qps above 0) with the other is
// a usage error, rather than one of them silently winning. Postfix's
// smtp-source refuses -l with -F too; it ignores -S with -F and with -o,
// which are refused here as well.
var conflictingFlags = [][2]string{
	{"f", "from-file"}, {"t", "to-file"}, {"N", "to-file"},
	{"F", "l"}, {"F", "S"}, {"F", "body"},
	{"w", "R"}, {"w", "qps"}, {"R", "qps"},
	{"tls", "tls-implicit"}, {"tls-ca", "tls-insecure"},
	{"o", "header"}, {"o", "tls"}, {"o", "tls-implicit"}, {"o", "auth"},
	// Old mode sends no header and no EHLO, so no extension is offered.
	{"o", "S"}, {"o", "pipelining"}, {"o", "chunking"}, {"o", "xclient"}, {"o", "xforward"},
	{"o", "dsn-notify"}, {"o", "dsn-ret"}, {"o", "dsn-envid"},
}

// neededFlags are flags that mean something only with another: each
// given without any of the flags it needs (given as conflicts takes
// them) is a usage error naming them, rather than ignored (-chunk-size,
// -spin) or refused without a name.
var neededFlags = []struct {
	flag  string
	needs []string
}{
	{"auth-mech", []string{"auth"}},
	{"chunk-size", []string{"chunking"}},
	{"spin", []string{"qps", "w", "R"}}, // the waits it ends
	{"tls-cert", []string{"tls-key"}}, {"tls-key", []string{"tls-cert"}},
	{"tls-ca", []string{"tls", "tls-implicit"}},
	{"tls-name", []string{"tls", "tls-implicit"}},
	{"tls-insecure", []string{"tls", "tls-implicit"}},
	{"tls-resume", []string{"tls", "tls-implicit"}},
	{"tls-cert", []string{"tls", "tls-implicit"}},
	{"tls-key", []string{"tls", "tls-implicit"}},
}

// conflicts is the usage error for the first pair of conflictingFlags
// given together, naming both, or else for the first of neededFlags
// given without what it needs; -body file:PATH is -F here. A flag is
// given if named on the command line with a value that asks for
// something: a boolean true, -w, -R or -qps above 0, a string not empty
// (an empty -f or -t, the null address, counts; -header always does).
func conflicts(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		v := f.Value.String()
		switch b, ok := f.Value.(interface{ IsBoolFlag() bool }); {
		case ok && b.IsBoolFlag():
			given[f.Name] = v == "true"
		case f.Name == "w" || f.Name == "R":
			given[f.Name] = v != "0s"
		case f.Name == "qps":
			given[f.Name] = v != "0"
		default:
			given[f.Name] = v != "" || f.Name == "f" || f.Name == "t" || f.Name == "header"
		}
	})
	for _, p := range conflictingFlags {
		if given[p[0]] && given[p[1]] {
			return cli.Usagef("smtp-source: -%s and -%s together: they ask for different things", p[0], p[1])
		}
	}
	if strings.HasPrefix(fs.Lookup("body").Value.String(), "file:") {
		for _, other := range []string{"l", "S"} {
			if given[other] {
				return cli.Usagef("smtp-source: -body file: and -%s together: they ask for different things", other)
			}
		}
	}
	for _, n := range neededFlags {
		if given[n.flag] && !slices.ContainsFunc(n.needs, func(f string) bool { return given[f] }) {
			return cli.Usagef("smtp-source: -%s needs -%s", n.flag, strings.Join(n.needs, " or -"))
		}
	}
	return nil
}

// checkServerAddr returns what is wrong with the server's address, if
// no dial could use it: a unix: with no path, no host, an empty port,
// port 0 (no server listens there), or one that is neither a number up
// to 65535 nor a service name. An address with no port (a host, a bare
// IPv6 address) gets the default port.
func checkServerAddr(addr string) error {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		if path == "" {
			return errors.New("unix: names no socket path")
		}
		return nil
	}
	hp := strings.TrimPrefix(addr, "inet:")
	if hp == "" {
		return errors.New("names no host")
	}
	_, port, err := net.SplitHostPort(hp)
	switch {
	case err != nil:
		return nil // no port: the default one
	case port == "":
		return errors.New("an empty port (leave the ':' out for the default)")
	}
	if err := cli.CheckHostPort(hp); err != nil {
		return err
	}
	if p, err := net.LookupPort("tcp", port); err == nil && p == 0 {
		return errors.New("port 0: no server listens there")
	}
	return nil
}

// noHostName reports whether the server address names no host a
// certificate could be verified against: a unix: socket, or an empty
// host (:PORT, inet::PORT, which dial the local system).
func noHostName(addr string) bool {
	if strings.HasPrefix(addr, "unix:") {
		return true
	}
	host, _, err := net.SplitHostPort(strings.TrimPrefix(addr, "inet:"))
	return err == nil && host == ""
}

// tlsConfig is the TLS configuration the -tls flags ask for.
func tlsConfig(caFile, name string, insecure, resume bool, certFile, keyFile string) (*tls.Config, error) {
	tc := &tls.Config{ServerName: name, InsecureSkipVerify: insecure}
	if certFile != "" {
		cert, err := cli.LoadKeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("smtp-source: -tls-cert, -tls-key: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	if caFile != "" {
		pem, err := cli.ReadPEM(caFile)
		if err != nil {
			return nil, fmt.Errorf("smtp-source: -tls-ca: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("smtp-source: -tls-ca: no PEM certificate in %s", caFile)
		}
	}
	if resume {
		tc.ClientSessionCache = tls.NewLRUClientSessionCache(0)
	}
	return tc, nil
}

// Print writes r (and v, if not nil) for people: the load, the
// throughput, the latencies by phase as a table, the reply codes, what
// TLS agreed on and the errors by kind.
func Print(w io.Writer, r *smtpsource.Result, v *smtpsource.Verification) error {
	load := "closed loop"
	if r.TargetQPS > 0 {
		load = fmt.Sprintf("open loop at %s msg/s", strconv.FormatFloat(r.TargetQPS, 'f', -1, 64))
	}
	if r.Stages != nil {
		var st []string
		for _, s := range r.Stages {
			st = append(st, smtpsource.Stage{From: s.From, To: s.To, Duration: time.Duration(s.DurationS * 1e9)}.String())
		}
		load = "open loop in stages " + strings.Join(st, ",")
	}
	if r.DurationLimitS > 0 {
		load += fmt.Sprintf(", for %gs", r.DurationLimitS)
	}
	var ext []string
	if r.Pipelining {
		ext = append(ext, "pipelining")
	}
	if r.Chunking {
		ext = append(ext, "BDAT")
	}
	switch r.TLSMode {
	case "starttls":
		ext = append(ext, "STARTTLS")
	case "implicit":
		ext = append(ext, "implicit TLS")
	}
	if r.AuthMech != "" {
		ext = append(ext, "AUTH "+r.AuthMech)
	}
	if len(ext) > 0 {
		load += ", " + strings.Join(ext, ", ")
	}
	length := strconv.Itoa(r.Length)
	if r.LengthMax > r.Length {
		length += ":" + strconv.Itoa(r.LengthMax)
	}
	messages := strconv.Itoa(r.Messages) + " messages"
	if r.Messages == 0 {
		messages = "no message limit"
	}
	fmt.Fprintf(w, "%s, %d sessions, %s, %s, -l %s, %d recipients each, %.3fs\n",
		strings.ToUpper(r.Proto), r.Sessions, load, messages, length, r.Recipients, r.DurationS)
	fmt.Fprintf(w, "delivered %d of %d started (failed %d), %.0f msg/s, %.2f MB/s, %d connections\n",
		r.Delivered, r.Started, r.Failed, r.MsgPerS, r.MBPerS, r.Connections)
	if r.Interrupted {
		fmt.Fprintln(w, "interrupted: stopped before the run's end")
	}
	if r.Abandoned > 0 {
		fmt.Fprintf(w, "abandoned %d: under way when the run stopped, reply unread (the server may have taken them)\n", r.Abandoned)
	}
	if r.Missed > 0 {
		fmt.Fprintf(w, "missed %d: due before -duration's end, never started (every session busy: the rate is more than the server took)\n", r.Missed)
	}
	if r.Unscheduled > 0 {
		fmt.Fprintf(w, "unscheduled %d: never due on the -qps schedule (its stages end at rate 0 before them)\n", r.Unscheduled)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "µs\tcount\tp50\tp90\tp99\tp99.9\tmax\tmean\t")
	rows := r.Phases.List()
	if r.Lateness != nil {
		rows = append(rows, smtpsource.NamedLatency{Name: "lateness", Latency: r.Lateness})
	}
	for i, st := range r.Stages {
		rows = append(rows, smtpsource.NamedLatency{Name: fmt.Sprintf("stage%d message", i+1), Latency: st.Message},
			smtpsource.NamedLatency{Name: fmt.Sprintf("stage%d failed", i+1), Latency: st.Failed})
	}
	for _, p := range rows {
		if l := p.Latency; l != nil {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", p.Name, l.Count, l.P50, l.P90, l.P99, l.P999, l.Max, l.Mean)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Lateness != nil {
		fmt.Fprintln(w, "(lateness: start minus intended start, the tool's own floor when sessions are free; message latency counts from the intended start)")
	}
	fmt.Fprintf(w, "replies: %s\n", replies(r.Replies))
	if t := r.TLS; t != nil {
		fmt.Fprintf(w, "tls: %s; %s; %d handshakes, %d resumed\n", codeList(t.Versions), codeList(t.CipherSuites), t.Handshakes, t.Resumed)
	}
	fmt.Fprintf(w, "errors %d (connect %d, connect refusals %d, i/o %d, protocol %d, rejections %d)\n",
		r.Errors, r.ConnectErrors, r.ConnectRefusals, r.IOErrors, r.ProtocolErrors, r.Rejections)
	if r.FirstError != "" {
		fmt.Fprintln(w, "first error:", r.FirstError)
	}
	if v != nil {
		verdict := "ok"
		if !v.OK() {
			verdict = "MISMATCH"
		}
		fmt.Fprintf(w, "verify: %s: %d matched, %d delivered but not logged, %d logged but not delivered\n", verdict, v.Matched, v.Missing, v.Unexpected)
	}
	return nil
}

// phaseOrder is the order in which replies prints the phases.
var phaseOrder = []string{"banner", "ehlo", "lhlo", "helo", "starttls", "auth", "mail", "rcpt", "data", "bdat", "dot", "rset", "quit"}

// replies formats reply counts as "banner 220×10; mail 250×99 451×1; ...".
func replies(m map[string]map[int]int64) string {
	var parts []string
	seen := map[string]bool{}
	for _, phase := range phaseOrder {
		seen[phase] = true
		if codes := m[phase]; codes != nil {
			parts = append(parts, phase+" "+codeList(codes))
		}
	}
	var rest []string
	for phase := range m {
		if !seen[phase] {
			rest = append(rest, phase)
		}
	}
	sort.Strings(rest)
	for _, phase := range rest {
		parts = append(parts, phase+" "+codeList(m[phase]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// codeList formats counts as "250×99 451×1", in the order of the keys.
func codeList[K cmp.Ordered](counts map[K]int64) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(counts)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%v×%d", k, counts[k])
	}
	return b.String()
}

// addressList reads a file of addresses, one a line; empty lines and
// lines starting with '#' are left out.
func addressList(path string) ([]string, error) {
	b, err := cli.ReadFileMax(path, cli.MaxList, "a list of addresses")
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && l[0] != '#' {
			addrs = append(addrs, l)
		}
	}
	return addrs, nil
}

// qpsFlag is -qps: a rate, or stages "FROM:TO/DURATION" and
// "RATE/DURATION", comma-separated.
type qpsFlag struct {
	qps    *float64
	stages *[]smtpsource.Stage
}

func (q *qpsFlag) String() string {
	if q.qps == nil {
		return "0"
	}
	if *q.stages != nil {
		var st []string
		for _, s := range *q.stages {
			st = append(st, s.String())
		}
		return strings.Join(st, ",")
	}
	return strconv.FormatFloat(*q.qps, 'g', -1, 64)
}

func (q *qpsFlag) Set(v string) error {
	if !strings.Contains(v, "/") {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r < 0 || math.IsInf(r, 0) || math.IsNaN(r) {
			return fmt.Errorf("%q: want a rate, or stages such as 100:1000/60s,1000/30s", v)
		}
		*q.qps, *q.stages = r, nil
		return nil
	}
	var stages []smtpsource.Stage
	for _, part := range strings.Split(v, ",") {
		rates, dur, _ := strings.Cut(part, "/")
		from, to, ramp := strings.Cut(rates, ":")
		if !ramp {
			to = from
		}
		a, errA := strconv.ParseFloat(from, 64)
		b, errB := strconv.ParseFloat(to, 64)
		d, errD := time.ParseDuration(dur)
		st := smtpsource.Stage{From: a, To: b, Duration: d}
		if errA != nil || errB != nil || errD != nil || d <= 0 || a < 0 || b < 0 || math.IsInf(a+b, 0) || math.IsNaN(a+b) {
			return fmt.Errorf("stage %q: want FROM:TO/DURATION or RATE/DURATION, such as 100:1000/60s", part)
		}
		stages = append(stages, st)
	}
	if slices.IndexFunc(stages, func(st smtpsource.Stage) bool { return st.From > 0 || st.To > 0 }) < 0 {
		return fmt.Errorf("%q: every stage at rate 0: no message would be due", v)
	}
	*q.qps, *q.stages = 0, stages
	return nil
}

// lengthFlag is -l: a length, or MIN:MAX.
type lengthFlag struct{ min, max *int }

func (l *lengthFlag) String() string {
	if l.min == nil || *l.max == 0 {
		return "0"
	}
	return fmt.Sprintf("%d:%d", *l.min, *l.max)
}

func (l *lengthFlag) Set(v string) error {
	lo, hi, ranged := strings.Cut(v, ":")
	a, err := strconv.Atoi(lo)
	if err != nil || a < 0 {
		return fmt.Errorf("%q: want a length in bytes or MIN:MAX", v)
	}
	b := 0
	if ranged {
		if b, err = strconv.Atoi(hi); err != nil || b < a {
			return fmt.Errorf("%q: want MIN:MAX, MIN <= MAX", v)
		}
	}
	if max(a, b) > smtpsource.MaxLength {
		return fmt.Errorf("%q: want at most %d bytes (1 GiB)", v, smtpsource.MaxLength)
	}
	*l.min, *l.max = a, b
	return nil
}

// seconds is a duration flag that also takes a number of seconds, as
// smtp-source's -w and -R do.
type seconds time.Duration

func (s *seconds) String() string { return time.Duration(*s).String() }

func (s *seconds) Set(v string) error {
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if !(n >= 0 && n <= 1e9) { // NaN too
			return fmt.Errorf("%q: want 0 to 1e9 seconds", v)
		}
		*s = seconds(n * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("%q: want seconds or a duration such as 10ms", v)
	}
	*s = seconds(d)
	return nil
}

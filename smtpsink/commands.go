package smtpsink

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wirespeed/wirespeed/textproto"
)

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
	if ss.cfg.OnCommand != nil && ss.known(verb) {
		ss.cfg.OnCommand(ss.id, line) // as it came, before any delay
	}
	if d := ss.s.k.delay[verb]; d > 0 {
		return ss.delayed(d, verb, arg, args)
	}
	return ss.dispatch(verb, arg, args)
}

// delayed is command's dispatch after a delay d. On the loops engine the
// session pauses and sync stays false: the loop sends the replies when
// its call returns anyway. (Apart from command, so that commands without a
// delay make no closure.)
func (ss *session) delayed(d time.Duration, verb, arg, args string) (sync, ok bool) {
	ok = ss.wait(d, func() bool {
		sync, ok = ss.dispatch(verb, arg, args)
		return ok
	})
	return sync, ok
}

// known reports whether verb is a command the session serves, for
// Config.OnCommand: not EHLO without ESMTP, XCLIENT or XFORWARD turned
// off, which it answers as unknown (as Postfix's smtp-sink -s leaves them
// out).
func (ss *session) known(verb string) bool {
	switch verb {
	case "EHLO":
		return !ss.cfg.NoESMTP
	case "XCLIENT":
		return !ss.cfg.NoXCLIENT
	case "XFORWARD":
		return !ss.cfg.NoXFORWARD
	}
	return true
}

// dispatch serves a command line once its delay, if any, is over; see
// command.
func (ss *session) dispatch(verb, arg, args string) (sync, ok bool) {
	if f, ok := ss.s.k.force[verb]; ok && verb != "BDAT" {
		// Not ss.quit, even for QUIT: the session goes on or a forced
		// reply closes it (SessionInfo.Quit false), as Postfix
		// smtp-sink's -f, -r, -q and -Q QUIT do not count a quit.
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
		return true, ss.hello(verb, arg)
	case "MAIL":
		return false, ss.mail(arg)
	case "RCPT":
		return false, ss.rcpt(arg)
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
		if ss.tls {
			ss.reply(214, ss.s.helpTLS)
		} else {
			ss.reply(214, ss.s.help)
		}
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
	case "XCLIENT", "XFORWARD":
		if verb == "XCLIENT" && ss.cfg.NoXCLIENT || verb == "XFORWARD" && ss.cfg.NoXFORWARD {
			ss.reply(500, "5.5.2 Error: command not recognized")
			break
		}
		ss.xcmd(verb, arg)
		return verb == "XCLIENT", true
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
	case "MAIL", "RCPT", "DATA", "BDAT", "VRFY", "EXPN", "AUTH", "HELP", "TURN", "ETRN", "ATRN", "XCLIENT", "XFORWARD":
		return true
	}
	return false
}

// endsGroup reports the commands after which a pipelining client waits
// for the replies (RFC 2920 §3.1), and HELP.
func endsGroup(verb string) bool {
	switch verb {
	case "HELO", "EHLO", "LHLO", "DATA", "VRFY", "EXPN", "TURN", "QUIT", "NOOP", "HELP", "XCLIENT":
		return true
	}
	return false
}

// reset ends the transaction.
func (ss *session) reset() {
	ss.endCapture(ErrAborted)
	ss.inTx, ss.from, ss.nrcpt, ss.body, ss.utf8 = false, "", 0, "", false
	ss.to = ss.to[:0]
	ss.mailArgs, ss.rcptArgs = "", ss.rcptArgs[:0]
	ss.bdat = nil
	if ss.loop != nil {
		ss.releaseReader() // made for the chunks of a message
	}
}

// reader returns the textproto.Reader for message data. On the loops
// engine it is made for the chunks of a BDAT message, and reads what the
// loop hands over.
func (ss *session) reader() *textproto.Reader {
	if ss.r == nil {
		ss.r = textproto.NewReader(ss.s.reader(&ss.loop.feed))
	}
	return ss.r
}

// hello serves HELO, EHLO and LHLO; it returns false if the session
// ends.
func (ss *session) hello(verb, arg string) bool {
	switch {
	case ss.cfg.LMTP && verb != "LHLO":
		ss.reply(500, "5.5.1 Error: this is LMTP: send LHLO")
		return true
	case !ss.cfg.LMTP && verb == "LHLO":
		ss.reply(500, "5.5.2 Error: command not recognized")
		return true
	case verb == "EHLO" && ss.cfg.NoESMTP:
		ss.reply(502, "5.5.1 Error: command not implemented")
		return true
	case strings.TrimSpace(arg) == "":
		ss.reply(501, "5.5.4 Syntax: "+verb+" hostname")
		return true
	}
	if r, ok := ss.rule(StageHelo, strings.TrimSpace(arg)); ok {
		return ss.forced(r)
	}
	ss.reset()
	ss.greeted, ss.esmtp = true, verb != "HELO"
	ss.helo = strings.TrimSpace(arg)
	if !ss.esmtp {
		ss.reply(250, ss.cfg.Hostname)
		return true
	}
	ss.okReplies[0]++ // okSlot(250)
	if ss.tls {
		ss.bw.Write(ss.s.ehloTLS)
		return true
	}
	ss.bw.Write(ss.s.ehlo)
	return true
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
		kw = append(kw, "AUTH "+strings.Join(cfg.AuthMechanisms, " "))
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
	if !cfg.NoDSN {
		kw = append(kw, "DSN")
	}
	if !cfg.NoXCLIENT {
		kw = append(kw, "XCLIENT "+xclientAttrs)
	}
	if !cfg.NoXFORWARD {
		kw = append(kw, "XFORWARD "+xforwardAttrs)
	}
	if !cfg.NoEnhancedStatusCodes {
		kw = append(kw, "ENHANCEDSTATUSCODES")
	}
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

// helpText renders HELP's reply text once per server, for a session in
// the clear or over TLS: the commands the session serves there, as EHLO
// offers its extensions (LHLO alone in LMTP, HELO alone without ESMTP,
// STARTTLS before TLS, AUTH where EHLO offers it, BDAT with CHUNKING,
// XCLIENT and XFORWARD unless turned off).
func helpText(cfg *Config, tls bool) string {
	cmds := []string{"2.0.0 Commands:"}
	switch {
	case cfg.LMTP:
		cmds = append(cmds, "LHLO")
	case cfg.NoESMTP:
		cmds = append(cmds, "HELO")
	default:
		cmds = append(cmds, "HELO", "EHLO")
	}
	if cfg.TLS != nil && !cfg.TLSImplicit && !tls {
		cmds = append(cmds, "STARTTLS")
	}
	if cfg.Auth && (tls || cfg.AuthPlaintext) {
		cmds = append(cmds, "AUTH")
	}
	cmds = append(cmds, "MAIL", "RCPT", "DATA")
	if !cfg.NoChunking {
		cmds = append(cmds, "BDAT")
	}
	cmds = append(cmds, "RSET", "NOOP", "VRFY")
	if !cfg.NoXCLIENT {
		cmds = append(cmds, "XCLIENT")
	}
	if !cfg.NoXFORWARD {
		cmds = append(cmds, "XFORWARD")
	}
	cmds = append(cmds, "HELP", "QUIT")
	return strings.Join(cmds, " ")
}

// mailParam gives MAIL's parameters that dsnMail does not check a bit
// each, to find one given twice.
func mailParam(key string) uint8 {
	switch key {
	case "SIZE":
		return 1
	case "BODY":
		return 2
	case "SMTPUTF8":
		return 4
	case "AUTH":
		return 8
	}
	return 0
}

// mail serves MAIL; it returns false if the session ends.
func (ss *session) mail(arg string) bool {
	switch {
	case !ss.greeted && ss.cfg.LMTP:
		ss.reply(503, "5.5.1 Error: send LHLO first")
		return true
	case !ss.greeted && (ss.cfg.HeloRequired || ss.restarted):
		ss.reply(503, "5.5.1 Error: send HELO/EHLO first")
		return true
	case ss.inTx:
		ss.reply(503, "5.5.1 Error: nested MAIL command")
		return true
	}
	path, params, ok := parsePath(arg, "FROM:")
	if !ok {
		ss.reply(501, "5.5.4 Syntax: MAIL FROM:<address>")
		return true
	}
	body, declared := "", false
	var dsn [2]bool // RET, ENVID seen
	var seen uint8  // SIZE, BODY, SMTPUTF8, AUTH (mailParam)
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
			return true
		}
		b := mailParam(key)
		if seen&b != 0 {
			ss.reply(501, "5.5.4 Syntax: "+key+" given twice") // as RET, ENVID and RCPT's
			return true
		}
		seen |= b
		switch {
		case key == "SIZE":
			n, err := strconv.ParseInt(val, 10, 64)
			if !hasVal || err != nil || n < 0 || val[0] == '+' {
				ss.reply(501, "5.5.4 Syntax: SIZE=number")
				return true
			}
			if ss.cfg.MaxSize > 0 && n > ss.cfg.MaxSize {
				ss.reply(552, "5.3.4 Error: message size exceeds fixed limit")
				return true
			}
		case key == "BODY":
			b := strings.ToUpper(val)
			switch {
			case b == "7BIT", b == "8BITMIME" && !ss.cfg.No8BitMIME, b == "BINARYMIME" && !ss.cfg.NoChunking:
				body = b
			default:
				ss.reply(501, "5.5.4 Error: unsupported BODY type")
				return true
			}
		case key == "SMTPUTF8" && !hasVal && !ss.cfg.NoSMTPUTF8:
			declared = true
		case key == "AUTH" && hasVal && ss.cfg.Auth:
			// RFC 4954 §5: the submitter's identity, "<>" if unknown;
			// taken and ignored.
		case (key == "RET" || key == "ENVID") && !ss.cfg.NoDSN:
			if e := dsnMail(key, val, hasVal, &dsn); e != "" {
				ss.reply(501, e)
				return true
			}
		default:
			ss.reply(555, "5.5.4 Error: unsupported MAIL parameter")
			return true
		}
	}
	if code, text := ss.checkPath(path, declared, "5.1.7", "sender"); code != 0 {
		ss.reply(code, text)
		return true
	}
	if r, ok := ss.rule(StageMail, path); ok {
		return ss.forced(r)
	}
	ss.inTx, ss.body, ss.utf8 = true, body, declared
	if ss.s.keepEnvelope {
		ss.from = path
	}
	if ss.cfg.Capture != nil {
		ss.mailArgs, ss.mailAt = strings.TrimSpace(arg[len("FROM:"):]), ss.s.now()
	}
	ss.reply(250, "2.1.0 Ok")
	return true
}

// rcpt serves RCPT; it returns false if the session ends.
func (ss *session) rcpt(arg string) bool {
	switch {
	case !ss.inTx:
		ss.reply(503, "5.5.1 Error: need MAIL command")
		return true
	case ss.bdat != nil:
		ss.reply(503, "5.5.1 Error: BDAT in progress")
		return true
	}
	path, params, ok := parsePath(arg, "TO:")
	if !ok || path == "" {
		ss.reply(501, "5.5.4 Syntax: RCPT TO:<address>")
		return true
	}
	var dsn [2]bool // NOTIFY, ORCPT seen
	for p := range strings.FieldsSeq(params) {
		key, val, hasVal := strings.Cut(p, "=")
		key = strings.ToUpper(key)
		switch {
		case !ss.esmtp:
			ss.reply(555, "5.5.4 Error: RCPT parameters need EHLO")
			return true
		case (key == "NOTIFY" || key == "ORCPT") && !ss.cfg.NoDSN:
			if e := dsnRcpt(key, val, hasVal, ss.utf8, &dsn); e != "" {
				ss.reply(501, e)
				return true
			}
		default:
			ss.reply(555, "5.5.4 Error: unsupported RCPT parameter")
			return true
		}
	}
	if code, text := ss.checkPath(path, ss.utf8, "5.1.3", "recipient"); code != 0 {
		ss.reply(code, text)
		return true
	}
	if r, ok := ss.rule(StageRcpt, path); ok {
		return ss.forced(r)
	}
	if ss.nrcpt >= ss.cfg.MaxRecipients {
		ss.reply(452, "4.5.3 Error: too many recipients")
		return true
	}
	ss.nrcpt++
	if ss.s.keepEnvelope {
		ss.to = append(ss.to, path)
	}
	if ss.cfg.Capture != nil {
		ss.rcptArgs = append(ss.rcptArgs, strings.TrimSpace(arg[len("TO:"):]))
	}
	ss.reply(250, "2.1.5 Ok")
	return true
}

// checkPath refuses a MAIL or RCPT path that is not ASCII unless the
// transaction declared SMTPUTF8 (declared true), as Postfix's smtpd does,
// with 553 5.6.7 (RFC 6531 §3.5); and one that declared it, but is not
// UTF-8, with 501 and the enhanced code status (5.1.7 for the sender,
// 5.1.3 for a recipient; RFC 3463), as an address of bad syntax. It
// returns code 0 for a path it takes. The refusal comes before the rules,
// as a syntax matter.
func (ss *session) checkPath(path string, declared bool, status, role string) (code int, text string) {
	ascii := true
	for i := 0; i < len(path); i++ {
		if path[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	switch {
	case ascii:
		return 0, ""
	case ss.cfg.NoSMTPUTF8:
		return 553, "5.6.7 Error: " + role + " address is not ASCII, and SMTPUTF8 is not offered"
	case !declared:
		return 553, "5.6.7 Error: " + role + " address is not ASCII, and MAIL did not declare SMTPUTF8"
	case !utf8.ValidString(path):
		return 501, status + " Error: " + role + " address is not valid UTF-8"
	}
	return 0, ""
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

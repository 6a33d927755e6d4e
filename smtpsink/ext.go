package smtpsink

import (
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Extensions a relay or a proxy speaks, as Postfix's smtp-sink offers
// them: DSN's parameters (RFC 3461) on MAIL and RCPT, and Postfix's
// XCLIENT and XFORWARD (www.postfix.org/XCLIENT_README.html,
// XFORWARD_README.html). The sink checks their syntax (and XCLIENT's and
// XFORWARD's addresses, ports and protocol, as Postfix's smtpd does) and
// keeps nothing of them.

// The attributes XCLIENT and XFORWARD take, as the EHLO reply names them.
const (
	xclientAttrs  = "NAME ADDR PORT PROTO HELO LOGIN DESTADDR DESTPORT"
	xforwardAttrs = "NAME ADDR PORT PROTO HELO IDENT SOURCE"
)

// isXtext reports whether s is RFC 3461's xtext: printable ASCII but '+'
// and '=', with "+XX" (upper-case hexadecimal) for any octet.
func isXtext(s string) bool { return xtext(s, false) }

// xtext reports whether s is xtext, or, with unicode, xtext but for its
// bytes past ASCII.
func xtext(s string, unicode bool) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case unicode && c >= utf8.RuneSelf:
		case c == '+':
			if i+2 >= len(s) || !isUpperHex(s[i+1]) || !isUpperHex(s[i+2]) {
				return false
			}
			i += 2
		case c < '!' || c > '~' || c == '=':
			return false
		}
	}
	return true
}

// isUnitext reports whether s is xtext but for characters past ASCII,
// which it holds as UTF-8 (RFC 6533's utf-8-addr-unitext, leniently:
// xtext's "+" escapes are taken too).
func isUnitext(s string) bool { return utf8.ValidString(s) && xtext(s, true) }

func isUpperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }

// dsnMail checks a DSN parameter of MAIL (RET or ENVID, given once each);
// it returns the reply text of a syntax error, or "".
func dsnMail(key, val string, hasVal bool, seen *[2]bool) string {
	switch key {
	case "RET":
		v := strings.ToUpper(val)
		if !hasVal || seen[0] || v != "FULL" && v != "HDRS" {
			return "5.5.4 Syntax: RET=FULL or RET=HDRS, once"
		}
		seen[0] = true
	case "ENVID":
		// RFC 3461 §4.4: at most 100 characters.
		if !hasVal || seen[1] || val == "" || len(val) > 100 || !isXtext(val) {
			return "5.5.4 Syntax: ENVID=xtext, at most 100 characters, once"
		}
		seen[1] = true
	}
	return ""
}

// dsnRcpt checks a DSN parameter of RCPT (NOTIFY or ORCPT, given once
// each) of a transaction that declared SMTPUTF8 or not; it returns the
// reply text of a syntax error, or "".
func dsnRcpt(key, val string, hasVal, smtputf8 bool, seen *[2]bool) string {
	switch key {
	case "NOTIFY":
		if !hasVal || seen[0] || !validNotify(strings.ToUpper(val)) {
			return "5.5.4 Syntax: NOTIFY=NEVER or NOTIFY=SUCCESS,FAILURE,DELAY (any of them, each once), once"
		}
		seen[0] = true
	case "ORCPT":
		// RFC 3461 §4.2: addr-type ";" xtext, at most 500 characters.
		// RFC 6533 §3: of addr-type utf-8, in a transaction that declared
		// SMTPUTF8, the address may hold UTF-8 as it is (unitext).
		typ, addr, ok := strings.Cut(val, ";")
		text := isXtext(addr) || smtputf8 && strings.EqualFold(typ, "utf-8") && isUnitext(addr)
		if !hasVal || seen[1] || !ok || !isAtom(typ) || addr == "" || len(val) > 500 || !text {
			return "5.5.4 Syntax: ORCPT=addr-type;xtext, at most 500 characters, once"
		}
		seen[1] = true
	}
	return ""
}

// validNotify reports whether v is NOTIFY's value (RFC 3461 §4.1): NEVER,
// or a list of SUCCESS, FAILURE and DELAY, none twice.
func validNotify(v string) bool {
	if v == "NEVER" {
		return true
	}
	var seen [3]bool
	for w := range strings.SplitSeq(v, ",") {
		i := -1
		switch w {
		case "SUCCESS":
			i = 0
		case "FAILURE":
			i = 1
		case "DELAY":
			i = 2
		}
		if i < 0 || seen[i] {
			return false
		}
		seen[i] = true
	}
	return true
}

// isAtom reports whether s is an RFC 5321 Atom: letters, digits and the
// printable specials of atext.
func isAtom(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0) {
			return false
		}
	}
	return true
}

// xcmd serves XCLIENT or XFORWARD: attr=value pairs, each attr one of
// those the EHLO reply names, each value xtext. XCLIENT starts the
// session anew, as Postfix's smtpd does: a new greeting, after which the
// client says EHLO again. XFORWARD is taken with 250.
func (ss *session) xcmd(verb, arg string) {
	attrs := xforwardAttrs
	if verb == "XCLIENT" {
		attrs = xclientAttrs
	}
	switch {
	case ss.inTx:
		ss.reply(503, "5.5.1 Error: MAIL transaction in progress")
		return
	case strings.TrimSpace(arg) == "":
		ss.reply(501, "5.5.4 Syntax: "+verb+" attribute=value...")
		return
	}
	for p := range strings.FieldsSeq(arg) {
		name, val, ok := strings.Cut(p, "=")
		name = strings.ToUpper(name)
		if !ok || !hasWord(attrs, name) {
			ss.reply(501, "5.5.4 Bad "+verb+" attribute name: "+name)
			return
		}
		if !isXtext(val) {
			ss.reply(501, "5.5.4 Bad "+verb+" attribute value for "+name)
			return
		}
		if !xattrValid(verb, name, xtextDecode(val)) {
			ss.reply(501, "5.5.4 Bad "+name+" syntax: "+val) // as Postfix's smtpd says it
			return
		}
	}
	if verb == "XFORWARD" {
		ss.reply(250, "2.0.0 Ok")
		return
	}
	ss.reset()
	ss.greeted, ss.esmtp, ss.restarted = false, false, true
	ss.greet()
}

// xattrValid reports whether v, an attribute's value decoded from
// xtext, is one Postfix's smtpd takes: ADDR and DESTADDR an IP address
// (IPv6 with or without "IPV6:"), PORT and DESTPORT digits, and
// XCLIENT's PROTO SMTP or ESMTP; each may be [UNAVAILABLE] or
// [TEMPUNAVAIL] instead. Other attributes take any value.
func xattrValid(verb, name, v string) bool {
	if v == "[UNAVAILABLE]" || v == "[TEMPUNAVAIL]" {
		return true
	}
	switch name {
	case "ADDR", "DESTADDR":
		if len(v) > 5 && strings.EqualFold(v[:5], "IPV6:") {
			v = v[5:]
		}
		a, err := netip.ParseAddr(v)
		return err == nil && a.Zone() == ""
	case "PORT", "DESTPORT":
		// Digits, as Postfix's smtpd checks it (which takes 70000).
		return v != "" && strings.TrimLeft(v, "0123456789") == ""
	case "PROTO":
		return verb != "XCLIENT" || strings.EqualFold(v, "SMTP") || strings.EqualFold(v, "ESMTP")
	}
	return true
}

// xtextDecode decodes s, which isXtext has taken: "+XX" is the octet
// XX.
func xtextDecode(s string) string {
	if !strings.Contains(s, "+") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '+' {
			n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(n))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hasWord reports whether the space-separated list holds w.
func hasWord(list, w string) bool {
	for f := range strings.FieldsSeq(list) {
		if f == w {
			return true
		}
	}
	return false
}

package sumcmd

import (
	"os"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file reproduces how coreutils writes file names: escaped on
// standard output (so that one checksum line stays one line), and quoted
// for the shell in diagnostics on standard error (gnulib's quotef, that is
// the shell-escape quoting style with ':' also forcing quotes).

// needsEscape reports whether a name gets the backslash treatment in a
// checksum line: a leading '\' on the line and \\, \n, \r escapes.
func needsEscape(name string) bool { return strings.ContainsAny(name, "\\\n\r") }

// appendEscaped appends name with '\' '\n' '\r' written as \\ \n \r.
func appendEscaped(dst []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// unescapeName reverses appendEscaped; it reports false for a name
// coreutils rejects: a lone trailing '\', '\' before anything but '\',
// 'n' or 'r', or a NUL byte.
func unescapeName(s []byte) (string, bool) {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case 0:
			return "", false
		case '\\':
			if i == len(s)-1 {
				return "", false
			}
			i++
			switch s[i] {
			case '\\':
				b.WriteByte('\\')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			default:
				return "", false
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// utf8Locale reports whether the environment selects a UTF-8 character
// type, in which case printable non-ASCII names are left unquoted, as
// coreutils does in such a locale. (A UTF-8 locale that is not installed
// makes coreutils fall back to C; that case is not detected.)
func utf8Locale() bool {
	for _, v := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if s := os.Getenv(v); s != "" {
			s = strings.ToLower(s)
			return strings.Contains(s, "utf-8") || strings.Contains(s, "utf8")
		}
	}
	return false
}

// printableRune reports whether s starts with a character a UTF-8 locale
// prints (glibc's iswprint), and its length: one correctly encoded (U+FFFD
// too) and assigned, but no control character and neither U+2028 nor
// U+2029. Format characters (a soft hyphen, U+200B) and private-use
// ones print; glibc's tables may be of another Unicode version than Go's.
func printableRune(s string) (size int, ok bool) {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && n <= 1 || r == 0x2028 || r == 0x2029 {
		return n, false
	}
	return n, unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs, unicode.Cf, unicode.Co)
}

// quoteName quotes name for a diagnostic the way coreutils' quotef does.
func quoteName(name string, utf8ok bool) string {
	if name == "" {
		return "''"
	}
	needQuotes := false
	dquoteOK := true // all characters may stand inside "..." unchanged
	hasSingle := false
	for i := 0; i < len(name); {
		c := name[i]
		size := 1
		safe, compat := false, false
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			strings.IndexByte("%+,-./]_", c) >= 0:
			safe, compat = true, true
		case c == ':':
			compat = true // quoted on request (quotef), but fine in "..."
		case c == '{' || c == '}':
			safe = len(name) != 1
			compat = !safe
		case c == '#' || c == '~':
			safe = i != 0
			compat = !safe
		case c == ' ':
			compat = true
		case c == '\'':
			hasSingle = true
			compat = true
		case strings.IndexByte("!\"$&()*;<=>[^`|?\\", c) >= 0:
			// shell specials: quoted, and not safe inside "..."
		case c < 0x20 || c == 0x7f:
			// control characters: quoted and escaped
		case c < 0x80:
			safe, compat = true, true // other printable ASCII, such as '@'
		default:
			if n, ok := printableRune(name[i:]); utf8ok && ok {
				safe, compat, size = true, true, n
			}
		}
		if !safe {
			needQuotes = true
		}
		if !compat {
			dquoteOK = false
		}
		i += size
	}
	if !needQuotes {
		return name
	}
	if hasSingle && dquoteOK {
		return `"` + name + `"`
	}
	quoted, pending := singleQuote(name, utf8ok, false)
	if hasSingle {
		// coreutils 9.1 (gnulib's quotearg) makes a second pass over names
		// with a single quote and starts it with the $'...' state the
		// first pass ended in: reproduce that quirk.
		quoted, _ = singleQuote(name, utf8ok, pending)
	}
	return quoted
}

// singleQuote writes name in '...' quotes with $'...' runs for control
// and unprintable bytes. inEscape is the initial state; the final state
// is returned with the text.
func singleQuote(name string, utf8ok, inEscape bool) (string, bool) {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(name); {
		c := name[i]
		if c >= 0x80 && utf8ok {
			if n, ok := printableRune(name[i:]); ok {
				if inEscape {
					b.WriteString("''")
					inEscape = false
				}
				b.WriteString(name[i : i+n])
				i += n
				continue
			}
		}
		i++
		var esc string
		switch c {
		case '\a':
			esc = `\a`
		case '\b':
			esc = `\b`
		case '\f':
			esc = `\f`
		case '\n':
			esc = `\n`
		case '\r':
			esc = `\r`
		case '\t':
			esc = `\t`
		case '\v':
			esc = `\v`
		default:
			if c < 0x20 || c >= 0x7f {
				esc = string([]byte{'\\', '0' + c>>6, '0' + (c>>3)&7, '0' + c&7})
			}
		}
		if esc != "" {
			if !inEscape {
				b.WriteString(`'$'`)
				inEscape = true
			}
			b.WriteString(esc)
			continue
		}
		if c == '\'' {
			b.WriteString(`'\''`)
			inEscape = false
			continue
		}
		if inEscape {
			b.WriteString("''")
			inEscape = false
		}
		b.WriteByte(c)
	}
	b.WriteByte('\'')
	return b.String(), inEscape
}

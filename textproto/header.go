package textproto

import nettextproto "net/textproto"

// A MIMEHeader maps header field names (keys) to their values. It is
// net/textproto's own type, so a header read here goes as it is to any API
// that takes one, such as mime/multipart's.
type MIMEHeader = nettextproto.MIMEHeader

// CanonicalMIMEHeaderKey returns the canonical form of the header field
// name s: the first letter and every letter after a hyphen upper case, all
// other letters lower case ("content-TYPE" becomes "Content-Type"). Names
// are taken to be ASCII. If s contains a space or any byte that RFC 9110
// does not allow in a field name (a token), s is returned unchanged.
// It is net/textproto's function.
func CanonicalMIMEHeaderKey(s string) string {
	return nettextproto.CanonicalMIMEHeaderKey(s)
}

// canonicalize rewrites the valid key bytes b in place into canonical
// case; upper says whether b[0] starts a word. ReadMIMEHeader uses it on
// the keys it reads, which it then interns (commonHeader) or keeps in its
// headerBuilder.
func canonicalize(b []byte, upper bool) {
	for i, c := range b {
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		} else if !upper && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
		upper = c == '-'
	}
}

// tokenByte reports the bytes allowed in a header field name: RFC 9110's
// tchar, that is ALPHA, DIGIT and !#$%&'*+-.^_`|~.
var tokenByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// badValueByte reports the bytes not allowed in a header field value: RFC
// 9110 allows HTAB, SP, VCHAR (0x21-0x7E) and obs-text (0x80-0xFF).
var badValueByte = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = c != '\t'
	}
	t[0x7f] = true
	return t
}()

// commonKeys are frequent canonical keys that ReadMIMEHeader interns, so
// that reading them allocates nothing: the names net/textproto interns as
// of Go 1.27 (Go 1.26 lacks Referer). commonHeader maps each to its index.
var commonKeys = [...]string{
	"Accept", "Accept-Charset", "Accept-Encoding", "Accept-Language",
	"Accept-Ranges", "Cache-Control", "Cc", "Connection", "Content-Id",
	"Content-Language", "Content-Length", "Content-Transfer-Encoding",
	"Content-Type", "Cookie", "Date", "Dkim-Signature", "Etag", "Expires",
	"From", "Host", "If-Modified-Since", "If-None-Match", "In-Reply-To",
	"Last-Modified", "Location", "Message-Id", "Mime-Version", "Pragma",
	"Received", "Referer", "Return-Path", "Server", "Set-Cookie",
	"Subject", "To", "User-Agent", "Via", "X-Forwarded-For",
	"X-Imforwards", "X-Powered-By",
}

var commonHeader = func() map[string]int32 {
	m := make(map[string]int32, len(commonKeys))
	for i, k := range commonKeys {
		m[k] = int32(i)
	}
	return m
}()

package textproto

// A MIMEHeader maps header field names (keys) to their values, in the
// order they appeared. Keys are in canonical form (see
// [CanonicalMIMEHeaderKey]); the methods canonicalize the key they are
// given.
type MIMEHeader map[string][]string

// Add appends value to the values of key.
func (h MIMEHeader) Add(key, value string) {
	key = CanonicalMIMEHeaderKey(key)
	h[key] = append(h[key], value)
}

// Set replaces the values of key with the single value.
func (h MIMEHeader) Set(key, value string) {
	h[CanonicalMIMEHeaderKey(key)] = []string{value}
}

// Get returns the first value of key, or "" if there is none. Use Values,
// or the map directly, for all values or for a key that is not canonical.
func (h MIMEHeader) Get(key string) string {
	if h == nil {
		return ""
	}
	vs := h[CanonicalMIMEHeaderKey(key)]
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// Values returns the values of key; the returned slice is the map's own,
// not a copy.
func (h MIMEHeader) Values(key string) []string {
	if h == nil {
		return nil
	}
	return h[CanonicalMIMEHeaderKey(key)]
}

// Del removes key and its values.
func (h MIMEHeader) Del(key string) {
	delete(h, CanonicalMIMEHeaderKey(key))
}

// CanonicalMIMEHeaderKey returns the canonical form of the header field
// name s: the first letter and every letter after a hyphen upper case, all
// other letters lower case ("content-TYPE" becomes "Content-Type"). Names
// are taken to be ASCII. If s contains a space or any byte that RFC 9110
// does not allow in a field name (a token), s is returned unchanged.
func CanonicalMIMEHeaderKey(s string) string {
	upper := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !tokenByte[c] {
			return s
		}
		if upper && 'a' <= c && c <= 'z' || !upper && 'A' <= c && c <= 'Z' {
			return canonicalKeyString(s, i)
		}
		upper = c == '-'
	}
	return s
}

// canonicalKeyString canonicalizes s, whose first i bytes are valid and
// already canonical.
func canonicalKeyString(s string, i int) string {
	for j := i; j < len(s); j++ {
		if !tokenByte[s[j]] {
			return s
		}
	}
	b := []byte(s)
	canonicalize(b[i:], i == 0 || b[i-1] == '-')
	if k, ok := commonHeader[string(b)]; ok {
		return k
	}
	return string(b)
}

// canonicalize rewrites the valid key bytes b in place into canonical
// case; upper says whether b[0] starts a word.
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

// commonHeader interns frequent canonical keys, so that reading them
// allocates nothing. It lists the same names as net/textproto.
var commonHeader = func() map[string]string {
	m := make(map[string]string)
	for _, k := range []string{
		"Accept", "Accept-Charset", "Accept-Encoding", "Accept-Language",
		"Accept-Ranges", "Cache-Control", "Cc", "Connection", "Content-Id",
		"Content-Language", "Content-Length", "Content-Transfer-Encoding",
		"Content-Type", "Cookie", "Date", "Dkim-Signature", "Etag", "Expires",
		"From", "Host", "If-Modified-Since", "If-None-Match", "In-Reply-To",
		"Last-Modified", "Location", "Message-Id", "Mime-Version", "Pragma",
		"Received", "Return-Path", "Server", "Set-Cookie", "Subject", "To",
		"User-Agent", "Via", "X-Forwarded-For", "X-Imforwards", "X-Powered-By",
	} {
		m[k] = k
	}
	return m
}()

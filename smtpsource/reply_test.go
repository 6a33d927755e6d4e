package smtpsource

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"unicode/utf8"
)

// A reply of a bare code ("250" CRLF, RFC 5321 §4.2's Reply-line with no
// text) is a whole reply: it failed every message as a short response,
// net/textproto's reading.
func TestReplyBareCode(t *testing.T) {
	f := &fakeServer{reply: func(verb, arg string) string {
		switch verb {
		case "CONNECT":
			return "220"
		case "DATA":
			return "354"
		case "QUIT":
			return "221"
		}
		return "250"
	}}
	cfg := base(f.start(t))
	cfg.Messages = 3
	res := runOK(t, cfg)
	if res.Delivered != 3 || res.Errors != 0 {
		t.Errorf("delivered %d, errors %d (%s); want 3, 0", res.Delivered, res.Errors, res.FirstError)
	}
}

// A multi-line reply whose last line has another code than its first
// (RFC 5321 §4.2.1: every line has the same one) is a protocol error when
// that line comes. The client took the line as text and read on for the
// end of the reply: a server that then waited for the next command kept
// it waiting for its timeout. Here the server closes the connection after
// the reply, where the old reading found only the close (an I/O error).
func TestReplyCodeChanged(t *testing.T) {
	addr := rawServer(t, func(c net.Conn) {
		defer c.Close()
		c.Write([]byte("220 hello\r\n"))
		if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
			c.Write([]byte("250-server.test\r\n251 PIPELINING\r\n"))
		}
	})
	cfg := base(addr)
	cfg.Messages = 1
	res := runOK(t, cfg)
	if res.ProtocolErrors != 1 || res.IOErrors != 0 || !strings.Contains(res.FirstError, "251 PIPELINING") {
		t.Errorf("protocol errors %d, I/O errors %d, first error %q; want 1, 0 and the 251 line", res.ProtocolErrors, res.IOErrors, res.FirstError)
	}
}

// readResponse against the replies RFC 5321 allows and the lines it
// refuses.
func TestReadResponse(t *testing.T) {
	for _, c := range []struct {
		in   string
		code int
		msg  string
		ok   bool
	}{
		{"250 ok\r\n", 250, "ok", true},
		{"250\r\n", 250, "", true},
		{"250 \r\n", 250, "", true},
		{"250-a\r\n250-\r\n250 c\r\n", 250, "a\n\nc", true},
		{"250-a\r\n250\r\n", 250, "a\n", true},
		{"599 x\r\n", 599, "x", true},
		{"25\r\n", 0, "", false},
		{"250x\r\n", 0, "", false},
		{"abc ok\r\n", 0, "", false},
		{"650 ok\r\n", 0, "", false},
		{"250-a\r\nok\r\n", 250, "a", false},
		{"250-a\r\n251 b\r\n", 250, "a", false},
		{strings.Repeat("250-x\r\n", 1000) + "250 end\r\n", 250, strings.TrimSuffix(strings.Repeat("x\n", 1000), "\n"), false},
		{strings.Repeat("250-x\r\n", 999) + "250 end\r\n", 250, strings.Repeat("x\n", 999) + "end", true},
		{strings.Repeat("250-"+strings.Repeat("y", 1000)+"\r\n", 70) + "250 end\r\n", 250, "", false},
	} {
		code, msg, err := readResponse(replyReader(strings.NewReader(c.in)))
		if (err == nil) != c.ok || code != c.code || (c.msg != "" || c.ok) && msg != c.msg {
			t.Errorf("%.40q: %d %.40q %v; want %d %.40q, ok %v", c.in, code, msg, err, c.code, c.msg, c.ok)
		}
	}
}

// The first error's text is cut at 1,000 bytes on a character's start: it
// was cut within a UTF-8 character, which left the result (and its JSON)
// with an invalid sequence.
func TestFirstErrorCutWhole(t *testing.T) {
	f := &fakeServer{reply: func(verb, arg string) string {
		if verb == "MAIL" {
			return "550 x" + strings.Repeat("é", 600)
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Messages = 1
	res := runOK(t, cfg)
	if !strings.HasSuffix(res.FirstError, "é...") || !utf8.ValidString(res.FirstError) || len(res.FirstError) > 1003 {
		t.Errorf("first error of %d bytes, valid UTF-8 %v, ends %q", len(res.FirstError), utf8.ValidString(res.FirstError), res.FirstError[len(res.FirstError)-8:])
	}
}

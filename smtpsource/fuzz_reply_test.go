package smtpsource

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
	"github.com/wirespeed/wirespeed/textproto"
)

// replyErr reports whether err is one that reading a reply may fail
// with on a server's bytes (the session counts it as a protocol or an
// I/O error and closes the connection): a textproto.ProtocolError, a
// line past maxLineBytes (textproto.ErrLineTooLong), or the bytes
// ending, whole (io.EOF) or in mid-line (io.ErrUnexpectedEOF).
func replyErr(err error) bool {
	var pe textproto.ProtocolError
	return errors.As(err, &pe) || errors.Is(err, textproto.ErrLineTooLong) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// FuzzReadResponse reads replies from arbitrary server bytes with
// readResponse on the session's replyReader: no panic, only the errors
// above, a code of 100 to 599 with each reply, a text within the
// bounds, and the reader never stuck (every reply read takes bytes).
func FuzzReadResponse(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	for _, s := range []string{
		"220 hello\r\n",
		"250\r\n250 \r\n",
		"250-server.test\r\n250-PIPELINING\r\n250-SIZE 10240000\r\n250-ENHANCEDSTATUSCODES\r\n250 CHUNKING\r\n",
		"250-a\r\n250\r\n",
		"550 5.7.1 no\r\n421 4.3.2 bye\r\n",
		"250-a\r\n251 b\r\n",
		"250-a\r\nok\r\n",
		"250x\r\n25\r\n650 ok\r\n",
		"250 2.0.0 Ok",
		"250-a\n250 b\n",
		"354 go ahead\r\n" + strings.Repeat("x", 2100) + "\r\n250 ok\r\n",
		"250-a\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		tr := replyReader(bytes.NewReader(in))
		for n := 0; ; n++ {
			code, msg, err := readResponse(tr)
			if err != nil {
				if !replyErr(err) {
					t.Fatalf("reply %d: %T %v", n, err, err)
				}
				return
			}
			if code < 100 || code > 599 || len(msg) > maxReplyBytes || strings.Count(msg, "\n") >= maxReplyLines {
				t.Fatalf("reply %d: code %d, %d bytes, %d lines", n, code, len(msg), strings.Count(msg, "\n")+1)
			}
			if n > len(in) {
				t.Fatalf("%d replies from %d bytes", n, len(in))
			}
		}
	})
}

// FuzzReplyRoundTrip writes a reply of code and lines as a server
// (RFC 5321 §4.2) writes it, "CODE-text" CRLF for each line but the last
// and "CODE text" CRLF for that, after a garbage-free reply before it,
// and reads both back: the codes and the lines they were built from.
// Lines are what a reply line may hold (no CR or LF, within
// maxLineBytes); a reply past maxReplyLines or maxReplyBytes must fail
// as a ProtocolError instead.
func FuzzReplyRoundTrip(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	f.Add(uint16(250), "server.test\nPIPELINING\nSIZE 10240000\nENHANCEDSTATUSCODES\n", false)
	f.Add(uint16(550), "5.7.1 relaying denied", true)
	f.Add(uint16(421), "", false)
	f.Add(uint16(220), "\n\n", true)
	f.Fuzz(func(t *testing.T, code16 uint16, text string, bare bool) {
		code := 100 + int(code16)%500
		text = strings.Map(func(r rune) rune {
			if r == '\r' {
				return -1
			}
			return r
		}, text)
		lines := strings.Split(text, "\n")
		var b strings.Builder
		b.WriteString("220 first\r\n")
		for i, l := range lines {
			if len(l) > maxLineBytes-4 {
				l = l[:maxLineBytes-4]
				lines[i] = l
			}
			sep := "-"
			if i == len(lines)-1 {
				sep = " "
				if bare && l == "" {
					sep = "" // a bare "250": a whole last line
				}
			}
			b.WriteString(strconv.Itoa(code) + sep + l + "\r\n")
		}
		tr := replyReader(strings.NewReader(b.String()))
		if c, msg, err := readResponse(tr); err != nil || c != 220 || msg != "first" {
			t.Fatalf("the first reply: %d %q %v", c, msg, err)
		}
		c, msg, err := readResponse(tr)
		want := strings.Join(lines, "\n")
		wire := 0 // the reply's bytes, CRLFs and all: what bounds it, loosely
		for _, l := range lines {
			wire += len(l) + 6
		}
		if len(lines) > maxReplyLines || wire > maxReplyBytes {
			// Past the bounds by lines it must fail; near the byte
			// bound it may, and only as a ProtocolError.
			var pe textproto.ProtocolError
			if err != nil && !errors.As(err, &pe) || len(lines) > maxReplyLines && err == nil {
				t.Fatalf("%d lines, %d bytes: %v, want a ProtocolError", len(lines), wire, err)
			}
			if err != nil {
				return
			}
		}
		if err != nil || c != code || msg != want {
			t.Fatalf("read %d %.80q %v; want %d %.80q", c, msg, err, code, want)
		}
		if _, _, err := readResponse(tr); !errors.Is(err, io.EOF) {
			t.Fatalf("after the reply: %v, want io.EOF", err)
		}
	})
}

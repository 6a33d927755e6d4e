package smtpsource

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/wirespeed/wirespeed/textproto"
)

// Bounds on one reply past its lines' own (see replyReader): past them
// the message fails as a protocol error.
const (
	maxLineBytes  = 2048 // a reply line's, not counting its line end (see replyReader)
	maxReplyLines = 1000
	maxReplyBytes = 64 << 10
)

// readLine reads one reply line whole, up to its line end. textproto's
// ReadLine, as net/textproto's, returns a line that a read error cut short
// as if it had ended there and the error with the next read: a server
// that stalled, or closed the connection, in mid-line (one that drips its
// replies slower than Timeout allows) had its "250 2.0.0 Ok" taken for a
// whole reply when only "25" or "250 2" had come. So the line end is made
// sure of in tr's buffer first: a read error before it is the line's
// (io.ErrUnexpectedEOF for an EOF after part of it). A line longer than
// maxLineBytes and its CR is left to ReadLine, which fails it.
func readLine(tr *textproto.Reader) (string, error) {
	for {
		n := tr.R.Buffered()
		if b, _ := tr.R.Peek(n); bytes.IndexByte(b, '\n') >= 0 || n > maxLineBytes+1 {
			return tr.ReadLine()
		}
		if _, err := tr.R.Peek(n + 1); err != nil && err != bufio.ErrBufferFull {
			if err == io.EOF && n > 0 {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
	}
}

// readResponse reads one reply as RFC 5321 §4.2 writes it: lines of a
// three-digit code, a '-' after it on every line but the last and a space
// or nothing on the last (so a bare "250" is a whole reply, where
// net/textproto's ReadResponse calls it short). It returns the code and
// the lines' texts joined with '\n'.
//
// A line that is not a reply line, or a later line with another code than
// the first's, is a textproto.ProtocolError at once: the standard
// library's ReadResponse takes such a line as text and reads on, so a
// server that ended a reply with another code kept the client waiting for
// its timeout. The connection is out of step then and is closed.
func readResponse(tr *textproto.Reader) (int, string, error) {
	var msg strings.Builder
	code := 0
	for n := 0; ; n++ {
		line, err := readLine(tr)
		if err != nil {
			return code, msg.String(), err
		}
		c, last, ok := replyLine(line)
		switch {
		case !ok:
			return code, msg.String(), textproto.ProtocolError(fmt.Sprintf("not a reply line: %.80q", line))
		case n > 0 && c != code:
			return code, msg.String(), textproto.ProtocolError(fmt.Sprintf("a %d line in a %d reply: %.80q", c, code, line))
		case n == maxReplyLines || msg.Len()+len(line) > maxReplyBytes:
			return code, msg.String(), textproto.ProtocolError("a reply past 1000 lines or 64 KiB")
		}
		code = c
		if n > 0 {
			msg.WriteByte('\n')
		}
		if len(line) > 4 {
			msg.WriteString(line[4:])
		}
		if last {
			return code, msg.String(), nil
		}
	}
}

// replyLine parses a reply line's code (100 to 599) and separator.
func replyLine(line string) (code int, last, ok bool) {
	if len(line) < 3 || line[0] < '1' || line[0] > '5' {
		return 0, false, false
	}
	for _, d := range []byte(line[:3]) {
		if d < '0' || d > '9' {
			return 0, false, false
		}
		code = code*10 + int(d-'0')
	}
	switch {
	case len(line) == 3 || line[3] == ' ':
		return code, true, true
	case line[3] == '-':
		return code, false, true
	}
	return 0, false, false
}

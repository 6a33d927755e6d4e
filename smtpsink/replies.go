package smtpsink

import (
	"strconv"
)

// forced sends a forced reply; it returns false if the session ends.
func (ss *session) forced(f Reply) bool {
	if f.Code != 0 {
		ss.reply(f.Code, f.text())
	}
	return !f.Close
}

// reply buffers one reply line; codes 400 to 599 are counted.
func (ss *session) reply(code int, text string) { replyLine(ss, code, text) }

// replyText is reply with a text built in ss.text, which it does not
// keep: the replies to messages and chunks, which carry numbers, without
// allocating.
func (ss *session) replyText(code int, text []byte) { replyLine(ss, code, text) }

func replyLine[T ~string | ~[]byte](ss *session, code int, text T) {
	ss.count(code)
	b := strconv.AppendInt(ss.out[:0], int64(code), 10)
	b = append(b, ' ')
	b = append(b, text...)
	b = append(b, '\r', '\n')
	ss.out = b
	ss.bw.Write(b) // a failed write shows at the next Flush
}

func (ss *session) count(code int) {
	if code >= 400 && code <= 599 {
		ss.s.stats.codes[code-400].Add(1)
	}
}

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

// count counts a reply: a 4xx or 5xx in the server's counters at once;
// a 2xx or 3xx the session sends often in its own okReplies, which
// foldReplies adds to the server's at each message's end and the
// session's (an atomic add per reply would cost the sessions a cache
// line they share); another 2xx or 3xx at once.
func (ss *session) count(code int) {
	switch {
	case code >= 400 && code <= 599:
		ss.s.stats.codes[code-400].Add(1)
	case code >= 200 && code <= 399:
		if i := okSlot(code); i >= 0 {
			ss.okReplies[i]++
		} else {
			ss.s.stats.okCodes[code-200].Add(1)
		}
	}
}

// okSlotCodes are the codes of okReplies' slots.
var okSlotCodes = [...]int{250, 354, 220, 221, 235, 334, 251, 252}

// okSlot returns code's slot in okReplies, or -1.
func okSlot(code int) int {
	switch code {
	case 250:
		return 0
	case 354:
		return 1
	case 220:
		return 2
	case 221:
		return 3
	case 235:
		return 4
	case 334:
		return 5
	case 251:
		return 6
	case 252:
		return 7
	}
	return -1
}

// foldReplies adds the session's okReplies to the server's counters.
func (ss *session) foldReplies() {
	for i, n := range ss.okReplies {
		if n > 0 {
			ss.s.stats.okCodes[okSlotCodes[i]-200].Add(uint64(n))
			ss.okReplies[i] = 0
		}
	}
}

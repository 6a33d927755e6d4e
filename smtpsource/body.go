package smtpsource

import (
	"bytes"
	"crypto/md5"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wirespeed/wirespeed/internal/corpus"
)

// A template makes the messages of a run. Message k is its header (only
// Config.Headers for Config.Message and MessageSet) then its body: the same
// for every message, or with MessageSet the set's message k modulo its
// size, or with LengthMax a cut of a body of LengthMax bytes to message
// k's length. The header differs only in the Message-Id, which carries k,
// and the addresses (with the address lists), so each message is a
// function of the run's configuration, its start time and k.
type template struct {
	cfg   *Config
	date  string
	runID string
	body  []byte // the body as the server keeps it: CRLF lines (one body only)
	// set holds MessageSet's bodies.
	set [][]byte
	// long is the body of LengthMax bytes, then CRLF, that ranged
	// lengths cut (nil without a range). Every session's messages are
	// pieces of it, not copies.
	long []byte
	// The bodies are sent after DATA as they are, a dot written before
	// each line that starts with one (see msgBody.writeData), not from a
	// dot-stuffed copy (which doubled the memory a run holds): dots are
	// the offsets in body or long of those lines, setDots in each of
	// set's. They are found once (encoded set then): at the start of a
	// run without Config.Chunking, otherwise for the first message sent
	// with DATA.
	dots       []int
	setDots    [][]int
	encoded    bool
	encodeOnce sync.Once
	// ends holds the ends of a cut body, as the server keeps it and as
	// it is sent: ends[1:3] or [1:6], or with its last byte, a CR, made
	// an 'x', ends[0:3] or [0:6].
	ends []byte
	// extra is Config.Headers' lines, CRLF-ended; dotHeader is set if
	// one starts with a dot, to be stuffed after DATA.
	extra     []byte
	dotHeader bool
	// hdrBase is the length of a generated header less its sender's,
	// recipient's and message number's (see headerLen).
	hdrBase int
}

// A msgBody is a message's body as the server keeps it, a piece of the
// template's then a tail (both shared, not to be changed; only a ranged
// length's cut has a tail), and for DATA, dots, the offsets in body of
// the lines that start with a dot, and end, the tail then the end line
// (nil where the message goes with BDAT).
type msgBody struct {
	body, bodyTail []byte
	dots           []int
	end            []byte
}

// dotByte is the dot written before a line that starts with one.
var dotByte = []byte{'.'}

// writeData writes the body as it is sent after DATA, dot-stuffed, then
// the end line, in pieces of the body (no copy of it).
func (m *msgBody) writeData(w io.Writer) {
	p := 0
	for _, d := range m.dots {
		w.Write(m.body[p:d])
		w.Write(dotByte)
		p = d
	}
	w.Write(m.body[p:])
	w.Write(m.end)
}

// size is the length of the body as the server keeps it.
func (m *msgBody) size() int { return len(m.body) + len(m.bodyTail) }

func newTemplate(cfg *Config, start time.Time) *template {
	t := &template{cfg: cfg, date: start.Format(time.RFC1123Z), runID: strconv.FormatInt(start.UnixNano()%(1<<32), 36)}
	for _, h := range cfg.Headers {
		t.extra = append(append(t.extra, h...), "\r\n"...)
		t.dotHeader = t.dotHeader || strings.HasPrefix(h, ".")
	}
	from, to := t.addrs(0)
	t.hdrBase = len(t.header(nil, 0)) - len(from) - len(to) - 1
	switch {
	case cfg.MessageSet != nil:
		for _, m := range cfg.MessageSet {
			t.set = append(t.set, crlfLines(m))
		}
	case cfg.Message != nil:
		t.body = crlfLines(cfg.Message)
	case cfg.LengthMax > cfg.Length:
		t.long = makeBody(cfg.Body, cfg.LengthMax)
		t.ends = []byte("x\r\n.\r\n")
	default:
		t.body = makeBody(cfg.Body, cfg.Length)
	}
	if !cfg.Chunking {
		// Every message goes with DATA: the encodings are made now, not
		// in the first message's time (every session's first waiting).
		t.encodeOnce.Do(t.encode)
	}
	return t
}

// encode finds the lines of the bodies that start with a dot (see
// encodeOnce).
func (t *template) encode() {
	switch {
	case t.set != nil:
		for _, b := range t.set {
			t.setDots = append(t.setDots, dotLines(b))
		}
	case t.long != nil:
		t.dots = dotLines(t.long)
	default:
		t.dots = dotLines(t.body)
	}
	t.encoded = true
}

// bodyOf returns message k's body, and if data is set, its encoding
// for DATA (otherwise nil).
func (t *template) bodyOf(k int64, data bool) msgBody {
	if data {
		t.encodeOnce.Do(t.encode)
	}
	switch {
	case t.set != nil:
		i := k % int64(len(t.set))
		if !data {
			return msgBody{body: t.set[i]}
		}
		return msgBody{body: t.set[i], dots: t.setDots[i], end: endLine}
	case t.long != nil:
		return t.cutOf(t.length(k), data)
	case !data:
		return msgBody{body: t.body}
	}
	return msgBody{body: t.body, dots: t.dots, end: endLine}
}

// endLine ends the data of a body that has no tail.
var endLine = []byte(".\r\n")

// cutOf returns the body of n bytes with ranged lengths: the first n
// bytes of the long body, then CRLF (a CR cut from its LF made an 'x'),
// and if data is set, the offsets of the lines among the n bytes that
// start with a dot, and the same ending then the end line.
func (t *template) cutOf(n int, data bool) msgBody {
	x := 1
	if n > 0 && t.long[n-1] == '\r' {
		n, x = n-1, 0
	}
	m := msgBody{body: t.long[:n], bodyTail: t.ends[x:3]}
	if data {
		d, _ := slices.BinarySearch(t.dots, n)
		m.dots, m.end = t.dots[:d], t.ends[x:]
	}
	return m
}

// length returns the body length of message k with ranged lengths:
// spread evenly over Length to LengthMax by a hash of k, the same for the
// same k in every run.
func (t *template) length(k int64) int {
	x := uint64(k) + 0x9e3779b97f4a7c15 // splitmix64
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return t.cfg.Length + int(x%uint64(t.cfg.LengthMax-t.cfg.Length+1))
}

// size returns the size of message k as the server keeps it (header and
// body), for SIZE=, without making the message.
func (t *template) size(k int64) int64 {
	hdr := t.headerLen(k)
	switch {
	case t.set != nil:
		return int64(hdr + len(t.set[k%int64(len(t.set))]))
	case t.long != nil:
		return int64(hdr + t.length(k) + 2)
	}
	return int64(hdr + len(t.body))
}

// headerLen returns len(t.header(nil, k)) without making the header: a
// generated header differs from message to message only in its sender,
// recipient and number.
func (t *template) headerLen(k int64) int {
	switch {
	case t.cfg.OldMode:
		return 0
	case t.cfg.Message != nil || t.set != nil:
		return len(t.extra)
	}
	from, to := t.addrs(k)
	n := 1
	for v := k; v >= 10; v /= 10 {
		n++
	}
	return t.hdrBase + len(from) + len(to) + n
}

// addrs returns the sender and the recipient in message k's header.
func (t *template) addrs(k int64) (from, to string) {
	from, to = t.cfg.From, t.cfg.To
	if l := t.cfg.FromList; l != nil {
		from = l[k%int64(len(l))]
	}
	if l := t.cfg.ToList; l != nil {
		to = l[(k*int64(t.cfg.Recipients))%int64(len(l))]
	}
	return from, to
}

// dotLines returns the offsets in the CRLF lines b of the lines that
// start with a dot.
func dotLines(b []byte) (dots []int) {
	for p := 0; p < len(b); p += bytes.IndexByte(b[p:], '\n') + 1 {
		if b[p] == '.' {
			dots = append(dots, p)
		}
	}
	return dots
}

// stuffLines appends the CRLF lines b to dst, a dot added before each
// that starts with one.
func stuffLines(dst, b []byte) []byte {
	for len(b) > 0 {
		if b[0] == '.' {
			dst = append(dst, '.')
		}
		i := bytes.IndexByte(b, '\n')
		dst = append(dst, b[:i+1]...)
		b = b[i+1:]
	}
	return dst
}

// header appends message k's header and the empty line after it to b
// (only Config.Headers for Config.Message and MessageSet, nothing in
// OldMode).
func (t *template) header(b []byte, k int64) []byte {
	if t.cfg.OldMode {
		return b
	}
	if t.cfg.Message != nil || t.set != nil {
		return append(b, t.extra...)
	}
	from, to := t.addrs(k)
	b = append(b, "From: <"...)
	b = append(b, from...)
	b = append(b, ">\r\nTo: <"...)
	b = append(b, to...)
	b = append(b, ">\r\nDate: "...)
	b = append(b, t.date...)
	b = append(b, "\r\nMessage-Id: <"...)
	b = strconv.AppendInt(b, k, 10)
	b = append(b, '.')
	b = append(b, t.runID...)
	b = append(b, '@')
	b = append(b, t.cfg.Helo...)
	b = append(b, ">\r\n"...)
	if t.cfg.Subject != "" {
		b = append(b, "Subject: "...)
		b = append(b, t.cfg.Subject...)
		b = append(b, "\r\n"...)
	}
	b = append(b, t.extra...)
	return append(b, "\r\n"...)
}

// digest returns the MD5 and the size of message k as the server receives
// it: header and body, unstuffed, CRLF kept.
func (t *template) digest(k int64) Digest {
	h := md5.New()
	hdr := t.header(nil, k)
	body := t.bodyOf(k, false)
	h.Write(hdr)
	h.Write(body.body)
	h.Write(body.bodyTail)
	var d Digest
	h.Sum(d.MD5[:0])
	d.Size = int64(len(hdr) + body.size())
	return d
}

// makeBody returns length bytes of the kind of body asked for, then CRLF
// (smtp-source -l does not count the last line's CRLF either).
func makeBody(kind string, length int) []byte {
	var b []byte
	switch kind {
	case "mail":
		b = corpus.Mail(length + 80)[:length]
	case "base64":
		b = corpus.Base64(length + 80)[:length]
	case "longline":
		return corpus.LongLine(length + 2)
	default:
		return patternBody(length)
	}
	if length > 0 && b[length-1] == '\r' {
		b[length-1] = 'x' // the cut fell inside a CRLF: no bare CR
	}
	return append(b, "\r\n"...)
}

// patternBody returns smtp-source's body: with no length, four lines "La
// de da de da N."; otherwise lines of a digit (the line number modulo 10)
// and 77 X's while more than 80 bytes are left, then the X's left.
func patternBody(length int) []byte {
	var b []byte
	if length == 0 {
		for i := 1; i <= 4; i++ {
			b = append(b, "La de da de da "...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, ".\r\n"...)
		}
		return b
	}
	// Made in place: no line's X's allocated apart (bytes.Repeat for
	// each line allocated as much again as the body).
	b = make([]byte, 0, length+2)
	for line := 1; length > 80; line++ {
		b = append(b, byte('0'+line%10))
		b = append(b, xs[:77]...)
		b = append(b, "\r\n"...)
		length -= 80
	}
	b = append(b, xs[:length]...) // length <= 80 left
	return append(b, "\r\n"...)
}

// xs is a pattern line's X's, and more.
const xs = "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"

// crlfLines returns msg with every line ended by CRLF: an LF or CRLF ends
// a line, a last line without one gets it, and a bare CR becomes a space.
// A msg that is so already (every CR followed by an LF, every LF after a
// CR, and a CRLF at its end) is returned as it is, not copied: the run
// holds Config.Message and MessageSet once then (it never writes into
// them).
func crlfLines(msg []byte) []byte {
	if crlfOnly(msg) {
		return msg
	}
	out := make([]byte, 0, len(msg)+len(msg)/32+2)
	for len(msg) > 0 {
		line, rest, found := bytes.Cut(msg, []byte{'\n'})
		if found {
			line = bytes.TrimSuffix(line, []byte{'\r'})
		}
		start := len(out)
		out = append(out, line...)
		for i, c := range out[start:] {
			if c == '\r' {
				out[start+i] = ' ' // a bare CR has no place in SMTP data
			}
		}
		out = append(out, "\r\n"...)
		msg = rest
	}
	return out
}

// crlfOnly reports whether msg ends with CRLF and each CR in it is
// followed by an LF and each LF follows a CR: pairs do not overlap, so
// as many CRLF pairs as CRs and as LFs means no CR or LF is alone.
func crlfOnly(msg []byte) bool {
	if !bytes.HasSuffix(msg, []byte("\r\n")) {
		return false
	}
	n := bytes.Count(msg, []byte{'\n'})
	return bytes.Count(msg, []byte{'\r'}) == n && bytes.Count(msg, []byte("\r\n")) == n
}

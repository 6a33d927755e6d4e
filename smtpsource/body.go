package smtpsource

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"strconv"
	"time"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/corpus"
	"github.com/wirespeed/wirespeed/textproto"
)

// A template makes the messages of a run. Message k is its header (none
// for Config.Message) then the body, the same for every message; the
// header differs only in the Message-Id, which carries k, so each message
// is a function of the run's configuration, its start time and k.
type template struct {
	cfg     *Config
	date    string
	runID   string
	body    []byte // the body as the server keeps it: CRLF lines
	encoded []byte // the body dot-stuffed, then the end line ".\r\n"
}

func newTemplate(cfg *Config, start time.Time) *template {
	t := &template{cfg: cfg, date: start.Format(time.RFC1123Z), runID: strconv.FormatInt(start.UnixNano()%(1<<32), 36)}
	if cfg.Message != nil {
		t.body = crlfLines(cfg.Message)
	} else {
		t.body = makeBody(cfg.Body, cfg.Length)
	}
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	dw := textproto.NewWriter(bw).DotWriterMode(dot.Raw)
	dw.Write(t.body) // CRLF lines: no error
	dw.Close()
	t.encoded = buf.Bytes()
	return t
}

// header appends message k's header and the empty line after it to b
// (nothing for Config.Message and OldMode).
func (t *template) header(b []byte, k int64) []byte {
	if t.cfg.Message != nil || t.cfg.OldMode {
		return b
	}
	b = append(b, "From: <"...)
	b = append(b, t.cfg.From...)
	b = append(b, ">\r\nTo: <"...)
	b = append(b, t.cfg.To...)
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
	return append(b, "\r\n"...)
}

// digest returns the MD5 and the size of message k as the server receives
// it: header and body, unstuffed, CRLF kept.
func (t *template) digest(k int64) Digest {
	h := md5.New()
	hdr := t.header(nil, k)
	h.Write(hdr)
	h.Write(t.body)
	var d Digest
	h.Sum(d.MD5[:0])
	d.Size = int64(len(hdr) + len(t.body))
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
	b = make([]byte, 0, length+2)
	for line := 1; length > 80; line++ {
		b = append(b, byte('0'+line%10))
		b = append(b, bytes.Repeat([]byte{'X'}, 77)...)
		b = append(b, "\r\n"...)
		length -= 80
	}
	b = append(b, bytes.Repeat([]byte{'X'}, length)...)
	return append(b, "\r\n"...)
}

// crlfLines returns msg with every line ended by CRLF: an LF or CRLF ends
// a line, a last line without one gets it, and a bare CR becomes a space.
func crlfLines(msg []byte) []byte {
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

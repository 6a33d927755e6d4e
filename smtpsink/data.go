package smtpsink

import (
	"encoding/hex"
	"errors"
	"slices"
	"strconv"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/textproto"
)

// checkData returns the reply to a DATA or BDAT command that cannot start
// a message, or 0 if it can.
func (ss *session) checkData() (int, string) {
	switch {
	case !ss.inTx:
		// Postfix's words (smtp-sink's and smtpd's): RCPT is what is
		// missing before DATA, whatever else is.
		return 503, "5.5.1 Error: need RCPT command"
	case ss.nrcpt == 0 && ss.cfg.LMTP:
		return 503, "5.5.1 Error: no valid recipients" // RFC 2033 §4.2: MUST be 503
	case ss.nrcpt == 0:
		return 554, "5.5.1 Error: no valid recipients"
	}
	return 0, ""
}

func (ss *session) data(arg string) bool {
	code, text := ss.checkData()
	switch {
	case arg != "":
		code, text = 501, "5.5.4 Syntax: DATA"
	case code != 0:
	case ss.bdat != nil:
		code, text = 503, "5.5.1 Error: BDAT in progress"
	case ss.body == "BINARYMIME":
		code, text = 503, "5.5.1 Error: BODY=BINARYMIME needs BDAT"
	}
	if code != 0 {
		// A refused DATA ends a group too (RFC 2920).
		ss.reply(code, text)
		return ss.bw.Flush() == nil
	}
	if r, ok := ss.ruleAny(StageData); ok {
		ok = ss.forced(r)
		return ss.bw.Flush() == nil && ok
	}
	ss.reply(354, "End data with <CR><LF>.<CR><LF>")
	if ss.bw.Flush() != nil {
		return false
	}
	if ss.cfg.AbortData {
		return ss.wait(ss.cfg.AbortDataDelay, func() bool {
			ss.reply(550, "5.0.0 Error: data aborted by the server")
			ss.bw.Flush()
			return false
		})
	}
	if d := ss.cfg.DataReadDelay; d > 0 {
		return ss.wait(d, ss.readData)
	}
	return ss.readData()
}

// readData reads a message's data after the 354 reply, and replies to it.
func (ss *session) readData() bool {
	ss.startHash()
	if ss.loop != nil {
		ss.loop.startData()
		return true
	}
	ss.cio.startData()
	defer ss.cio.endData()
	dr := ss.r.DotReaderWith(textproto.DotOptions{
		Mode:            dot.Raw,
		Bare:            ss.cfg.Bare,
		MaxBytes:        limitOrNone(ss.cfg.MaxSize),
		MaxLineBytes:    int(limitOrNone(int64(ss.cfg.MaxDataLineBytes))),
		MaxDiscardBytes: limitOrNone(ss.cfg.MaxDiscardBytes),
	})
	_, err := dr.WriteTo(ss.sink)
	if errors.Is(err, textproto.ErrNotInStep) {
		return ss.tooMuchDiscarded()
	}
	if err != nil && !isDataError(err) {
		return false // the peer left or the connection failed
	}
	return ss.endMessage(err, dr.Size(), 0)
}

// tooMuchDiscarded ends a session that would have the sink read more
// than MaxDiscardBytes only to throw it away.
func (ss *session) tooMuchDiscarded() bool {
	ss.reply(421, "4.3.0 Error: too much data to discard, closing connection")
	return false
}

// limitOrNone turns a Config limit (0: none) into a DotOptions one
// (negative: none).
func limitOrNone(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

// isDataError reports an error about the message data, after which the
// session is still in step.
func isDataError(err error) bool {
	return errors.Is(err, dot.ErrTooLarge) || errors.Is(err, dot.ErrLineTooLong) ||
		errors.Is(err, dot.ErrBareLF) || errors.Is(err, dot.ErrBareCR)
}

// dataReply is the reply to a message's data that met err: RFC 5321's
// 552 for too much data, 500 for a line too long (§4.5.3.1.6), 550 for a
// bare CR or LF; the first that applies, in that order.
func dataReply(err error) (int, string) {
	switch {
	case errors.Is(err, dot.ErrTooLarge):
		return 552, "5.3.4 Error: message size exceeds fixed limit"
	case errors.Is(err, dot.ErrLineTooLong):
		return 500, "5.5.2 Error: line too long"
	case errors.Is(err, dot.ErrBareLF):
		return 550, "5.5.2 Error: bare <LF> received"
	case errors.Is(err, dot.ErrBareCR):
		return 550, "5.5.2 Error: bare <CR> received"
	}
	return 554, "5.6.0 Error: bad message data"
}

// startHash starts a message's data: its digest, and its capture.
func (ss *session) startHash() {
	if ss.hash != nil {
		ss.hash.Reset()
	}
	if ss.cfg.Capture != nil {
		ss.endCapture(ErrAborted) // a capture left over (a DATA after a failed BDAT)
		ss.startCapture()
	}
}

// endMessage replies to the end of a message's data (err: its data error)
// and ends the transaction. It returns false if the session ends.
func (ss *session) endMessage(err error, size int64, chunks int) bool {
	if err != nil {
		ss.endCapture(err) // the data is not whole
	}
	r := Reply{Code: 250}
	e := ss.s.k.dataEnd
	if chunks == 0 && ss.cfg.OnCommand != nil {
		ss.cfg.OnCommand(ss.id, ".")
	}
	switch {
	case e.forced:
		r = e.reply
		r.Text = r.text()
	case err != nil:
		r.Code, r.Text = dataReply(err)
	case ss.s.rules[StageDot] == nil:
	case ss.cfg.LMTP:
		ss.perRcpt = ss.perRcpt[:0]
		for _, to := range ss.to {
			pr, _ := ss.rule(StageDot, to) // Code 0: accepted
			ss.perRcpt = append(ss.perRcpt, pr)
		}
	default:
		if dr, ok := ss.ruleAny(StageDot); ok {
			r = dr
		}
	}
	// decided is the Message built for Decide, which OnMessage gets too
	// (built): its digest and recipients are not made twice.
	var decided Message
	built := false
	if d := ss.cfg.Decide; d != nil && err == nil && !e.forced {
		m := ss.message(size, chunks, ss.nmsg+1)
		m.Refused = r.Code/100 != 2
		if len(ss.perRcpt) > 0 {
			m.Refused = !slices.ContainsFunc(ss.perRcpt, func(p Reply) bool { return p.Code == 0 || p.Code/100 == 2 })
		}
		decided, built = m, true
		dr := d(m)
		if dr.Code >= 200 && dr.Code <= 299 || dr.Code >= 400 && dr.Code <= 599 || dr.Code == 0 && dr.Close {
			dr.Close = dr.Close || dr.Code == 421 // RFC 5321 §3.8
			if !oneLine(dr.Text) {
				dr.Text = "" // a CR or LF would end the reply early
			}
			r, ss.perRcpt = dr, ss.perRcpt[:0]
		}
	}
	// The data ended whole (or was closed with its error above): the
	// capture ends now, not after a "." delay, which Close may cut short
	// and pass the message for one cut short in its data. A capture that
	// failed refuses what would be accepted: the message is not stored.
	if ss.endCapture(nil) != nil {
		r = captureFailed(r)
		for i, p := range ss.perRcpt {
			if p.Code == 0 { // accepted
				p.Code = 250
			}
			ss.perRcpt[i] = captureFailed(p)
		}
	}
	if e.delay > 0 {
		var later *Message
		if built {
			m := decided // on the heap for the wait; decided stays on the stack
			later = &m
		}
		return ss.wait(e.delay, func() bool { return ss.replyMessage(r, size, chunks, later) })
	}
	if built {
		return ss.replyMessage(r, size, chunks, &decided)
	}
	return ss.replyMessage(r, size, chunks, nil)
}

// captureFailed returns the reply to a message whose capture failed in
// place of r: 451 where r would accept it (a 2xx), else r.
func captureFailed(r Reply) Reply {
	if r.Code/100 != 2 {
		return r
	}
	return Reply{Code: 451, Text: "4.3.0 Error: queue file write error", Close: r.Close}
}

// replyMessage counts a message accepted (code 250, or in LMTP with
// dot rules, a 250 for one recipient at least) and sends the reply to
// its data (LMTP: one a recipient, perRcpt's where set), and ends the
// transaction; it returns false if the session ends. m, if not nil, is
// the Message Decide had, for OnMessage.
func (ss *session) replyMessage(r Reply, size int64, chunks int, m *Message) bool {
	per := ss.perRcpt
	ss.perRcpt = ss.perRcpt[:0]
	n := 1 // replies
	if ss.cfg.LMTP && r.Code != 421 {
		n = ss.nrcpt
	}
	// In LMTP, a 421 is the server closing (RFC 5321 §3.8): the recipients
	// after it get no reply and are not delivered, as from Postfix's
	// smtp-sink.
	for i, p := range per {
		if p.Code == 421 {
			per = per[:i+1]
			break
		}
	}
	if len(per) > 0 {
		n = len(per)
	}
	accepted, nok := r.Code/100 == 2, ss.nrcpt
	if len(per) > 0 {
		nok = 0
		for _, p := range per {
			if p.Code == 0 {
				nok++
			}
		}
		accepted = nok > 0
	}
	if accepted {
		seq := ss.nmsg + 1
		if ss.cfg.OnMessage != nil {
			if m == nil {
				mm := ss.message(size, chunks, seq)
				m = &mm
			}
			m.Seq, m.Refused = seq, false
			if nok < len(m.To) {
				// LMTP's replies refused some: OnMessage gets those
				// they accepted (a new slice: Decide's may be kept).
				to := make([]string, 0, nok)
				for i, p := range per {
					if p.Code == 0 && i < len(ss.to) {
						to = append(to, ss.to[i])
					}
				}
				m.To = to
			}
			ss.cfg.OnMessage(*m)
		}
		// Counted once OnMessage has returned: one that panics ends the
		// session, and its message, which gets no 250, is not accepted.
		ss.nmsg = seq
		ss.s.stats.messages.Add(1)
		ss.s.stats.bytes.Add(uint64(size))
		ss.s.stats.recipients.Add(uint64(nok))
	}
	closing := r.Close
	for i := range n {
		ri := r
		if len(per) > 0 {
			ri = per[i]
			if ri.Code == 0 {
				ri.Code = 250
			}
			closing = closing || ri.Close
		}
		switch {
		case ri.Code/100 == 2 && ri.Text == "":
			ss.replyText(ri.Code, ss.queuedText())
		case ri.Code != 0:
			ss.reply(ri.Code, ri.text())
		}
	}
	if accepted {
		ss.owe()
	}
	ss.foldReplies()
	ss.reset()
	return !closing
}

// message returns the Message of the transaction's data, of size bytes
// in chunks BDAT chunks (0: DATA), numbered seq.
func (ss *session) message(size int64, chunks, seq int) Message {
	if ss.s.h.message != nil {
		ss.s.h.message()
	}
	m := Message{Session: ss.id, Seq: seq, From: ss.from, To: append([]string(nil), ss.to...),
		Size: size, Body: ss.body, SMTPUTF8: ss.utf8, Chunks: chunks, RemoteAddr: ss.remote,
		TLS: ss.tls, ClientCert: ss.clientCert, Authenticated: ss.authed, AuthUser: ss.authUser}
	if ss.hash != nil {
		m.Digest = ss.sum()
	}
	return m
}

// sum returns the digest of the message data hashed so far. (digest.Sum
// is built from its hexadecimal form: package digest makes Sums only from
// its own readers and from text.)
func (ss *session) sum() digest.Sum {
	var b [digest.MaxSize]byte
	var h [2 * digest.MaxSize]byte
	sum, _ := digest.ParseSum(ss.cfg.Digest, string(hex.AppendEncode(h[:0], ss.hash.Sum(b[:0]))))
	return sum
}

// queuedText is the text of the reply that accepts a message: its id is
// SESSION-N, as the -digest log names it.
func (ss *session) queuedText() []byte {
	b := append(ss.text[:0], "2.0.0 Ok: queued as "...)
	b = strconv.AppendUint(b, ss.id, 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(ss.nmsg), 10)
	ss.text = b
	return b
}

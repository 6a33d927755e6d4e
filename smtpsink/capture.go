package smtpsink

import (
	"errors"
	"io"
	"net"
	"time"
)

// ErrAborted is what a Config.Capture writer that has a CloseWithError
// method is closed with when its message's data did not reach its end:
// the transaction or the session ended first.
var ErrAborted = errors.New("smtpsink: message data aborted")

// A Transaction is what Config.Capture learns of a message whose data
// begins.
type Transaction struct {
	Session    uint64    // as in Message
	Seq        int       // the number the message gets in its session if accepted
	RemoteAddr net.Addr  // the client's address
	Proto      string    // "SMTP" (after HELO), "ESMTP" (EHLO) or "LMTP"
	Helo       string    // the argument of the last HELO, EHLO or LHLO
	MailArgs   string    // what followed MAIL's "FROM:", parameters included
	Mail       time.Time // when MAIL was taken (as Postfix's smtp-sink dates a dump)
	RcptArgs   []string  // what followed each accepted RCPT's "TO:", in order
	TLS        bool      // the message comes over TLS
	AuthUser   string    // the authenticated user, if any
}

// capture is a message's Config.Capture writer. A Write error does not
// fail the session: it is kept, the writer gets no more, and the error
// refuses the message at its end (see endCapture).
type capture struct {
	w   io.WriteCloser
	err error // the first Write error
}

func (c *capture) Write(p []byte) (int, error) {
	if c.err == nil {
		_, c.err = c.w.Write(p)
	}
	return len(p), nil
}

// startCapture starts capturing the data of the message that begins.
func (ss *session) startCapture() {
	proto := "SMTP"
	switch {
	case ss.cfg.LMTP:
		proto = "LMTP"
	case ss.esmtp:
		proto = "ESMTP"
	}
	w := ss.cfg.Capture(Transaction{Session: ss.id, Seq: ss.nmsg + 1, RemoteAddr: ss.remote, Proto: proto,
		Helo: ss.helo, MailArgs: ss.mailArgs, Mail: ss.mailAt, RcptArgs: append([]string(nil), ss.rcptArgs...),
		TLS: ss.tls, AuthUser: ss.authUser})
	if w == nil {
		return
	}
	ss.capture = &capture{w: w}
	if ss.hash != nil {
		ss.sink = io.MultiWriter(ss.hash, ss.capture)
	} else {
		ss.sink = ss.capture
	}
}

// endCapture closes the capture of the message's data, if any: with
// CloseWithError(err), if err is not nil and the writer has that method.
// It returns the first error of the writer's Write calls or of its
// Close (not of CloseWithError: the message is not taken then anyway).
func (ss *session) endCapture(err error) error {
	if ss.capture == nil {
		return nil
	}
	werr := ss.capture.err
	if c, ok := ss.capture.w.(interface{ CloseWithError(error) error }); ok && err != nil {
		c.CloseWithError(err)
	} else if cerr := ss.capture.w.Close(); werr == nil {
		werr = cerr
	}
	ss.capture = nil
	ss.sink = io.Discard
	if ss.hash != nil {
		ss.sink = ss.hash
	}
	return werr
}

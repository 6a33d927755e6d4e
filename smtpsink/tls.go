package smtpsink

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"time"

	"github.com/wirespeed/wirespeed/internal/selfsigned"
	"github.com/wirespeed/wirespeed/netio"
)

// SelfSigned makes a self-signed certificate for hostname and the other
// hosts (names or IP addresses), valid from an hour ago for a year, with
// a new ECDSA P-256 key: for Config.TLS where no certificate is at hand.
// Clients must be told not to verify it, or be given it.
func SelfSigned(hostname string, hosts ...string) (tls.Certificate, error) {
	return selfsigned.New(x509.ExtKeyUsageServerAuth, 365*24*time.Hour, hostname, append([]string{hostname}, hosts...)...)
}

// startTLS serves STARTTLS (RFC 3207): 220, then the handshake. What the
// client sent after the STARTTLS line before the handshake, in the clear,
// is thrown away unread (the command injection of CVE-2011-0411): only
// what comes over TLS counts. It returns false if the session ends.
func (ss *session) startTLS(arg string) (ok bool) {
	// Postfix smtpd's replies, in its order: a session over TLS (after
	// STARTTLS, or implicit TLS) gets 554, as from smtpd and smtpd in
	// wrapper mode.
	switch {
	case arg != "":
		ss.reply(501, "5.5.4 Syntax: STARTTLS")
		return true
	case ss.tls:
		ss.reply(554, "5.5.1 Error: TLS already active")
		return true
	case ss.cfg.TLS == nil:
		ss.reply(502, "5.5.1 Error: command not implemented")
		return true
	}
	ss.reply(220, "2.0.0 Ready to start TLS")
	if ss.bw.Flush() != nil {
		return false
	}
	ss.lines = lineScanner{max: ss.lines.max}
	if ss.loop != nil {
		return ss.loop.startTLS()
	}
	ss.r.R.Discard(ss.r.R.Buffered())
	return ss.handshake()
}

// handshake runs the server's side of a TLS handshake on the session's
// connection, within Timeout, and then the session speaks over TLS,
// knowing nothing of what came before it (RFC 3207 §4.2).
func (ss *session) handshake() bool {
	ss.handshaking = true
	tc := tls.Server(ss.plain, ss.cfg.TLS)
	if t := ss.cio.timeout; t > 0 {
		tc.SetDeadline(time.Now().Add(t))
	}
	if err := tc.Handshake(); err != nil {
		ss.s.logHandshake(ss.id, ss.remote, err)
		return false
	}
	tc.SetDeadline(time.Time{})
	ss.handshaking = false
	ss.s.stats.tls.Add(1)
	var c net.Conn = tc
	if ss.cfg.Trace != nil {
		st := tc.ConnectionState()
		t := &traceConn{Conn: tc, s: ss.s, id: ss.id}
		t.trace('=', []byte(tls.VersionName(st.Version)+" "+tls.CipherSuiteName(st.CipherSuite)))
		c = t
	}
	ss.cio.c, ss.cio.setAt = c, time.Time{} // the handshake moved the deadlines
	ss.tls, ss.tlsConn = true, tc
	ss.clientCert = verifiedClient(tc.ConnectionState())
	ss.greeted, ss.esmtp, ss.authed, ss.authUser = false, false, false, ""
	// STARTTLS began the session anew: HELO or EHLO must come before
	// MAIL. Implicit TLS begins it: MAIL may come first, as in the clear.
	ss.restarted = !ss.cfg.TLSImplicit
	ss.reset()
	return true
}

// logHandshake tells ErrorLog of session id's failed TLS handshake
// with the client at remote, unless the server is closing (Close ended
// it). A panic in a tls.Config callback is logged as one, not here.
func (s *Server) logHandshake(id uint64, remote net.Addr, err error) {
	select {
	case <-s.kill:
		return
	default:
	}
	if errors.Is(err, netio.ErrHandshake) {
		// netio's wrapping: its cause is what crypto/tls said, as the
		// goroutine engine logs it.
		if u, ok := err.(interface{ Unwrap() []error }); ok {
			if errs := u.Unwrap(); len(errs) == 2 && errs[0] == netio.ErrHandshake {
				err = errs[1]
			}
		}
	}
	s.logf("smtpsink: session %d: TLS handshake with %v failed: %v", id, remote, err)
}

// verifiedClient returns the subject of the client's certificate, if
// it gave one that was verified.
func verifiedClient(st tls.ConnectionState) string {
	if len(st.VerifiedChains) == 0 || len(st.VerifiedChains[0]) == 0 {
		return ""
	}
	return st.VerifiedChains[0][0].Subject.String()
}

// closeTLS ends TLS with a close_notify alert before the connection
// closes, so that the client can tell the end from a truncation.
func (ss *session) closeTLS() {
	if ss.tlsConn != nil {
		ss.tlsConn.SetWriteDeadline(time.Now().Add(closeGrace))
		ss.tlsConn.CloseWrite()
	}
}

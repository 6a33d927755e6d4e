package smtpsink

import (
	"crypto/tls"
	"errors"

	"github.com/wirespeed/wirespeed/netio"
)

// TLS on the loops engine is netio's (LoopConn.StartTLS): the handshake
// runs off the loop, then the session gets plaintext and its replies are
// sealed, those of one call in one record; what it owed is sent before
// the alert of a record that fails. Here is the SMTP part.

// startHandshake starts the server's side of the TLS handshake, after
// STARTTLS's 220 or at once with implicit TLS; the session waits in
// modeHandshake, within Timeout (the command deadline, which bounds the
// handshake), until loopHandshake. What the client sent in the clear after
// STARTTLS is dropped (RFC 3207 §4.2), and so is, under implicit TLS,
// anything held while waiting for a slot (nothing: a waiting session is
// not read).
func (ls *loopSession) startHandshake(implicit bool) {
	ls.held = nil
	ls.tls, ls.implicit = true, implicit
	ls.mode = modeHandshake
	ls.dl.command()
	ls.arm() // the command deadline, also after a Delay's pause
	if err := ls.c.StartTLS(ls.ss.cfg.TLS); err != nil {
		ls.close()
	}
}

// loopHandshake goes on with a session once its handshake is over: over
// TLS, knowing nothing of what came before it (RFC 3207 §4.2), with
// implicit TLS from its greeting. A handshake that succeeded is counted
// even if its connection is gone (netio tells it, then OnClose).
func (s *Server) loopHandshake(c *netio.LoopConn, err error) {
	ls := c.Value().(*loopSession)
	if err == nil {
		s.stats.tls.Add(1)
	}
	if ls.mode != modeHandshake {
		return
	}
	if err != nil {
		if !errors.Is(err, netio.ErrPanic) { // loopClose logs a panic
			s.logHandshake(ls.ss.id, ls.ss.remote, err)
		}
		ls.close()
		return
	}
	ss := ls.ss
	st, _ := c.ConnectionState()
	if s.cfg.Trace != nil {
		ls.trace('=', []byte(tls.VersionName(st.Version)+" "+tls.CipherSuiteName(st.CipherSuite)))
	}
	ss.tls = true
	ss.clientCert = verifiedClient(st)
	ss.greeted, ss.esmtp, ss.authed, ss.authUser = false, false, false, ""
	ss.restarted = !ls.implicit // as handshake: STARTTLS begins anew, implicit TLS begins
	ss.reset()
	ls.mode = modeCommand
	ls.dl.command()
	if ls.implicit {
		ls.run(func() bool { return ss.wait(s.k.connect.delay, ss.greet) })
	}
	ls.arm()
}

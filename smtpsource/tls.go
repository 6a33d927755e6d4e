package smtpsource

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/emersion/go-sasl"

	"github.com/wirespeed/wirespeed/internal/tlsbatch"
)

// errEnded is what a session's setup returns when it has ended the run.
var errEnded = errors.New("smtpsource: run ended")

// startTLS sends STARTTLS (RFC 3207), makes the TLS handshake and sends
// EHLO again, the server's extensions forgotten (§4.2).
func (s *session) startTLS(ctx context.Context) error {
	r := s.r
	c := s.c
	if !c.startTLS {
		s.quit(ctx)
		r.end(fmt.Errorf("%w: %s does not offer it", ErrStartTLS, r.addr))
		return errEnded
	}
	c.bw.WriteString("STARTTLS\r\n")
	t := r.now()
	if err := s.flush(ctx, "starttls"); err != nil {
		return err
	}
	code, msg, err := s.reply(ctx, "starttls")
	if err != nil {
		return err
	}
	if code != 220 {
		if code/100 == 5 {
			s.quit(ctx)
			r.end(fmt.Errorf("%w: %s refuses it: %d %s", ErrStartTLS, r.addr, code, firstLine(msg)))
			return errEnded
		}
		s.quit(ctx) // counted as a rejection; the next message tries again
		return errors.New("STARTTLS refused")
	}
	if n := c.tr.R.Buffered(); n > 0 {
		// Whatever came with the 220 was sent before TLS and must not be
		// taken for what the server says over it (the reply injection
		// kin of CVE-2011-0411).
		err := fmt.Errorf("starttls: %d bytes after the 220 reply, before the TLS handshake", n)
		s.fail(ctx, &r.n.protocol, err)
		return err
	}
	if err := s.handshake(ctx); err != nil {
		return err
	}
	s.since(phaseTLS, t)
	return s.hello(ctx) // which forgets what the server offered in the clear
}

// handshake makes the client's TLS handshake on the connection and
// carries on over TLS. A handshake that fails for want of a certificate
// that verifies or of anything the server accepts ends the run; one that
// fails on the network is an I/O error.
func (s *session) handshake(ctx context.Context) error {
	r := s.r
	c := s.c
	// A 1 MiB message goes out in about 22 writes, not 64 (tlsbatch).
	bc := &tlsbatch.Conn{Conn: c.raw}
	tc := tls.Client(bc, r.tls)
	if err := tc.HandshakeContext(ctx); err != nil {
		if tlsRefused(err) {
			r.end(fmt.Errorf("%w with %s: %w", ErrTLS, r.addr, err))
			return errEnded
		}
		s.fail(ctx, &r.n.io, fmt.Errorf("tls: %w", err))
		return err
	}
	s.tls.add(tc.ConnectionState())
	r.n.handshakes.Add(1)
	c.nc = tc
	rd, w := r.traced(c.id, tc, bc.Writer(tc))
	c.bw.Reset(w)
	c.tr = replyReader(rd)
	return nil
}

// tlsRefused reports whether a handshake error is one that the next
// connection would meet too: a certificate that does not verify, an
// alert from the server, or a server that does not speak TLS.
func tlsRefused(err error) bool {
	var (
		cv *tls.CertificateVerificationError
		al tls.AlertError
		rh tls.RecordHeaderError
		ua x509.UnknownAuthorityError
		hn x509.HostnameError
		ci x509.CertificateInvalidError
	)
	return errors.As(err, &cv) || errors.As(err, &al) || errors.As(err, &rh) ||
		errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci)
}

// authenticate sends AUTH (RFC 4954) with Config.AuthMech and answers the
// server's challenges. A mechanism the server does not offer, a permanent
// refusal (535 for credentials it does not take) or a challenge the
// mechanism cannot answer ends the run; a temporary refusal is counted
// and the connection closed.
func (s *session) authenticate(ctx context.Context) error {
	r := s.r
	c := s.c
	mech := r.cfg.AuthMech
	if !c.auth[mech] {
		offered := "no AUTH"
		switch {
		case len(c.auth) > 0:
			offered = "AUTH " + strings.Join(slices.Sorted(maps.Keys(c.auth)), " ")
		case c.startTLS:
			offered = "no AUTH before STARTTLS"
		}
		s.quit(ctx)
		r.end(fmt.Errorf("%w: %s does not offer AUTH %s (it offers %s)", ErrAuth, r.addr, mech, offered))
		return errEnded
	}
	cl := saslClient(mech, r.cfg.AuthUser, r.cfg.AuthPass)
	_, ir, err := cl.Start()
	if err != nil {
		s.quit(ctx)
		r.end(fmt.Errorf("%w: AUTH %s: %w", ErrAuth, mech, err))
		return errEnded
	}
	c.bw.WriteString("AUTH " + mech)
	if ir != nil {
		c.bw.WriteString(" " + saslText(ir))
	}
	c.bw.WriteString("\r\n")
	t := r.now()
	for {
		if err := s.flush(ctx, "auth"); err != nil {
			return err
		}
		code, msg, err := s.readReply(ctx, "auth")
		if err != nil {
			return err
		}
		switch {
		case code == 235:
			s.since(phaseAuth, t)
			return nil
		case code == 334:
			challenge, err := base64.StdEncoding.DecodeString(strings.TrimSpace(msg))
			var resp []byte
			if err == nil {
				resp, err = cl.Next(challenge)
			}
			if err != nil {
				// Cancel the exchange (RFC 4954 §4). The server's reply
				// to that (501) is its refusal, counted as a 535 is, so
				// that the message fails the same whatever the mechanism
				// (OAUTHBEARER's error challenge is a refusal too).
				c.bw.WriteString("*\r\n")
				if s.flush(ctx, "auth") == nil {
					if code, msg, err := s.readReply(ctx, "auth"); err == nil && code >= 400 {
						s.reject(ctx, "auth", code, msg)
					}
				}
				s.quit(ctx)
				r.end(fmt.Errorf("%w: %s: AUTH %s: challenge %q: %w", ErrAuth, r.addr, mech, strings.TrimSpace(msg), err))
				return errEnded
			}
			c.bw.WriteString(base64.StdEncoding.EncodeToString(resp) + "\r\n")
		default:
			s.reject(ctx, "auth", code, msg)
			if code/100 == 5 {
				s.quit(ctx)
				r.end(fmt.Errorf("%w: %s: AUTH %s: %d %s", ErrAuth, r.addr, mech, code, firstLine(msg)))
				return errEnded
			}
			s.quit(ctx)
			return errors.New("AUTH refused")
		}
	}
}

// saslText is an initial response as the AUTH line carries it: base64,
// or "=" for an empty one (RFC 4954 §4).
func saslText(ir []byte) string {
	if len(ir) == 0 {
		return "="
	}
	return base64.StdEncoding.EncodeToString(ir)
}

// saslClient returns the client of mechanism mech (one of AuthMechs).
func saslClient(mech, user, pass string) sasl.Client {
	switch mech {
	case "LOGIN":
		return &login{user, pass}
	case "CRAM-MD5":
		return &cramMD5{user, pass}
	case "XOAUTH2":
		return &xoauth2{user, pass}
	case "OAUTHBEARER":
		return sasl.NewOAuthBearerClient(&sasl.OAuthBearerOptions{Username: user, Token: pass})
	}
	return sasl.NewPlainClient("", user, pass)
}

// login is LOGIN's client (draft-murchison-sasl-login): the user name
// as the initial response, then whatever the server's prompts ask for,
// read as servers write them ("Username:" again, "password:").
type login struct{ user, pass string }

func (l *login) Start() (string, []byte, error) { return "LOGIN", []byte(l.user), nil }

func (l *login) Next(challenge []byte) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(string(challenge))) {
	case "username:", "user name", "username":
		return []byte(l.user), nil
	case "password:", "password":
		return []byte(l.pass), nil
	}
	return nil, fmt.Errorf("LOGIN: unexpected prompt %q", challenge)
}

// cramMD5 is CRAM-MD5's client (RFC 2195): the answer to the server's
// challenge is the user name, a space and the hex HMAC-MD5 of the
// challenge keyed with the password.
type cramMD5 struct{ user, pass string }

func (c *cramMD5) Start() (string, []byte, error) { return "CRAM-MD5", nil, nil }

func (c *cramMD5) Next(challenge []byte) ([]byte, error) {
	if len(challenge) == 0 {
		return nil, errors.New("CRAM-MD5: empty challenge")
	}
	h := hmac.New(md5.New, []byte(c.pass))
	h.Write(challenge)
	return []byte(c.user + " " + hex.EncodeToString(h.Sum(nil))), nil
}

// xoauth2 is the client of Google's XOAUTH2: the initial response
// "user=U^Aauth=Bearer TOKEN^A^A"; a challenge is the server's error (a
// JSON object), answered with an empty line, after which it refuses.
type xoauth2 struct{ user, token string }

func (x *xoauth2) Start() (string, []byte, error) {
	return "XOAUTH2", []byte("user=" + x.user + "\x01auth=Bearer " + x.token + "\x01\x01"), nil
}

func (x *xoauth2) Next([]byte) ([]byte, error) { return []byte{}, nil }

package smtpsink

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
)

// The SASL mechanisms AUTH offers by default, and those it can.
var (
	defaultAuthMechanisms = []string{"PLAIN", "LOGIN"}
	AuthMechanisms        = []string{"PLAIN", "LOGIN", "CRAM-MD5", "XOAUTH2", "OAUTHBEARER"}
)

// errAuthFailed is what an authenticator returns for wrong credentials.
var errAuthFailed = errors.New("smtpsink: authentication failed")

// authenticate checks a user's credentials against Config.AuthUsers (any
// are accepted without it). An authorization identity other than the
// user's own is refused.
func (ss *session) authenticate(identity, user, pass string) error {
	if identity != "" && identity != user {
		return errAuthFailed
	}
	if ss.cfg.AuthUsers != nil {
		want, ok := ss.cfg.AuthUsers[user]
		if !ok || subtle.ConstantTimeCompare([]byte(want), []byte(pass)) != 1 {
			return errAuthFailed
		}
	}
	ss.authPending = user
	return nil
}

// loginServer is the server side of the LOGIN mechanism (the
// draft-murchison-sasl-login exchange, which go-sasl has no server for):
// a challenge for the user name, one for the password. An initial
// response is the user name.
type loginServer struct {
	step       int
	user       string
	authorized func(identity, user, pass string) error
}

func (l *loginServer) Next(response []byte) (challenge []byte, done bool, err error) {
	switch l.step {
	case 0:
		l.step = 1
		if response == nil {
			return []byte("Username:"), false, nil
		}
		fallthrough
	case 1:
		l.user, l.step = string(response), 2
		return []byte("Password:"), false, nil
	case 2:
		l.step = 3
		return nil, true, l.authorized("", l.user, string(response))
	}
	return nil, false, sasl.ErrUnexpectedClientResponse
}

// auth serves AUTH (RFC 4954): it starts the exchange, which the session
// goes on feeding the client's lines (authLine) until it ends.
func (ss *session) auth(arg string) {
	switch {
	case !ss.cfg.Auth:
		ss.reply(502, "5.5.1 Error: command not implemented")
		return
	case !ss.tls && !ss.cfg.AuthPlaintext:
		ss.reply(538, "5.7.11 Encryption required for requested authentication mechanism")
		return
	case !ss.greeted || !ss.esmtp:
		ss.reply(503, "5.5.1 Error: send EHLO first")
		return
	case ss.authed:
		ss.reply(503, "5.5.1 Error: already authenticated")
		return
	case ss.inTx:
		ss.reply(503, "5.5.1 Error: MAIL transaction in progress")
		return
	}
	mech, initial, hasInitial := strings.Cut(arg, " ")
	if mech == "" || strings.Contains(initial, " ") {
		ss.reply(501, "5.5.4 Syntax: AUTH mechanism [initial-response]")
		return
	}
	mech = strings.ToUpper(mech)
	if !slices.Contains(ss.cfg.AuthMechanisms, mech) {
		ss.reply(504, "5.5.4 Unrecognized authentication type")
		return
	}
	switch mech {
	case sasl.Plain:
		ss.sasl = sasl.NewPlainServer(ss.authenticate)
	case sasl.Login:
		ss.sasl = &loginServer{authorized: ss.authenticate}
	case "CRAM-MD5":
		ss.sasl = &cramServer{ss: ss}
	case "XOAUTH2", sasl.OAuthBearer:
		ss.sasl = &bearerServer{xoauth2: mech == "XOAUTH2", authorized: ss.authenticate}
	}
	var resp []byte // nil: no initial response
	if hasInitial {
		resp = []byte{}
		if initial != "=" { // RFC 4954 §4: "=" is an empty one
			var err error
			if resp, err = base64.StdEncoding.DecodeString(initial); err != nil {
				ss.sasl = nil
				ss.reply(501, "5.5.2 Error: invalid base64 in the initial response")
				return
			}
		}
	}
	ss.authStep(resp)
}

// authLine takes the client's line in an AUTH exchange: a response, or
// "*" to cancel.
func (ss *session) authLine(line string) {
	if line == "*" {
		ss.sasl = nil
		ss.reply(501, "5.7.0 Authentication cancelled")
		return
	}
	resp, err := base64.StdEncoding.DecodeString(line)
	if err != nil {
		ss.sasl = nil
		ss.reply(501, "5.5.2 Error: invalid base64 in the response")
		return
	}
	ss.authStep(resp)
}

// authStep gives the mechanism the client's response and answers with
// its next challenge (334) or the outcome (235, 535).
func (ss *session) authStep(resp []byte) {
	challenge, done, err := ss.sasl.Next(resp)
	switch {
	case err != nil:
		ss.sasl, ss.authPending = nil, ""
		ss.reply(535, "5.7.8 Error: authentication failed")
	case done:
		ss.sasl, ss.authed, ss.authUser, ss.authPending = nil, true, ss.authPending, ""
		ss.reply(235, "2.7.0 Authentication successful")
	default:
		ss.reply(334, base64.StdEncoding.EncodeToString(challenge))
	}
}

// cramServer is the server side of CRAM-MD5 (RFC 2195): a challenge
// unique to the exchange, and the client's "user HMAC-MD5(password,
// challenge)" in hexadecimal.
type cramServer struct {
	ss        *session
	challenge []byte
}

func (c *cramServer) Next(response []byte) ([]byte, bool, error) {
	if c.challenge == nil {
		if response != nil {
			return nil, false, sasl.ErrUnexpectedClientResponse // no initial response in CRAM-MD5
		}
		c.challenge = fmt.Appendf(nil, "<%d.%d@%s>", rand.Uint64(), time.Now().Unix(), c.ss.cfg.Hostname)
		return c.challenge, false, nil
	}
	user, sum, ok := strings.Cut(string(response), " ")
	got, err := hex.DecodeString(sum)
	if !ok || err != nil || len(got) != md5.Size {
		return nil, true, errAuthFailed
	}
	if users := c.ss.cfg.AuthUsers; users != nil {
		pass, ok := users[user]
		mac := hmac.New(md5.New, []byte(pass))
		mac.Write(c.challenge)
		if !ok || !hmac.Equal(mac.Sum(nil), got) {
			return nil, true, errAuthFailed
		}
	}
	c.ss.authPending = user
	return nil, true, nil
}

// bearerServer is the server side of OAUTHBEARER (RFC 7628) and of
// XOAUTH2 (Google's older form of it): the client's user and bearer
// token, checked as a user and password. A failure is an error challenge
// (RFC 7628 §3.2.2), which the client answers (with 0x01, or nothing)
// before the 535.
type bearerServer struct {
	xoauth2    bool
	failed     bool
	done       bool
	authorized func(identity, user, pass string) error
}

// bearerError is the challenge that reports a failure.
var bearerError = []byte(`{"status":"invalid_token","schemes":"bearer","scope":""}`)

func (b *bearerServer) Next(response []byte) ([]byte, bool, error) {
	switch {
	case b.failed:
		return nil, true, errAuthFailed
	case b.done:
		return nil, false, sasl.ErrUnexpectedClientResponse
	case response == nil:
		return []byte{}, false, nil // an empty challenge asks for the response
	}
	b.done = true
	user, token, ok := b.parse(string(response))
	if !ok || b.authorized("", user, token) != nil {
		b.failed = true
		return bearerError, false, nil
	}
	return nil, true, nil
}

// parse takes the user and token out of a response:
// "n,a=USER,\x01...auth=Bearer TOKEN\x01\x01" (OAUTHBEARER, gs2 header
// first), or "user=USER\x01auth=Bearer TOKEN\x01\x01" (XOAUTH2).
func (b *bearerServer) parse(r string) (user, token string, ok bool) {
	if !b.xoauth2 {
		gs2, rest, ok := strings.Cut(r, ",")
		if !ok || gs2 != "n" && gs2 != "y" {
			return "", "", false
		}
		authz, rest, ok := strings.Cut(rest, ",")
		if !ok {
			return "", "", false
		}
		user, _ = strings.CutPrefix(authz, "a=")
		r = rest
	}
	body, ok := strings.CutSuffix(r, "\x01\x01")
	if !ok {
		return "", "", false
	}
	for kv := range strings.SplitSeq(strings.TrimPrefix(body, "\x01"), "\x01") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "user":
			if b.xoauth2 {
				user = v
			}
		case "auth":
			t, ok := strings.CutPrefix(v, "Bearer ")
			if !ok {
				return "", "", false
			}
			token = t
		}
	}
	return user, token, user != "" && token != ""
}

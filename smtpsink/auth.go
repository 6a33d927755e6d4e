package smtpsink

import (
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/emersion/go-sasl"
)

// The SASL mechanisms AUTH offers.
const authMechanisms = "PLAIN LOGIN"

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
	switch strings.ToUpper(mech) {
	case sasl.Plain:
		ss.sasl = sasl.NewPlainServer(ss.authenticate)
	case sasl.Login:
		ss.sasl = &loginServer{authorized: ss.authenticate}
	default:
		ss.reply(504, "5.5.4 Unrecognized authentication type")
		return
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

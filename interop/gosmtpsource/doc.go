// Package gosmtpsource holds tests, and nothing else, that drive a
// github.com/emersion/go-smtp server, unmodified and used through its public
// API only, with wirespeed's load client (package smtpsource): DATA and BDAT,
// pipelined within a message and across messages or not, SMTP and LMTP,
// every kind of body. Each test checks that go-smtp saw no protocol error,
// that every message was delivered, and that the bodies go-smtp's sessions
// read hash to what the source says it sent.
//
// It lives in the interop module so that users of wirespeed never download
// go-smtp.
package gosmtpsource

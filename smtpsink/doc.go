// Package smtpsink is an SMTP and LMTP server that accepts mail and throws
// it away as fast as the machine allows: a load target for SMTP clients
// and a sink for integration tests ([Config].OnMessage reports each
// message, with a digest of its data if asked; see the package example).
// It speaks ESMTP with PIPELINING, SIZE, 8BITMIME, CHUNKING and BINARYMIME,
// SMTPUTF8, ENHANCEDSTATUSCODES and DSN (RFC 3461), Postfix's XCLIENT and
// XFORWARD (their syntax checked, nothing kept), or LMTP (RFC 2033); with Config.TLS,
// STARTTLS (RFC 3207) or implicit TLS (RFC 8314), and with Config.Auth,
// AUTH PLAIN and LOGIN (RFC 4954; CRAM-MD5, XOAUTH2 and OAUTHBEARER where
// Config.AuthMechanisms offers them) over TLS. It does not parse headers.
//
// Guarantees:
//   - Bad input gets the reply RFC 5321 gives it, and the session goes on
//     where the RFC allows: a command line too long gets 500, a message
//     too large is read to its end and refused with 552, a bare CR or LF
//     refuses the message with 550 (Config.Bare).
//   - Memory per session is bounded whatever the peer sends (command
//     lines, recipients; message data is streamed, never held), and so is
//     time, with limits on by default: Config.Timeout per command,
//     Config.MinDataRate for message data, Config.MaxDiscardBytes for what
//     is read only to be thrown away. A session past a limit gets 421.
//   - Only a line whose line end has arrived is a command: what a closed
//     or reset stream cuts off is never run, nor is a BDAT chunk's data.
//   - Replies to a pipelined group that arrives in one read leave in one
//     write, and no reply waits for input that may never come.
//   - Every reply owed to commands that arrived before the end of the
//     stream, a close_notify or a bad TLS record is sent before the
//     session ends, where the connection can still carry it; an accepted
//     message whose 250 could not be is counted in Stats.Unsent.
//   - A session that starts TLS forgets all it knew, and input sent in the
//     clear after STARTTLS is never read as commands.
//
// Tests choose the replies: Config.Force for a command, Config.Rules for a
// client, an address or a stage, with odds, and Config.Decide for a
// message, from its envelope and (with Config.Capture, which gets each
// message's data) its bytes.
//
// Sessions run on one of two engines (Config.Engine): as state machines on
// netio's event loops (the default on Linux; an idle session holds no
// buffer), or a goroutine each. Both give the same replies; on both, a
// callback's panic ends its session only (Config.ErrorLog).
//
// On Linux, a message whose data takes more than one read turns on quick
// ACKs until its reply, so that a client with Nagle's algorithm on does not
// wait out the delayed-ACK timer at the end of a large message. Addresses
// are taken as given between their angle brackets, but one that is not
// ASCII needs MAIL's SMTPUTF8 parameter (RFC 6531), or gets 553 5.6.7, as
// from Postfix's smtpd (its smtp-sink takes it), before any rule;
// one declared but not UTF-8 gets 501.
package smtpsink

// Package smtpsource is an SMTP and LMTP load client in the manner of
// Postfix's smtp-source(1): Sessions in parallel send Messages in all, each
// with Recipients recipients and a body of Length bytes, on a connection of
// their own or, with Reuse (smtp-source -d), one after another on the same
// connection. Beyond smtp-source it pipelines (RFC 2920; with Reuse, the
// next message's commands go in the same write as the last one's data),
// sends BDAT chunks (RFC 3030), speaks TLS with STARTTLS (RFC 3207) or from
// the connect (RFC 8314), resuming sessions if asked, authenticates with
// AUTH PLAIN, LOGIN, CRAM-MD5, XOAUTH2 or OAUTHBEARER (RFC 4954), sends
// SIZE=, DSN and SMTPUTF8 parameters and Postfix's XCLIENT and XFORWARD
// when offered, realistic bodies of a length or a range of lengths, or
// messages from files ([LoadMessages], held once), for a count or a
// duration, on an open-loop schedule (QPS, or ramped [Stage]s) if asked,
// and reports per-phase latency percentiles (see [Phases]), per stage
// too.
// See the example of [Run].
//
// Guarantees:
//   - Every reply is read and counted by phase and code; a refusal, a reply
//     that breaks RFC 5321 §4.2 or its bounds (at once) and a failed read or
//     write are counted apart, and the run goes on: a failed transaction is
//     reset, a broken connection replaced. Only a server that refuses TLS
//     or AUTH for good ends it ([ErrStartTLS], [ErrTLS], [ErrAuth]). A
//     refusal, then a close, is one error.
//   - A 421 to any command (RFC 5321 §3.8: the server is closing the
//     channel) fails the message, if one is under way, with that 421,
//     counted once: the connection is closed without QUIT, no reply to
//     the commands pipelined after it is awaited, and the next message
//     opens a new one. A greeting other than 220 (421, 554) is a connect
//     refusal, which fails the message the connection was for (see
//     Config.Reuse), and its session backs off before it takes another:
//     10ms, doubled at each refusal that follows up to 1s, and from 10ms
//     again after a message is delivered. So does a connection that
//     fails, or that the server ends before a message is delivered on it.
//   - Every message started is in the figures: delivered, with its latency
//     among the messages', failed, among the failed ones', or abandoned
//     (under way when the run was stopped). In open loop a message's
//     latency runs from its intended start, so a server that stalls is
//     charged for the messages that wait (no coordinated omission).
//   - Messages are deterministic: message k is its header (a Date fixed
//     for the run, a Message-Id carrying k) and a body the same for all
//     (or, with a length range or a message set, a function of k), so
//     their digests (Config.Digests) can be checked against what a sink
//     logged ([Verify]).
//   - Each EHLO reply (after STARTTLS, after XCLIENT) replaces what the
//     one before offered; bytes sent with STARTTLS's 220 are an error.
//   - Percentiles come from HdrHistogram (3 significant digits); the
//     optional interval log is HdrHistogram's format, delivered messages
//     untagged and each phase tagged with its name; a write error stops
//     it (Run: ErrHdrLog).
//
// As with smtp-source, sessions connect one at a time. Unlike it, a refused
// command does not end the run (smtp-source stops unless -A is given), and
// sessions greet with EHLO (LHLO in LMTP), falling back to HELO.
package smtpsource

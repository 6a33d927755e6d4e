// Package smtpsource is an SMTP and LMTP load client in the manner of
// Postfix's smtp-source(1): Sessions in parallel send Messages in all, each
// with Recipients recipients and a body of Length bytes, on a connection of
// their own or, with Reuse (smtp-source -d), one after another on the same
// connection.
//
// Beyond smtp-source it pipelines MAIL, RCPT and DATA in one write when the
// server offers PIPELINING (RFC 2920) and, on a kept connection (Reuse),
// sends them behind the previous message's data and end line in the same
// write, as RFC 2920 §3.1 allows (DATA ends the group; in open loop only
// once the next message is due); it sends BDAT chunks when it offers
// CHUNKING (RFC 3030), speaks TLS with STARTTLS (RFC 3207) or from the
// connect (RFC 8314), resuming sessions across connections if asked,
// authenticates with AUTH PLAIN or LOGIN (RFC 4954), sends realistic
// bodies (mail text with lines that need dot-stuffing, base64, long
// lines), runs an open-loop schedule (QPS) in which a message's latency
// runs from its intended start, so a server that stalls is charged for
// the messages that wait meanwhile (no coordinated omission), and reports
// per-phase latency percentiles from
// HdrHistogram: connect, banner, EHLO, TLS, AUTH, MAIL, RCPT, DATA (to
// the 354), the data to its reply, and the whole message, delivered or
// failed (see Phases for what each measures).
//
// Guarantees:
//   - Every reply is read and counted by phase and code; a 4xx or 5xx
//     reply is a rejection, a reply that is not SMTP a protocol error, a
//     failed read or write (a disconnect, a timeout) an I/O error. The run
//     goes on: a failed transaction is reset (RSET), a broken connection is
//     replaced for the next message. Only a server that refuses TLS or
//     AUTH for good ends it (ErrStartTLS, ErrTLS, ErrAuth).
//   - Messages are deterministic: message k is its header (From, To, a
//     Date fixed at the start of the run, a Message-Id carrying k, an
//     optional Subject) and a body that is the same for every message, so
//     the digest of each (Config.Digests) can be compared with what a
//     sink logged (Verify).
//   - After STARTTLS the server's extensions are learnt anew (RFC 3207
//     §4.2), and anything it sent with its 220 before the handshake is a
//     protocol error, never read as what it says over TLS.
//   - Every message started is in the figures: delivered, with its
//     latency among the messages', or failed (refused, broken off, timed
//     out), with its latency among the failed ones'.
//   - Percentiles come from HdrHistogram (1 ns to 1 h, 3 significant
//     digits); the optional interval log is in HdrHistogram's format, the
//     delivered messages' latencies untagged and each phase's tagged with
//     its name.
//
// As smtp-source does, sessions connect one at a time: a burst of
// handshakes can overflow a listener's accept queue, and the kernel then
// resets the connections past it before their greeting.
//
// Differences from smtp-source: sessions greet with EHLO (LHLO in LMTP),
// not HELO, so that the server's extensions are known, and fall back to
// HELO when EHLO is refused; a refused command does not end the run
// (smtp-source stops unless -A is given); and only the flags listed in
// Config are supported.
package smtpsource

// Package netio is a fast send path for TCP servers: [Conn], a net.Conn
// whose writes are gathered into pooled buffers and leave with one writev
// per batch (sixteen pipelined replies in one system call, no Flush), and
// [Serve], event loops on epoll that serve connections with no goroutine
// and no buffer per waiting connection. See the examples of [NewConn] and
// [Serve]. [Copy] sends files with sendfile or splice, and
// [SetNotSentLowat] and [GetSockOpts] set and read what the net package
// cannot.
//
// Guarantees of a [Writer] (and so of a Conn):
//   - Bytes reach the kernel in the order Writes returned, without gaps; a
//     Write no larger than the window is atomic; the caller's slice is
//     neither modified nor kept. Flush returns once every byte accepted
//     before it is in the socket's send buffer.
//   - At most Options.MaxQueued bytes wait, whatever the peer does: past
//     the window a Write blocks (deadline- and context-aware), fails at
//     once with Options.NonBlocking, or sizes the window to the measured
//     drain rate with Options.TargetDelay. A write error is sticky.
//   - No allocation per message in steady state. On a Conn, a Write made
//     between two Reads is sent by the next Read, in the reading goroutine:
//     a handler that writes and then waits on something other than the
//     connection calls Flush. [Conn.Close] waits at most Options.Linger.
//
// Guarantees of [Serve]:
//   - Output leaves in the order written, and a connection is not read
//     while output waits for the socket: a peer that stops reading stops
//     being read. LoopOptions.MaxQueued, MaxInput and MaxDo bound what a
//     connection holds; nothing is allocated per message.
//   - Idle and write timeouts are on unless turned off, a Handler may set
//     a deadline ([LoopConn.SetDeadline]) or run a function later on the
//     loop ([LoopConn.AfterFunc]), and a loop reads at most ReadBudget
//     from one connection before serving the others.
//   - All input sent before the peer's end of stream reaches the Handler
//     ([LoopConn.EOF]); a close sends what was written and lingers,
//     throwing input away, until the peer has all of it, so the last reply
//     is not lost to a reset; if it gives up, OnClose learns [ErrUnsent].
//   - A panic on a loop closes only its connection (OnClose learns
//     [ErrPanic]); nil functions are refused with [ErrNilFunc].
//   - TCP and Unix sockets, several listeners ([Loops.AddListener]) and
//     dialed connections ([Loops.Dial]) are served alike; [Loops.Stats]
//     counts connections by how they closed. TLS ([LoopConn.StartTLS])
//     is crypto/tls's, its handshake bounded and off the loop.
//
// Serve runs on epoll on Linux; on every other system (and under the
// build tag netio_portable) on goroutines over net.Conn, two a
// connection, with the same contract. [GetSockOpts] needs Unix and
// [SetNotSentLowat] Linux. A Handler must not block: another goroutine
// answers through [LoopConn.Do], and code that must block takes the
// connection with [LoopConn.Detach]. docs/netio.md tells the rules in full.
package netio

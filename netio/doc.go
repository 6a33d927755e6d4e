// Package netio is a fast send path for TCP connections: a coalescing
// writer for net.Conn, event loops that serve connections without a
// goroutine each, zero-copy file sending, and the socket options the net
// package cannot set or read back.
//
// # Coalescing writer
//
// A [Writer] (or a [Conn], a net.Conn wrapped with one) copies each Write
// into pooled 16 KiB chunks and returns. What is queued goes to the kernel
// with one writev per batch (at most 1024 buffers, about 256 KiB): a server
// needs no Flush and no timer, and sixteen pipelined responses leave in one
// system call. On a Conn whose Read has been called, a Write made between
// two Reads is sent by the next Read before it can wait for data, in the
// reading goroutine ([Conn.Read]), so request/response traffic runs no
// goroutine besides the caller's, and [Conn.ReadPooled] leaves a waiting
// connection holding no read buffer either; a handler that writes and then
// waits for something other than the connection calls Flush. Otherwise (a
// writer that does not read, Writes made while a Read waits, what a full
// socket does not take, a held Write past Options.MaxHold if set) a flusher
// goroutine, started on first use, sends the queue as soon as the producer
// gives up the CPU.
//
// Guarantees:
//   - Bytes reach the kernel in the order Writes returned, without gaps. A
//     Write no larger than the window is atomic with respect to others.
//   - The caller's slice is neither modified nor retained.
//   - Flush returns nil once every byte accepted before it is in the
//     socket's send buffer, which is what "written" means for net.Conn.
//   - At most Options.MaxQueued bytes (rounded up to a chunk) are queued,
//     whatever the peer does; an idle Writer holds no chunk.
//   - A write error is sticky, and Stats tells how many accepted bytes
//     reached the kernel (Written) and how many were dropped.
//   - No allocation per message in steady state, Conn.Read included (a
//     Write that waits for room allocates a channel).
//
// Backpressure: a Write that does not fit in the window waits until the
// queue drains to the low watermark, the write deadline passes or the
// context of WriteContext ends. With Options.NonBlocking it fails at once
// with [ErrQueueFull] (or [ErrTooLarge] above MaxQueued), accepting
// nothing. With Options.TargetDelay the window is the measured drain rate
// times TargetDelay, within [MinWindow, MaxQueued].
//
// Closing: [Conn.Close] waits at most Options.Linger (default
// [DefaultLinger]) for the queue to reach the kernel, then closes the
// connection, which also ends a writev stuck on a peer that stopped
// reading, and returns [ErrUnsent] if data was left. Call Flush first for
// an unbounded graceful close.
//
// Limits: a Writer runs at most one goroutine, from the first Write it
// does not hold for a Read until Close. On a *net.TCPConn, a Conn's Read
// sends the queue with non-blocking writes; on other connections it
// blocks in writev while the socket is full, as a Write would.
// Flush, and Close of a bare Writer, block in writev while the socket is
// full; bound them with a write deadline on the connection
// ([Conn.SetWriteDeadline] sets both).
//
// # Event loops
//
// [Serve] runs a server on event loops (Linux, epoll): each loop is a
// thread that serves its share of the connections, reading a readable
// connection into the loop's buffer and calling the [Handler], whose
// output leaves in one write(2) when it returns. A waiting connection
// holds no goroutine and no buffer, only what its Handler left unused;
// nothing is allocated per message (but for output a full socket leaves
// waiting, and functions passed to [LoopConn.Do]).
//
// Guarantees:
//   - Output leaves in the order written, and a connection is not read
//     while output the socket has not taken waits: a peer that stops
//     reading stops being read. A connection holds at most
//     LoopOptions.MaxQueued bytes of output (Write fails with
//     ErrQueueFull past it) and MaxInput of unused input
//     (ErrInputTooLarge past it).
//   - Every connection has an idle timeout and a write timeout unless
//     turned off, and a deadline its Handler may set; a loop reads at
//     most ReadBudget from a connection before serving the others.
//   - Input the peer sent before ending its stream is all given to the
//     Handler; the connection stays open for output until closed. A close
//     sends what was written first, and lingers while the peer is still
//     sending, so that the last reply is not lost to a reset.
//
// Limits: a Handler must not block, and a LoopConn is used only on its
// loop. Another goroutine answers a connection through [LoopConn.Do];
// code that must block (crypto/tls) takes the connection with
// [LoopConn.Detach].
//
// # Zero-copy file send
//
// [Copy] and [Conn.ReadFrom] hand files and sockets to
// (*net.TCPConn).ReadFrom, which uses splice or sendfile where the kernel
// allows; anything else is copied through a pooled 64 KiB buffer.
//
// # Socket options
//
// [SetNotSentLowat] sets TCP_NOTSENT_LOWAT, and [GetSockOpts] reads back
// the options (*net.TCPConn).SetNoDelay, SetWriteBuffer and SetReadBuffer
// set.
package netio

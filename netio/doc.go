// Package netio is a fast send path for TCP connections built on the
// standard net package: a coalescing writer, zero-copy file sending and
// socket tuning helpers.
//
// # Coalescing writer
//
// A [Writer] (or the [Conn] wrapping a net.Conn with one) copies each Write
// into pooled 16 KiB chunks and returns. A flusher goroutine owned by the
// Writer hands everything queued to the kernel with one writev per batch
// (net.Buffers, at most 1024 iovecs and about 256 KiB per call). The flusher runs as soon as
// the producer gives up the CPU, so a batch is whatever accumulated while
// the producer was busy or the previous writev was in flight: a
// request/response server needs no explicit Flush and adds no timer delay,
// and a server answering sixteen pipelined requests in a row sends their
// sixteen responses with one system call.
//
// Guarantees:
//   - Bytes reach the kernel in the order Writes returned, without gaps.
//     Concurrent Writes are serialised; each is atomic with respect to the
//     others unless it blocks part way (blocking mode, larger than the space
//     left in the window).
//   - The caller's slice is neither modified nor retained after Write returns.
//   - Flush returns nil only once every byte accepted before the call has
//     been accepted by the kernel (it is then in the socket's send buffer,
//     which is what "written" means for net.Conn.Write too).
//   - Memory is bounded: at most Options.MaxQueued bytes (rounded up to the
//     chunk size) are queued per Writer, whatever the peer does. A Writer with
//     nothing queued holds no chunk.
//   - After a write error the error is sticky: Write, Flush and Close return
//     it, and Stats tells exactly how many accepted bytes reached the kernel
//     (Written) and how many were dropped (Accepted - Written).
//   - No allocation per message in steady state (chunks come from a
//     sync.Pool; waiting for space allocates one channel per wait).
//
// Backpressure: when the queue reaches its window (high watermark), a
// blocking Write waits until the queue drains to the low watermark, or until
// the deadline set by SetWriteDeadline or the context of WriteContext ends;
// with Options.NonBlocking, Write instead fails at once with [ErrQueueFull]
// and accepts nothing. A NonBlocking Write larger than the current window
// is accepted whole into an empty queue (the window may have adapted below
// the message size), and one larger than MaxQueued, which can never fit,
// fails with [ErrTooLarge]. With Options.TargetDelay set, the window follows the
// measured drain rate (window = rate × TargetDelay, between MinWindow and
// MaxQueued), so the queue never holds much more than TargetDelay worth of
// data for a slow peer.
//
// Closing: [Conn.Close] never blocks for long. It waits at most
// Options.Linger (default [DefaultLinger], 5s; negative for no wait) for the
// queue to reach the kernel, then closes the connection whatever the peer
// does, which also ends a writev stuck on a peer that stopped reading; if
// data was still queued it returns [ErrUnsent] (Stats says how much). So
// aborting a stuck connection with Close works as with a plain net.Conn,
// only up to Linger later, and a graceful close (the last responses, then
// Close) loses nothing from a peer that reads. Call Flush first for an
// unbounded graceful close.
//
// Limits: a Writer starts one goroutine on first use; call Close to stop it.
// Flush, and Close of a bare Writer (which does not own the connection),
// block in writev while the socket is full; bound them with a write deadline
// on the connection ([Conn.SetWriteDeadline] sets both).
//
// # Zero-copy file send
//
// [Copy] and [Conn.ReadFrom] hand files and sockets to the standard
// library's *net.TCPConn.ReadFrom, which uses splice or sendfile where the
// kernel allows; everything else is copied through a pooled 64 KiB buffer.
// The bytes sent are the same either way.
//
// # Tuning
//
// [SetNotSentLowat] sets the one option the net package lacks, and
// [GetSockOpts] reads back those that (*net.TCPConn).SetNoDelay,
// SetWriteBuffer and SetReadBuffer set.
package netio

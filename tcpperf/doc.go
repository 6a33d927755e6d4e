// Package tcpperf is a TCP latency load generator for echo and line
// protocols, in the manner of wrk2, built to hold 10,000 and more
// connections from one client core. Connections are served by Loops event
// loops (Linux epoll), each on its own locked OS thread, optionally pinned
// to a CPU, with its share of the connections; nothing per message crosses
// threads. See the examples of [Run] and [MergeLogs].
//
// Open loop (QPS > 0): messages follow a constant-rate schedule dealt to
// the loops in turn and, within a loop, to its connections in turn; how a
// loop waits between sends is Config.Wait's choice (by default chosen by
// the load: [WaitBatch] where a loop's rate would keep [WaitAdaptive]
// spinning, [WaitAdaptive] below; Result.WaitChosen says so; in closed
// loop, with no schedule, [WaitSleep], also where Config.Wait is
// [WaitAdaptive], [WaitSend] or [WaitBatch]). A message's latency runs from its intended send time to the
// moment its whole response has been read (with [ArrivalKernel], which
// [WaitBatch] uses, received by the kernel), so a server that stalls is
// charged for every message the schedule wanted to send meanwhile (no
// coordinated omission). Send lateness (actual minus intended send time)
// is reported as the tool's own floor, beside its CPU time per message.
// Closed loop (QPS = 0): each connection keeps Depth messages in flight, the
// warm-up's at its end measured too; latency runs from the actual send.
//
// Guarantees:
//   - Every response is checked against the message it answers: the same
//     bytes (echo) or the same line (line mode, one line back per line).
//   - Percentiles come from HdrHistogram (1 ns to 1 h, 3 significant
//     digits); the optional interval log is in HdrHistogram's format with
//     start times to the millisecond, so the logs of several hosts merge
//     with MergeLogs or HdrHistogram's own tools. A log whose writer fails
//     stops at that write, and Run reports it (ErrHdrLog) with the result.
//   - Sends never block a loop: a connection whose server stops reading
//     delays only itself. Up to 4 MiB wait per connection (in closed
//     loop, Depth messages if they are more; Depth is unused in open
//     loop); later messages count as write errors, and what is
//     unanswered at the end counts as Unanswered.
//   - No message is sent later than DrainTimeout after the end of the
//     schedule: those due and not sent by then count as Missed. Run
//     returns DrainTimeout after the last send at the latest, and
//     promptly when ctx is done.
//
// Limits: tcpperf's own loops are Linux's (ErrUnsupported elsewhere);
// off Linux connections run on EngineNetio, with its limits, and with
// no CPU pinning. A client CPU that cannot
// keep up shows as send lateness, and in the latencies. Responses are
// matched to requests by order, so servers must answer in order; with
// messages of 17 bytes and more, which carry their whole sequence number,
// a response that is exactly an earlier message (a duplicate) counts as
// one nobody asked for and one that is exactly a later outstanding message
// answers it (those it passes over are content errors), and matching goes
// on. Run does
// not raise the file descriptor limit; it fails with ErrFDLimit when Conns
// do not fit, and with ErrPorts when they exceed the ephemeral port range
// (over TCP: a Unix socket's connections take no port).
package tcpperf

// Package tcpperf is a TCP latency load generator for echo and line
// protocols, in the manner of wrk2.
//
// Open loop (QPS > 0): messages follow a constant-rate schedule spread over
// the connections, and a message's latency runs from its intended send
// time to the moment its whole response has been read, so a server that
// stalls is charged for every message the schedule wanted to send
// meanwhile (no coordinated omission). Pacer goroutines sleep on a timerfd
// (Linux) and spin for the last stretch before each send; their lateness
// (actual minus intended send time) is reported as the tool's own floor.
//
// Closed loop (QPS = 0): each connection keeps Depth messages in flight and
// sends as many new ones as responses it has just read; latency runs from
// the actual send.
//
// Guarantees:
//   - Every response is checked against the message it answers: the same
//     bytes (echo) or the same line (line mode, one line back per line).
//   - Percentiles come from HdrHistogram (1 ns to 1 h, 3 significant
//     digits); the optional interval log is in HdrHistogram's format, so
//     runs from several machines can be merged with its tools.
//   - Sends never block the pacers or the readers: a connection whose
//     server stops reading delays only itself. Up to 4 MiB (or Depth
//     messages) wait per connection; later messages count as write errors,
//     and what is unanswered at the end counts as Unanswered.
//   - Run returns DrainTimeout after the end of the schedule at the latest,
//     and promptly when ctx is done.
//
// Limits: a client CPU that cannot keep up with the rate shows as send
// lateness, and in the latencies. Responses are matched to requests by
// order, so servers must answer in order, as echo and pipelined line
// protocols do. Run does not raise the file descriptor limit (the Go
// runtime already raised the soft limit to the hard one); it fails with
// ErrFDLimit when Conns do not fit.
package tcpperf

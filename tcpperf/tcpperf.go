package tcpperf

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/internal/latrec"
	"github.com/wirespeed/wirespeed/internal/sleep"
	"github.com/wirespeed/wirespeed/internal/tcpperfenv"
)

// Errors returned by Run.
var (
	ErrConfig      = errors.New("tcpperf: bad configuration") // a *ConfigError says which field
	ErrFDLimit     = errors.New("tcpperf: not enough file descriptors")
	ErrPorts       = errors.New("tcpperf: not enough ephemeral ports")
	ErrConnect     = errors.New("tcpperf: no connection could be opened")
	ErrUnsupported = errors.New("tcpperf: needs Linux (epoll)") // EngineTcpperf off Linux
	// ErrHdrLog comes with a whole Result: writing Config.HdrLog failed,
	// and the log stopped at that write (none after it). The error
	// wraps the writer's.
	ErrHdrLog = errors.New("tcpperf: writing the interval log (HdrLog) failed")
)

// A ConfigError is the error of a configuration Run cannot run: it
// matches ErrConfig, and Field names the Config field at fault (as
// "QPS"; empty where none is).
type ConfigError struct {
	Field string
	msg   string
	err   error // what it wraps, if anything
}

func (e *ConfigError) Error() string        { return ErrConfig.Error() + ": " + e.msg }
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }
func (e *ConfigError) Unwrap() error        { return e.err }

// configErr returns a ConfigError for field, its message as fmt.Errorf
// makes it (a %w is unwrapped).
func configErr(field, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &ConfigError{Field: field, msg: err.Error(), err: errors.Unwrap(err)}
}

// Config describes a run. Zero fields take the defaults noted.
//
// A message of MsgSize (N) bytes is its sequence number in lower-case
// hexadecimal (16 digits, its last N-1 where fewer fit), then its
// connection's number, 0 to Conns-1, in base 36 (digits 0-9 and a-z; 13,
// which hold any, or its last N-17 where fewer fit), then lower-case
// letters that spell the connection's number too, then "\n" (none
// inside, nor "\r"). From 30 bytes on every message of a run differs
// from every other, and a response that is another connection's message,
// sequence number and all, is a content error, as a wrong byte is. From
// 18 to 29 bytes connections whose numbers share their last N-17 digits
// send the same messages (all differ where Conns is at most 36^(N-17):
// 36 at 18 bytes, 46,656 at 20, 2^32 at 24); at 17 bytes and fewer a
// message is its sequence number's last N-1 digits alone, the same on
// every connection, and only those are checked.
type Config struct {
	Addr     string        // host:port, or unix:PATH for a Unix socket (engine netio, its default then)
	Conns    int           // connections (default 1, at most 2^24)
	QPS      float64       // messages per second over all connections; 0 = closed loop
	Depth    int           // closed loop: messages in flight per connection (default 1; at most 1Mi, and 64 MiB of them)
	MsgSize  int           // bytes per message, "\n" included (default 64, at least 1); see above for what it carries
	Duration time.Duration // measured time (default 10s); in open loop, one send interval (1/QPS) at least
	Warmup   time.Duration // time before the measurement, not recorded
	Mode     string        // "echo" (default) or "line"
	// Loops is the number of event loops (default 1, at most the
	// connections opened, and at most 1024), each on its own locked OS thread with its share
	// of the connections and, in open loop, of the schedule. They run in
	// parallel up to GOMAXPROCS, and best with GOMAXPROCS above Loops: with
	// a spare processor for the rest of the program, the runtime leaves a
	// loop's processor alone while the loop waits in epoll (wirespeed
	// tcpperf sets GOMAXPROCS so).
	Loops int
	// CPUs pins loop i to CPU CPUs[i%len(CPUs)]; empty for no pinning.
	CPUs []int
	// Spin is how long before each send a loop stops sleeping and polls
	// without blocking (default 30µs, at most 10ms; negative: never).
	// Larger is more punctual and burns more CPU. A loop whose next send
	// is less than Spin + 50µs away does not sleep at all (a sleep costs
	// more than that saves), so above about 12k messages a second per loop it spins: its
	// CPU is then all used, and LoopBusy tells how much of it went on
	// messages.
	Spin time.Duration
	// Wait is how the loops wait between sends. By default the run
	// chooses by its load (Result.WaitChosen): WaitBatch where a loop's
	// share of QPS is so high that WaitAdaptive would never sleep (its
	// next send always nearer than Spin + 50µs, about 12,500 msg/s with
	// the default Spin) and so would take its whole CPU, WaitSleep where
	// Spin is negative and in closed loop (QPS 0: no send to poll
	// before, the loops sleep until responses come), WaitAdaptive
	// otherwise. In closed loop WaitAdaptive, WaitSend and WaitBatch,
	// which poll or batch only around sends, sleep too, on either engine,
	// as an unset Wait does (Batch unused, Arrival by default
	// ArrivalRead), and the result says WaitSleep, chosen; WaitSpin is
	// kept (refused by EngineNetio).
	Wait Wait
	// Batch is how late WaitBatch lets a send be before it wakes the loop
	// for it and for all others due by then (default 400µs, at most 10ms;
	// only with WaitBatch).
	Batch time.Duration
	// Arrival is how a response is timed (default ArrivalKernel with
	// WaitBatch, ArrivalRead otherwise; ArrivalRead on a fake clock).
	Arrival      Arrival
	DialTimeout  time.Duration // default 5s
	DrainTimeout time.Duration // wait for outstanding responses at the end (default 2s)
	Progress     io.Writer     // one line per second; nil for none
	// HdrLog gets the HdrHistogram interval log of latencies (ns), from
	// Run's goroutine; nil for none. At its first failed write (or short
	// one) the log stops, and Run returns the result with an error
	// matching ErrHdrLog.
	HdrLog io.Writer
	// Engine is what serves the connections (experimental): EngineTcpperf
	// (the default on Linux), tcpperf's own loops, or EngineNetio, package
	// netio's loops (see EngineNetio for what it lacks). With TLS set, a
	// Unix socket, or off Linux, it defaults to EngineNetio.
	Engine string
	// TLS, if set, has each connection speak TLS, as a client with this
	// configuration (its ServerName, by default Addr's host; a Unix
	// socket has none, so there it needs a ServerName or
	// InsecureSkipVerify): the
	// handshakes are part of connecting, before the schedule starts, and
	// a failed one counts as a connect failure. Only EngineNetio can.
	TLS *tls.Config

	waitChosen bool // Wait was chosen by the load (see check)
}

// Result is the outcome of a run, or of merged interval logs (Logs > 0:
// only the percentiles, Received, DurationS, AchievedQPS and StartMs are
// set, and only they are in its JSON; DurationS is the logs' span, see
// MergeLogs). Latencies are in microseconds.
//
// A percentile of nothing is no latency, not 0 µs: in the JSON, the
// latency percentiles, Max and Mean are left out when nothing was
// received (Received 0) and they are all 0, and the send lateness ones
// when nothing was sent (Sent 0) and they are all 0, as the text prints
// "-" for them. Decoded, what is left out is 0.
//
// SendSpanS is the time from the measurement's start to the later of its
// end (DurationS on) and the latest send of a message due in it: DurationS
// for a run whose sends were all within the window, longer for one whose
// loops fell behind and sent the measurement's messages late, in the
// drain (see the send lateness), and a little longer, the last send's
// lateness, for one that kept up but for it. AchievedQPS is Received over
// it: the rate the run managed, not its target, which a rate over the
// window read however late the messages went out. Only the open loop
// sends late. A run that measured nothing (DurationS 0) has none: 0, and
// left out of its JSON.
type Result struct {
	Mode            string  `json:"mode"`
	Conns           int     `json:"conns"`     // requested
	Connected       int     `json:"connected"` // opened (Conns - ConnectFailures)
	Loops           int     `json:"loops,omitempty"`
	Wait            Wait    `json:"wait"`               // how the loops waited between sends
	WaitChosen      bool    `json:"wait_chosen"`        // the run chose Wait by its load (Config.Wait unset; in closed loop, sleep, also for Config.Wait adaptive, send or batch)
	BatchUs         float64 `json:"batch_us,omitempty"` // WaitBatch's window
	Arrival         Arrival `json:"arrival"`            // how responses were timed
	Engine          string  `json:"engine"`             // what served the connections (Config.Engine)
	TLS             bool    `json:"tls,omitempty"`      // the connections spoke TLS (Config.TLS)
	TargetQPS       float64 `json:"target_qps"`
	Depth           int     `json:"depth,omitempty"`
	MsgSize         int     `json:"msg_size"`
	DurationS       float64 `json:"duration_s"`
	P50             float64 `json:"p50_us"`
	P90             float64 `json:"p90_us"`
	P99             float64 `json:"p99_us"`
	P999            float64 `json:"p999_us"`
	P9999           float64 `json:"p9999_us"`
	Max             float64 `json:"max_us"`
	Mean            float64 `json:"mean_us"`
	AchievedQPS     float64 `json:"achieved_qps"`
	SendSpanS       float64 `json:"send_span_s,omitempty"`
	Sent            int64   `json:"sent"`     // messages of the measurement written or queued for writing (closed loop: with the warm-up's in flight at its start)
	SentAll         int64   `json:"sent_all"` // every message sent, the warm-up's and the drain's too (for a server's CPU over the whole run)
	Received        int64   `json:"received"` // right responses to them, recorded in the measurement
	Errors          int64   `json:"errors"`   // sum of the kinds below
	ConnectFailures int64   `json:"connect_failures"`
	ConnectError    string  `json:"connect_error,omitempty"` // the first failure, when some connections opened
	WriteErrors     int64   `json:"write_errors"`            // failed connections, and messages of the measurement not sent because too many were waiting
	ReadErrors      int64   `json:"read_errors"`
	ContentErrors   int64   `json:"content_errors"`
	Unanswered      int64   `json:"unanswered"` // sent, no response by the end of the drain
	Unsent          int64   `json:"unsent"`     // due in the measurement on a connection that had failed
	// Interrupted says ctx ended the run before its end; the messages
	// then in flight, not waited for, are Abandoned, not unanswered.
	Interrupted bool  `json:"interrupted,omitempty"`
	Abandoned   int64 `json:"abandoned,omitempty"`
	// Missed counts the messages of an open-loop schedule due in the
	// measurement (as Sent, the warm-up's left out) and not sent
	// DrainTimeout after its end, the tool being too far behind (see the
	// lateness). Not an error of the server.
	Missed int64 `json:"missed"`
	// The send lateness, of the measurement's messages sent (as Sent):
	// from each one's intended send time to its send. A message not sent
	// (unsent, refused, missed) has none.
	LatenessP50 float64 `json:"send_lateness_p50_us"`
	LatenessP99 float64 `json:"send_lateness_p99_us"`
	LatenessMax float64 `json:"send_lateness_max_us"`
	// The tool's own CPU time (user + system, getrusage) from the start of
	// the measurement to the end of the drain: per message sent in the
	// measurement (Sent; not per message due: those unsent, refused or
	// missed are not among them, on either engine), and as a share of one
	// core over that wall time. A run stopped before its measurement began
	// (DurationS 0) has neither, nor LoopBusy: 0, and left out of its
	// JSON; one in which no message was sent has no CPUPerMsg (0, and left
	// out of its JSON where Sent is 0).
	CPUPerMsg float64 `json:"tool_cpu_per_msg_us"`
	CPUUtil   float64 `json:"tool_cpu_util"`
	// LoopBusy is the share of the loops' time, over the same span, spent
	// on messages rather than waiting or polling for them (Spin burns CPU
	// without work): near 1, the tool is the bottleneck. EngineNetio does
	// not measure it (0, left out of the JSON).
	LoopBusy float64 `json:"tool_loop_busy"`
	// Merged logs: how many, and the earliest interval start (Unix ms).
	Logs    int   `json:"logs,omitempty"`
	StartMs int64 `json:"start_unix_ms,omitempty"`
}

// MarshalJSON writes a run's Result with every field but the
// percentiles of nothing (see Result), and merged logs' (Logs > 0) with
// only what a merge measures: its span, count, rate and percentiles (none
// without values), not a run's zeros (sent, errors, connections), which
// would read as measured.
func (r Result) MarshalJSON() ([]byte, error) {
	type run Result // without this method
	if r.Logs == 0 {
		// The fields left out when nothing was measured shadow run's.
		type result struct {
			run
			P50         *float64 `json:"p50_us,omitempty"`
			P90         *float64 `json:"p90_us,omitempty"`
			P99         *float64 `json:"p99_us,omitempty"`
			P999        *float64 `json:"p999_us,omitempty"`
			P9999       *float64 `json:"p9999_us,omitempty"`
			Max         *float64 `json:"max_us,omitempty"`
			Mean        *float64 `json:"mean_us,omitempty"`
			LatenessP50 *float64 `json:"send_lateness_p50_us,omitempty"`
			LatenessP99 *float64 `json:"send_lateness_p99_us,omitempty"`
			LatenessMax *float64 `json:"send_lateness_max_us,omitempty"`
			CPUPerMsg   *float64 `json:"tool_cpu_per_msg_us,omitempty"`
			CPUUtil     *float64 `json:"tool_cpu_util,omitempty"`
			LoopBusy    *float64 `json:"tool_loop_busy,omitempty"`
		}
		out := result{run: run(r)}
		if r.DurationS != 0 || r.CPUPerMsg != 0 || r.CPUUtil != 0 || r.LoopBusy != 0 {
			out.CPUPerMsg, out.CPUUtil, out.LoopBusy = &r.CPUPerMsg, &r.CPUUtil, &r.LoopBusy
		}
		if r.Engine == EngineNetio && r.LoopBusy == 0 {
			out.LoopBusy = nil // not measured (see EngineNetio), not 0
		}
		if r.Sent == 0 && r.CPUPerMsg == 0 {
			out.CPUPerMsg = nil // no message to divide by, not 0 µs each
		}
		if r.Received != 0 || r.P50 != 0 || r.P90 != 0 || r.P99 != 0 || r.P999 != 0 || r.P9999 != 0 || r.Max != 0 || r.Mean != 0 {
			out.P50, out.P90, out.P99, out.P999, out.P9999, out.Max, out.Mean = &r.P50, &r.P90, &r.P99, &r.P999, &r.P9999, &r.Max, &r.Mean
		}
		if r.Sent != 0 || r.LatenessP50 != 0 || r.LatenessP99 != 0 || r.LatenessMax != 0 {
			out.LatenessP50, out.LatenessP99, out.LatenessMax = &r.LatenessP50, &r.LatenessP99, &r.LatenessMax
		}
		return json.Marshal(out)
	}
	type merged struct {
		Mode        string  `json:"mode"`
		Logs        int     `json:"logs"`
		StartMs     int64   `json:"start_unix_ms,omitempty"`
		DurationS   float64 `json:"duration_s"`
		Received    int64   `json:"received"`
		AchievedQPS float64 `json:"achieved_qps"`
		P50         float64 `json:"p50_us,omitempty"`
		P90         float64 `json:"p90_us,omitempty"`
		P99         float64 `json:"p99_us,omitempty"`
		P999        float64 `json:"p999_us,omitempty"`
		P9999       float64 `json:"p9999_us,omitempty"`
		Max         float64 `json:"max_us,omitempty"`
		Mean        float64 `json:"mean_us,omitempty"`
	}
	return json.Marshal(merged{Mode: r.Mode, Logs: r.Logs, StartMs: r.StartMs, DurationS: r.DurationS, Received: r.Received, AchievedQPS: r.AchievedQPS,
		P50: r.P50, P90: r.P90, P99: r.P99, P999: r.P999, P9999: r.P9999, Max: r.Max, Mean: r.Mean})
}

// Arrival is how a loop times a response.
type Arrival string

const (
	// ArrivalRead is when the loop read the response: its own delay in
	// reading counts as the server's.
	ArrivalRead Arrival = "read"
	// ArrivalKernel is when the kernel received the response (Linux's
	// SO_TIMESTAMPNS: the software receive timestamp, taken as the
	// packet enters the stack), whatever the loop was doing then; the
	// responses of one read share the newest one's time.
	ArrivalKernel Arrival = "kernel"
)

func (a Arrival) check() error {
	switch a {
	case ArrivalRead, ArrivalKernel:
		return nil
	}
	return configErr("Arrival", "arrival %q is neither kernel nor read", a)
}

// network returns the network and address to dial for Addr.
func (cfg *Config) network() (network, address string) {
	if path, ok := strings.CutPrefix(cfg.Addr, "unix:"); ok {
		return "unix", path
	}
	return "tcp", cfg.Addr
}

// Engines (Config.Engine).
const (
	// EngineTcpperf is tcpperf's own event loops, on Linux's epoll.
	EngineTcpperf = "tcpperf"
	// EngineNetio is an experiment: the connections on package netio's
	// loops (one netio.Loops of one loop for each of Config.Loops; dialed
	// with its Dial, the schedule run by its timers). It waits only by
	// sleeping (WaitSleep, WaitBatch; a wait chosen by the load is one of
	// these), times responses when read (ArrivalRead: netio reads with
	// read(2), so the kernel's receive timestamps are out of reach), does
	// not report LoopBusy on the system clock (0), and, as netio does, reads no
	// connection whose output waits for room. It alone speaks TLS
	// (Config.TLS): the messages written in one call on a connection
	// leave in one record. Off Linux it is the only engine, on netio's
	// portable loops, which pin nothing: Config.CPUs is refused there.
	EngineNetio = "netio"
)

const defaultBatch = 400 * time.Microsecond

// maxBatch bounds Config.Batch, on both engines (one command line means
// the same on each): tcpperf's loops sleep through a window in a raw
// clock_nanosleep, which a signal ends, and the Go runtime's monitor
// preempts a goroutine that has run 10 ms without yielding, as a loop
// does, with one. A 1 s window measured a send lateness of 10 ms at the
// median and 72 ms at most, and was reported as batch 1s; a window near
// the int64 nanoseconds' end overflowed and never slept.
const maxBatch = 10 * time.Millisecond

const (
	histMax     = latrec.Max
	maxInflight = 1 << 20 // per connection
	// maxDepthBytes bounds a closed loop's bytes in flight per
	// connection (Depth messages).
	maxDepthBytes = 64 << 20
	// minMaxPending is the least a connection may hold unsent (open loop:
	// past it, messages are counted as write errors; closed loop holds at
	// most Depth messages).
	minMaxPending = 4 << 20
)

func newHist() *hdrhistogram.Histogram { return latrec.NewHist() }

// counters are one loop's counts, read by the run for progress lines and
// the result.
type counters struct {
	sent, due, received, write, read, content, lost atomic.Int64
	msent                                           atomic.Int64 // sent within the measurement
	unsent                                          atomic.Int64 // due in the measurement on a failed connection
	abandoned                                       atomic.Int64 // outstanding on connections closed at a stop
	missed                                          atomic.Int64 // due in the measurement, not sent by the cut-off
	answered                                        atomic.Int64 // responses, measured or not
	idle                                            atomic.Int64 // ns waiting or polling with nothing to do
	lastSend                                        atomic.Int64 // when the latest message due in the measurement was sent (ns since base; see sendLate)
}

// msgTemplate is connection id's message of size bytes (see Config),
// its sequence number's hexLen(size) digits left to fill (putHex), its
// id's idLen(size) digits after them (putID). The filler after the id spells
// it too, in base 26: the filler byte at i is 'a' + (i + d) % 26, where d
// is the id's base-26 digit i % 14 (the least significant 0; 14 digits
// hold any int), so any 14 filler bytes in a row differ between any two
// connections (and connection 0's run through the alphabet).
func msgTemplate(id, size int) []byte {
	var d [14]byte
	for j, v := 0, uint64(id); j < len(d); j, v = j+1, v/26 {
		d[j] = byte(v % 26)
	}
	b := make([]byte, size)
	for i := range b { // the sequence number's place too, until filled
		b[i] = 'a' + byte((i%26+int(d[i%len(d)]))%26)
	}
	h := hexLen(size)
	putID(b[h:h+idLen(size)], uint64(id))
	b[size-1] = '\n'
	return b
}

// hexLen is how many leading bytes of a message carry its sequence number.
func hexLen(size int) int { return min(16, size-1) }

// idLen is how many bytes of a message, after its sequence number, carry
// its connection's id: none below 18 bytes.
func idLen(size int) int { return min(idDigits, size-1-hexLen(size)) }

// idDigits is how many base-36 digits any id takes (36^13 > 2^64).
const idDigits = 13

// putID writes the last len(b) (at most idDigits) digits of id in base
// 36 to b, with leading zeros.
func putID(b []byte, id uint64) {
	var d [idDigits]byte
	s := strconv.AppendUint(d[:0], id, 36)
	s = s[max(0, len(s)-len(b)):]
	n := len(b) - len(s)
	copy(b[n:], s)
	for i := range b[:n] {
		b[i] = '0'
	}
}

// putHex writes the last len(b) (at most 16) digits of seq in lower-case
// hexadecimal to b.
func putHex(b []byte, seq uint64) {
	var be [8]byte
	var h [16]byte
	binary.BigEndian.PutUint64(be[:], seq)
	hex.Encode(h[:], be[:])
	copy(b, h[16-len(b):])
}

// checkMsg reports whether b is message seq.
func checkMsg(b, tmpl []byte, seq uint64) bool {
	var h [16]byte
	n := hexLen(len(b))
	putHex(h[:n], seq)
	return bytes.Equal(b[:n], h[:n]) && bytes.Equal(b[n:], tmpl[n:])
}

// msgSeq returns the sequence number of b if b is exactly a message of
// the connection whose filler is tmpl. Only messages that carry the whole
// number (16 hexadecimal digits: 17 bytes and more) tell it; a shorter
// one carries its last digits only, which many messages share.
func msgSeq(b, tmpl []byte) (uint64, bool) {
	if hexLen(len(b)) < 16 {
		return 0, false
	}
	var be [8]byte
	if _, err := hex.Decode(be[:], b[:16]); err != nil {
		return 0, false
	}
	seq := binary.BigEndian.Uint64(be[:])
	return seq, checkMsg(b, tmpl, seq) // exactly, digits' case included
}

// maxConns bounds Config.Conns: 2^24 connections, more than a process
// can open to one address from one source address many times over.
const maxConns = 1 << 24

// The bounds of an open-loop rate: one message in about 11 days (an
// interval in nanoseconds far from overflowing) and one a picosecond.
const (
	minQPS = 1e-6
	maxQPS = 1e12
)

// Check returns the error Run would return for cfg before connecting:
// one matching ErrConfig for a configuration it cannot run, a CPU in CPUs
// that a loop may not be pinned to included (Check tries, on a thread of
// its own). The system's limits, ErrFDLimit and ErrPorts, Run alone
// checks.
func (cfg Config) Check() error { return cfg.check() }

func (cfg *Config) check() error {
	if cfg.Conns == 0 {
		cfg.Conns = 1
	}
	if cfg.Depth == 0 {
		cfg.Depth = 1
	}
	if cfg.MsgSize == 0 {
		cfg.MsgSize = 64
	}
	if cfg.Duration == 0 {
		cfg.Duration = 10 * time.Second
	}
	if cfg.Mode == "" {
		cfg.Mode = "echo"
	}
	if cfg.Loops == 0 {
		cfg.Loops = 1
	}
	if cfg.Spin == 0 {
		cfg.Spin = 30 * time.Microsecond
	}
	if cfg.Spin > maxSpin {
		// Before the engine's and the wait's checks: refused alike on
		// each engine, whatever the wait.
		return configErr("Spin", "spin %v over %v: a spin covers a sleep's wake-up delay before a send (microseconds with the loops' timer, about 2ms at most with Go's), and a loop whose sends are nearer than spin + 50µs polls without sleeping at all (wait spin)", cfg.Spin, maxSpin)
	}
	switch cfg.Engine {
	case "":
		cfg.Engine = defaultEngine
		if network, _ := cfg.network(); cfg.TLS != nil || network == "unix" {
			cfg.Engine = EngineNetio
		}
	case EngineTcpperf, EngineNetio:
	default:
		return configErr("Engine", "engine %q is neither %s nor %s", cfg.Engine, EngineTcpperf, EngineNetio)
	}
	if cfg.TLS != nil && cfg.Engine != EngineNetio {
		return configErr("Engine", "TLS needs engine %s", EngineNetio)
	}
	if network, addr := cfg.network(); network == "unix" && cfg.Engine != EngineNetio {
		return configErr("Engine", "a Unix socket needs engine %s", EngineNetio)
	} else if network == "unix" && addr == "" {
		return configErr("Addr", "address unix: names no socket path")
	} else if network == "unix" && cfg.TLS != nil && cfg.TLS.ServerName == "" && !cfg.TLS.InsecureSkipVerify {
		// crypto/tls refuses every handshake so: each connection failed,
		// ErrConnect, as if the server were at fault.
		return configErr("TLS", "TLS over a Unix socket: the socket has no host name for the certificate, so TLS needs a ServerName or InsecureSkipVerify")
	}
	if cfg.Conns > maxConns {
		return configErr("Conns", "%d connections: more than %d", cfg.Conns, maxConns)
	}
	onNetio := cfg.Engine == EngineNetio
	if onNetio && len(cfg.CPUs) > 0 && !netioPins {
		return configErr("CPUs", "engine netio pins loops to CPUs only on Linux (netio's portable loops pin nothing)")
	}
	if cfg.Wait == "" {
		cfg.Wait, cfg.waitChosen = cfg.chooseWait(), true
		if onNetio && cfg.Wait != WaitBatch {
			cfg.Wait = WaitSleep // netio's loops do not poll
		}
	}
	if err := cfg.Wait.check(); err != nil {
		return err
	}
	if !cfg.isOpen() && (cfg.Wait == WaitAdaptive || cfg.Wait == WaitSend || cfg.Wait == WaitBatch) {
		// They poll, or batch, only around sends, which closed loop does
		// not schedule: its loops sleep until responses come, on either
		// engine, and the result says so, as when the run chooses (with
		// the arrival and no batch window, as then).
		cfg.Wait, cfg.waitChosen = WaitSleep, true
		if cfg.Batch > 0 {
			cfg.Batch = 0 // not used; a negative one is still refused
		}
	}
	if onNetio && cfg.Wait != WaitSleep && cfg.Wait != WaitBatch {
		return configErr("Wait", "wait %s polls without sleeping, which engine netio cannot: use sleep or batch", cfg.Wait)
	}
	if cfg.Wait == WaitBatch && cfg.Batch == 0 {
		cfg.Batch = defaultBatch
	}
	if cfg.Arrival == "" {
		cfg.Arrival = ArrivalRead
		if cfg.Wait == WaitBatch && !onNetio {
			cfg.Arrival = ArrivalKernel
		}
	}
	if err := cfg.Arrival.check(); err != nil {
		return err
	}
	if onNetio && cfg.Arrival == ArrivalKernel {
		return configErr("Arrival", "arrival kernel needs the kernel's receive timestamps, which engine netio does not read")
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if cfg.DrainTimeout == 0 {
		cfg.DrainTimeout = 2 * time.Second
	}
	switch {
	case cfg.Addr == "":
		return configErr("Addr", "no address")
	case cfg.Conns < 0:
		return configErr("Conns", "negative count of connections, %d", cfg.Conns)
	case cfg.Depth < 0:
		return configErr("Depth", "negative depth, %d", cfg.Depth)
	case cfg.Loops < 0:
		return configErr("Loops", "negative count of loops, %d", cfg.Loops)
	case cfg.MsgSize < 1 || cfg.MsgSize > 1<<20:
		return configErr("MsgSize", "message size %d not in [1, 1 MiB]", cfg.MsgSize)
	case cfg.QPS == 0 && (cfg.Depth > maxInflight || int64(cfg.Depth)*int64(cfg.MsgSize) > maxDepthBytes):
		// A connection's Depth messages are queued at once: a deeper
		// one only counted write errors, or took the memory (and the
		// time) of its bytes, a GiB and more, before its loop could
		// read or stop.
		return configErr("Depth", "depth %d of %d-byte messages: more than %d messages or %d MiB in flight per connection", cfg.Depth, cfg.MsgSize, maxInflight, maxDepthBytes>>20)
	case cfg.QPS != 0 && !(cfg.QPS >= minQPS && cfg.QPS <= maxQPS): // NaN too
		return configErr("QPS", "rate %g not 0 or in [%g, %g]", cfg.QPS, minQPS, maxQPS)
	case cfg.Batch < 0 || (cfg.Batch > 0 && cfg.Wait != WaitBatch):
		return configErr("Batch", "batch %v without wait batch, or negative", cfg.Batch)
	case cfg.Batch > maxBatch:
		return configErr("Batch", "batch %v over %v: tcpperf's loops sleep through a window until a signal, and the Go runtime's preemption signals one every 10-20 ms, so a longer window would not be what ran", cfg.Batch, maxBatch)
	case cfg.Duration < 0:
		return configErr("Duration", "negative duration, %v", cfg.Duration)
	case cfg.Warmup < 0:
		return configErr("Warmup", "negative warm-up, %v", cfg.Warmup)
	case cfg.DrainTimeout < 0:
		return configErr("DrainTimeout", "negative drain, %v", cfg.DrainTimeout)
	case cfg.DialTimeout < 0:
		return configErr("DialTimeout", "negative dial timeout, %v", cfg.DialTimeout)
	case cfg.QPS != 0 && cfg.Duration.Seconds()*cfg.QPS < 1:
		// One send or none is not a rate: 1ns at 1000 msg/s gave 10⁹.
		return configErr("Duration", "duration %v shorter than one send interval at %g msg/s", cfg.Duration, cfg.QPS)
	case uint64(cfg.Warmup)+uint64(cfg.Duration)+uint64(cfg.DrainTimeout) > maxSpan:
		// The run's times are nanoseconds in an int64 from its start.
		return configErr("Duration", "warm-up %v, duration %v and drain %v add up to more than %v", cfg.Warmup, cfg.Duration, cfg.DrainTimeout, time.Duration(maxSpan))
	case cfg.Mode != "echo" && cfg.Mode != "line":
		return configErr("Mode", "mode %q is neither echo nor line", cfg.Mode)
	}
	for _, c := range cfg.CPUs {
		if c < 0 {
			return configErr("CPUs", "CPU %d", c)
		}
	}
	cfg.Loops = min(cfg.Loops, cfg.Conns)
	if cfg.Loops > maxLoops {
		return configErr("Loops", "%d loops, more than %d (each is an OS thread; the Go runtime allows 10,000)", cfg.Loops, maxLoops)
	}
	// A CPU the loops may not be pinned to, found before any connection
	// opens: tcpperf's own loops pin themselves once connected, and
	// failed after opening every connection to the server.
	return tryPins(cfg.CPUs[:min(len(cfg.CPUs), cfg.Loops)])
}

// maxSpan bounds a run's warm-up, duration and drain together, far from
// the overflow of its times (nanoseconds in an int64, about 292 years).
const maxSpan = uint64(100 * 365 * 24 * time.Hour)

// maxSpin bounds Config.Spin, on every engine and for every wait (a spin
// near the longest time.Duration overflowed Spin + 50µs, and the loops
// then never set a timer for their next send, so an adaptive run sent
// nothing and never ended, and a run left to choose its wait took batch
// at any rate). A spin is there to absorb a sleep's wake-up delay, far
// below this; longer only burns CPU: at 10ms a loop polls without
// sleeping from 100 msg/s up.
const maxSpin = 10 * time.Millisecond

// maxLoops is the most loops a run has: each locks an OS thread, and a
// program with GOMAXPROCS above them may run as many more (the runtime
// dies past 10,000 threads).
const maxLoops = 1024

// Run connects, runs the load described by cfg and returns the result. It
// stops early, with the results so far, when ctx is done; done while it
// connects, it returns an error wrapping ctx's, and no result. A run
// whose Config.HdrLog failed returns its result and an error matching
// ErrHdrLog.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	var d net.Dialer
	en := env{dial: d.DialContext, clock: sleep.System{}, realTime: true, cpu: processCPU, yield: runtime.Gosched}
	// The clock of wirespeed's own tests of the command, never a
	// program's: the package that carries it is internal.
	if e := tcpperfenv.From(ctx); e.Clock != nil {
		en.clock, en.realTime, en.drainQuiet = e.Clock, false, e.DrainQuiet
	}
	return runIn(ctx, cfg, en)
}

// chooseWait is the Wait a run's load needs, where Config.Wait is unset:
// see Config.Wait.
func (cfg *Config) chooseWait() Wait {
	loops := max(min(cfg.Loops, cfg.Conns), 1)
	switch {
	case cfg.Spin < 0 || cfg.QPS == 0:
		// Closed loop: no schedule, no send to poll for; the loops
		// sleep until responses come, whatever the wait.
		return WaitSleep
	case cfg.QPS > 0 && cfg.QPS/float64(loops) >= float64(time.Second)/float64(cfg.Spin+minNap):
		return WaitBatch
	}
	return WaitAdaptive
}

// waitString says how the loops waited and timed responses, for the
// interval log's comments.
func (cfg *Config) waitString(loops int) string {
	w := fmt.Sprintf("wait %s", cfg.Wait)
	switch cfg.Wait {
	case WaitBatch:
		w += fmt.Sprintf(" %v", cfg.Batch)
	case WaitSleep, WaitSpin:
	default:
		w += fmt.Sprintf(", spin %v", cfg.Spin)
	}
	w = fmt.Sprintf("%s, arrival %s, %d loops", w, cfg.Arrival, loops)
	if cfg.Engine == EngineNetio {
		w += ", engine netio"
	}
	if cfg.TLS != nil {
		w += ", TLS"
	}
	return w
}

func us(ns int64) string {
	switch {
	case ns < 10_000:
		return fmt.Sprintf("%.1fµs", float64(ns)/1e3)
	case ns < 10_000_000:
		return fmt.Sprintf("%.0fµs", float64(ns)/1e3)
	}
	return fmt.Sprintf("%.0fms", float64(ns)/1e6)
}

// percentiles fills res's latency fields from h (ns).
func percentiles(res *Result, h *hdrhistogram.Histogram) {
	q := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1e3 }
	res.P50, res.P90, res.P99, res.P999, res.P9999 = q(50), q(90), q(99), q(99.9), q(99.99)
	res.Max, res.Mean = float64(h.Max())/1e3, h.Mean()/1e3
	res.Received = h.TotalCount()
}

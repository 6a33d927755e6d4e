package smtpsource

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/internal/latrec"
	"github.com/wirespeed/wirespeed/internal/sleep"
	"github.com/wirespeed/wirespeed/internal/sockbuf"
)

type counters struct {
	started, delivered, failed, abandoned, rcptOK, conns atomic.Int64
	bytes, data                                          atomic.Int64
	connect, refused, io, protocol, reject, retries      atomic.Int64
	rcptSeq                                              atomic.Int64 // NumberRecipients' last number
	open, handshakes                                     atomic.Int64 // connections open now, TLS handshakes done (for Live)
}

type run struct {
	cfg Config
	// traceMu serializes the lines of Config.Trace, built in traceBuf.
	traceMu  sync.Mutex
	traceBuf []byte
	env      env
	tls      *tls.Config // nil: no TLS
	addr     string      // the address dialled, for errors
	// abort ends the run with a fatal error (see fatal).
	abort context.CancelCauseFunc
	tmpl  *template
	sched *schedule
	// stageRec gets each stage's delivered messages' latencies, for the
	// interval log (Config.Stages).
	stageRec []*recorder
	base     time.Time
	next     atomic.Int64 // the next message to start
	n        counters
	// rec gets the latencies of each phase as they are recorded, for the
	// interval log and the progress lines: every phase with HdrLog,
	// phaseMessage and phaseFailed otherwise.
	rec [numPhases]*recorder

	// The commands of a transaction, made once: "MAIL FROM:<...>\r\n" and
	// each "RCPT TO:<...>\r\n".
	mailCmd  []byte
	utf8     bool // From or To is not all ASCII (for SMTPUTF8)
	rcptCmds [][]byte

	counterMu sync.Mutex // serialises Config.Counter writes
	// dialMu lets one session at a time connect, as smtp-source does: a
	// burst of handshakes can fill a listener's accept queue, and the
	// connections past it are reset before the greeting.
	dialMu sync.Mutex

	// hmu guards the latency histograms, which sessions record into as
	// they go: one set for the run, not one for each session (a
	// histogram of 1ns to an hour at 3 digits is 264 KiB; a set of 12 for
	// each of 1,000 sessions was 3.1 GiB to allocate, 1 GB resident, and
	// made the run 4.5 times slower than Postfix's smtp-source).
	hmu    sync.Mutex
	phases [numPhases]*hdrhistogram.Histogram
	stages [][2]*hdrhistogram.Histogram // by stage: delivered, failed
	late   *hdrhistogram.Histogram

	// brokenOff says the run's stop broke off an exchange under way (a
	// session's fail came after its context ended): a message, an RSET,
	// a QUIT whose reply had not come, a connect. Without a fatal stop
	// (which leaves the run not whole anyway), only the caller's stop
	// ends that context.
	brokenOff atomic.Bool

	mu       sync.Mutex // guards the rest: sessions merge into it as they end
	replies  map[string]map[int]int64
	digests  []Digest
	firstErr string
	fatal    error // the error that ended the run, if one did
	pipe     bool
	chunk    bool
	tlsStats *TLSStats
}

// recordLate records how late a message was started (open loop).
func (r *run) recordLate(ns int64) {
	r.hmu.Lock()
	record(r.late, ns)
	r.hmu.Unlock()
}

// end ends the run with err (wrapping ErrStartTLS, ErrTLS or ErrAuth):
// sessions stop, and Run returns err with the result so far.
func (r *run) end(err error) {
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.mu.Unlock()
	r.abort(err)
}

func (r *run) now() int64 { return int64(r.env.clock.Now().Sub(r.base)) }

// dueBy returns how many messages the schedule starts before t (ns
// since the start), at most Messages.
func (r *run) dueBy(t int64) int64 {
	lo, hi := int64(0), int64(r.cfg.Messages) // at(lo-1) < t; at(hi) >= t or hi = Messages
	for lo < hi {
		mid := lo + (hi-lo)/2
		if at, _ := r.sched.at(mid); at < t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// cut returns t, or the end of Duration if t is past it: no message
// starts after that end, so no session need wait past it.
func (r *run) cut(t time.Time) time.Time {
	if end := r.base.Add(r.cfg.Duration); r.cfg.Duration > 0 && t.After(end) {
		return end
	}
	return t
}

// over reports whether t (ns since the start) is past Config.Duration, if
// set: no message starts then.
func (r *run) over(t int64) bool { return r.cfg.Duration > 0 && t >= int64(r.cfg.Duration) }

// Run sends cfg.Messages messages to the server at cfg.Addr over
// cfg.Sessions sessions and returns what happened. Refused commands,
// broken connections and the like are counted in the Result; the error
// is for a configuration Run cannot use, for a run in which no
// connection could be opened, and for one that a refused STARTTLS, TLS
// handshake or authentication stopped (ErrStartTLS, ErrTLS, ErrAuth),
// which comes with the result so far. It stops early, with the results
// so far, when ctx is done. A run whose Config.HdrLog failed returns its
// result and an error matching ErrHdrLog.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	return runIn(ctx, cfg, env{clock: sleep.System{}})
}

// dialer returns the dial function for cfg: net.Dialer's, with the socket
// buffers set before the connect when cfg.WindowSize asks.
func dialer(cfg *Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	if cfg.WindowSize > 0 {
		d.Control = sockbuf.Control(cfg.WindowSize)
	}
	return d.DialContext
}

func runIn(ctx context.Context, cfg Config, env env) (*Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if env.dial == nil {
		env.dial = dialer(&cfg)
	}
	tc, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	parent := ctx // its end is an interruption; a fatal stop aborts ctx
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	_, addr := network(cfg.Addr, cfg.IPVersion, cfg.defaultPort())
	r := &run{cfg: cfg, env: env, tls: tc, addr: addr, abort: abort, late: newHist(), replies: map[string]map[int]int64{}}
	for i := range r.phases {
		r.phases[i] = newHist()
		if cfg.HdrLog != nil || i == phaseMessage || i == phaseFailed {
			r.rec[i] = newRecorder()
		}
	}
	r.sched = newSchedule(&r.cfg)
	if cfg.Live != nil {
		cfg.Live.start(r)
	}
	for range cfg.Stages {
		r.stages = append(r.stages, [2]*hdrhistogram.Histogram{newHist(), newHist()})
		r.stageRec = append(r.stageRec, newRecorder())
	}
	r.utf8 = !isASCII(cfg.From) || !isASCII(cfg.To)
	r.mailCmd = []byte("MAIL FROM:<" + cfg.From + ">\r\n")
	for i := cfg.Recipients; i >= 1; i-- {
		to := cfg.To
		if i > 1 {
			to = strconv.Itoa(i) + to
		}
		r.rcptCmds = append(r.rcptCmds, []byte("RCPT TO:<"+to+">\r\n"))
	}
	clk := env.clock
	r.base = clk.Now()
	// When the caller's context ended, for done: a run whose Duration
	// passed while its sessions wound down was still cut short.
	var stopped atomic.Int64
	stopped.Store(-1)
	defer context.AfterFunc(parent, func() { stopped.Store(r.now()) })()
	r.tmpl = newTemplate(&r.cfg, r.base)

	var hlog *hdrhistogram.HistogramLogWriter
	var held *heldWriter
	if cfg.HdrLog != nil {
		held = newHeldWriter(cfg.HdrLog)
		hlog = hdrhistogram.NewHistogramLogWriter(held)
		startMs := r.base.UnixMilli()
		hlog.SetBaseTime(startMs)
		hlog.OutputLogFormatVersion()
		hlog.OutputComment("[smtpsource latencies in nanoseconds: delivered messages untagged, each phase tagged with its name]")
		hlog.OutputStartTime(startMs)
		hlog.OutputBaseTime(startMs)
		hlog.OutputLegend()
	}

	var wg sync.WaitGroup
	for i := 0; i < min(cfg.Sessions, cfg.Messages); i++ { // no session without a message
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newSession(r)
			s.run(ctx)
			s.merge()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	// Seconds count from the run's base, not from when this goroutine
	// got here or last woke: the sessions may have moved a fake clock
	// past the first already, and a late wake-up does not shift the rest.
	tick := clk.At(r.base.Add(time.Second))
	nextTick := func() <-chan time.Time {
		return clk.At(r.base.Add(time.Duration(r.now()/int64(time.Second)+1) * time.Second))
	}
	lastTick := int64(0)
	var lastDone int64
	report := func() {
		now := r.now()
		if held != nil && r.n.conns.Load() > 0 {
			held.release()
		}
		var msg *hdrhistogram.Histogram
		for i, rec := range r.rec {
			if rec == nil {
				continue
			}
			h := rec.interval()
			if i == phaseMessage {
				msg = h
			}
			if hlog == nil || i != phaseMessage && h.TotalCount() == 0 {
				continue
			}
			h.SetStartTimeMs(r.base.Add(time.Duration(lastTick)).UnixMilli())
			h.SetEndTimeMs(r.base.Add(time.Duration(now)).UnixMilli())
			h.SetTag("")
			if i != phaseMessage {
				h.SetTag(phaseNames[i])
			}
			hlog.OutputIntervalHistogram(h)
		}
		for i, rec := range r.stageRec {
			h := rec.interval()
			if hlog == nil || h.TotalCount() == 0 {
				continue
			}
			h.SetStartTimeMs(r.base.Add(time.Duration(lastTick)).UnixMilli())
			h.SetEndTimeMs(r.base.Add(time.Duration(now)).UnixMilli())
			h.SetTag("stage" + strconv.Itoa(i+1))
			hlog.OutputIntervalHistogram(h)
		}
		if cfg.Progress != nil {
			secs := float64(now-lastTick) / 1e9
			d := r.n.delivered.Load()
			if r.stages != nil {
				_, i := r.sched.at(r.next.Load())
				fmt.Fprintf(cfg.Progress, "stage %d  ", i+1)
			}
			p50, p99, pmax := "-", "-", "-" // no message delivered: no latency, not 0
			if msg.TotalCount() > 0 {
				p50, p99, pmax = us(msg.ValueAtQuantile(50)), us(msg.ValueAtQuantile(99)), us(msg.Max())
			}
			fmt.Fprintf(cfg.Progress, "%6.1fs  delivered %8d  %8s msg/s  p50 %s  p99 %s  max %s  failed %d  errors %d\n",
				float64(now)/1e9, d, rate(d-lastDone, secs), p50, p99, pmax, r.n.failed.Load(), r.errors())
			lastDone = d
		}
		lastTick = now
	}
wait:
	for {
		select {
		case <-tick:
			report()
			tick = nextTick()
		case <-done:
			select {
			case <-tick: // a second that ended before the run did has its line
				report()
			default:
			}
			break wait
		}
	}
	end := r.now()
	if hlog != nil || cfg.Progress != nil {
		report()
	}
	if r.n.conns.Load() == 0 && r.n.connect.Load() > 0 && r.fatal == nil {
		return nil, fmt.Errorf("%w to %s: %s", ErrConnect, cfg.Addr, r.firstErr)
	}
	if cfg.Counter != nil {
		// As Postfix's smtp-source ends a run it did not abort, with
		// no message completed too (an empty count line); not one
		// that opened no connection, where it exits fatally.
		fmt.Fprintln(cfg.Counter)
	}
	// A context that ended once the messages were done (while the
	// sessions said QUIT) left the measurement whole, Missed and
	// Unscheduled counted; the run was still interrupted if an exchange
	// was broken off (a QUIT's reply unread, which counts as any other).
	at := end
	if t := stopped.Load(); t >= 0 {
		at = t
	}
	whole := ctx.Err() == nil || r.fatal == nil && r.done(at)
	res := r.result(float64(end)/1e9, whole)
	res.Interrupted = parent.Err() != nil && (!whole || r.brokenOff.Load())
	if held != nil && held.log.Err != nil {
		// The measurement is whole; the log is cut short.
		logErr := fmt.Errorf("%w: %w", ErrHdrLog, held.log.Err)
		if r.fatal != nil {
			return res, errors.Join(r.fatal, logErr)
		}
		return res, logErr
	}
	return res, r.fatal
}

// done reports whether, at t, the run had done its work: every message
// started has its outcome (none abandoned), and none that was due is left
// to start, or the Duration is over.
func (r *run) done(t int64) bool {
	if r.n.abandoned.Load() > 0 {
		return false
	}
	if r.over(t) {
		return true
	}
	if r.cfg.Messages == math.MaxInt {
		return false // unlimited: only the Duration ends the run
	}
	due := int64(r.cfg.Messages)
	if r.cfg.openLoop() {
		due = r.dueBy(never)
	}
	return r.n.started.Load() >= due
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

func (r *run) errors() int64 {
	return r.n.connect.Load() + r.n.refused.Load() + r.n.io.Load() + r.n.protocol.Load() + r.n.reject.Load()
}

// result is the run's Result, after secs seconds; whole says ctx did
// not cut the run short.
func (r *run) result(secs float64, whole bool) *Result {
	cfg := &r.cfg
	res := &Result{
		Proto: "smtp", Sessions: cfg.Sessions, Messages: cfg.Messages, Length: cfg.Length, LengthMax: cfg.LengthMax, Recipients: cfg.Recipients,
		TargetQPS: cfg.QPS, Pipelining: r.pipe, Chunking: r.chunk, DurationS: secs,
		Started: r.n.started.Load(), Delivered: r.n.delivered.Load(), Failed: r.n.failed.Load(), Abandoned: r.n.abandoned.Load(), RcptOK: r.n.rcptOK.Load(),
		Connections: r.n.conns.Load(), Bytes: r.n.bytes.Load(),
		Replies: r.replies, Lateness: latency(r.late),
		ConnectRetries: r.n.retries.Load(), ConnectErrors: r.n.connect.Load(), ConnectRefusals: r.n.refused.Load(), IOErrors: r.n.io.Load(), ProtocolErrors: r.n.protocol.Load(), Rejections: r.n.reject.Load(),
		FirstError: r.firstErr, Digests: r.digests, TLS: r.tlsStats, AuthMech: cfg.AuthMech,
	}
	if cfg.LMTP {
		res.Proto = "lmtp"
	}
	switch {
	case cfg.TLS:
		res.TLSMode = "starttls"
	case cfg.TLSImplicit:
		res.TLSMode = "implicit"
	}
	if !cfg.openLoop() {
		res.Lateness = nil
	}
	if cfg.Messages == math.MaxInt {
		res.Messages = 0 // unlimited: Duration ended the run
	}
	res.DurationLimitS = cfg.Duration.Seconds()
	if cfg.openLoop() && cfg.Duration > 0 && whole {
		res.Missed = max(0, r.dueBy(int64(cfg.Duration))-res.Started)
	}
	if cfg.openLoop() && cfg.Messages != math.MaxInt && whole {
		res.Unscheduled = int64(cfg.Messages) - r.dueBy(never)
	}
	for i, st := range r.sched.stages {
		res.Stages = append(res.Stages, StageResult{From: st.From, To: st.To, StartS: float64(st.start) / 1e9, DurationS: st.Duration.Seconds(),
			Message: latency(r.stages[i][0]), Failed: latency(r.stages[i][1])})
	}
	for i, l := range res.Phases.byPhase() {
		*l = latency(r.phases[i])
	}
	if secs > 0 {
		res.MsgPerS = float64(res.Delivered) / secs
		res.MBPerS = float64(res.Bytes) / 1e6 / secs
	}
	res.Errors = r.errors()
	return res
}

// A heldWriter holds what is written to it until release, and then writes
// it and the rest through: the interval log reaches Config.HdrLog only
// once a connection has opened, so that a run that opens none (ErrConnect)
// writes nothing there. It is written by one goroutine.
type heldWriter struct {
	log      latrec.LogWriter // Config.HdrLog, and its first error
	buf      []byte
	released bool
}

func newHeldWriter(w io.Writer) *heldWriter { return &heldWriter{log: latrec.LogWriter{W: w}} }

func (h *heldWriter) Write(p []byte) (int, error) {
	if !h.released {
		h.buf = append(h.buf, p...)
		return len(p), nil
	}
	return h.log.Write(p)
}

// release writes what was held, and lets the later writes through.
func (h *heldWriter) release() {
	if !h.released {
		h.released = true
		h.log.Write(h.buf)
		h.buf = nil
	}
}

// rate is n over secs seconds for a progress line, '-' over none (the
// last line's rest of a second may take no time on a fake clock).
func rate(n int64, secs float64) string {
	if secs <= 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(n)/secs, 'f', 0, 64)
}

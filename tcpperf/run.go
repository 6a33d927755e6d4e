package tcpperf

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/internal/latrec"
	"github.com/wirespeed/wirespeed/netio"
)

type run struct {
	cfg        Config
	env        env
	base       time.Time
	start      int64 // ns since base: first intended send
	measure    int64 // start of the measurement
	end        int64 // end of sending
	step       float64
	fds        []int // connected sockets, until handed to the loops
	loops      []*loop
	maxPend    int    // most bytes pending per connection
	connectErr string // connect failures, if some connections opened
	connects   int64  // connect failures
	connected  int    // connections opened
	// stopping: send no more (the schedule is over, the closed loop's time
	// is up, or ctx is done). quit: the loops return.
	stopping, quit atomic.Bool
	interrupted    atomic.Bool   // ctx ended the run: what is outstanding at the quit is abandoned
	schedDone      chan struct{} // one token per loop whose schedule is over
	drained        chan struct{} // one token per loop with nothing in flight once stopping
}

// now is the time since base. The system clock's is read with
// time.Since, which reads only the monotonic clock (time.Now reads the
// wall clock too, and clock reads are a tenth of a loop's time at 60k
// messages a second).
func (r *run) now() int64 {
	if r.env.realTime {
		return int64(time.Since(r.base))
	}
	return int64(r.env.clock.Now().Sub(r.base))
}

// sendCheck: a loop sending the messages due looks at the clock and at
// stopping every sendCheck messages.
const sendCheck = 1024

// cutoff is when a loop stops sending what its schedule had due: a loop
// behind it (a late wake-up, a busy host) sends late for up to
// DrainTimeout after the end, as long as the run waits for responses.
// Messages not sent by then are missed.
func (r *run) cutoff() int64 { return r.end + int64(r.cfg.DrainTimeout) }

// dueCount returns how many messages loop l's schedule sends before the
// end: its k with due(l, k) < end.
func (r *run) dueCount(l int) int64 { return r.countBefore(l, r.end) }

// countBefore returns how many messages of loop l's schedule are due
// before t: its k with due(l, k) < t.
func (r *run) countBefore(l int, t int64) int64 {
	lo, hi := int64(0), int64(float64(max(t-r.start, 0))/r.step/float64(len(r.loops)))+2
	for lo < hi { // due(l, lo-1) < t <= due(l, hi)
		mid := lo + (hi-lo)/2
		if r.due(l, mid) < t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// missedFrom returns how many messages loop l's schedule has due in the
// measurement from its message k on: those it misses when it stops
// there. The warm-up's are not counted, as they are not among the sent.
func (r *run) missedFrom(l int, k int64) int64 {
	return max(r.dueCount(l)-max(k, r.countBefore(l, r.measure)), 0)
}

func (r *run) measured(t int64) bool { return t >= r.measure && t < r.end }

// due returns the intended send time of message k of loop l: the run's
// schedule is one message every 1/QPS, dealt to the loops in turn.
func (r *run) due(l int, k int64) int64 {
	return r.start + int64(float64(k*int64(len(r.loops))+int64(l))*r.step)
}

// An engine is what serves a run's connections once they are open: begin
// starts the loops on the run's clock (r.base set), wake has them look at
// stopping, quit ends them (r.quit set) and waits, and close releases
// what is left.
type engine struct {
	begin, wake, quit, close func()
}

func runIn(ctx context.Context, cfg Config, env env) (*Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	// Each loop holds an epoll, an eventfd and a timerfd (netio's, and its
	// scheduling connection's two ends); the dials dup their sockets (64
	// at a time); the rest is the runtime's.
	perLoop := uint64(3)
	if cfg.Engine == EngineNetio {
		perLoop = 6
	}
	if err := ensureFDs(uint64(cfg.Conns) + perLoop*uint64(cfg.Loops) + 128); err != nil {
		return nil, err
	}
	// A Unix socket's connections take no ephemeral port.
	if network, _ := cfg.network(); network == "tcp" {
		if err := ensurePorts(cfg.Conns); err != nil {
			return nil, err
		}
	}
	if !env.realTime {
		cfg.Arrival = ArrivalRead // the kernel's timestamps are on the real clock
	}
	clk := env.clock
	r := &run{cfg: cfg, env: env}
	r.maxPend = minMaxPending
	if !cfg.isOpen() {
		// Closed loop queues a connection's Depth messages at once (64
		// MiB at most, see check); open loop's Depth is unused, and
		// raised the bound to any size (a GiB waited for a server that
		// did not read, at Depth 1000 of 1 MiB).
		r.maxPend = max(minMaxPending, cfg.MsgSize*cfg.Depth)
	}
	start := r.startLoops
	if cfg.Engine == EngineNetio {
		start = r.startNetio
	}
	eng, err := start(ctx)
	if err != nil {
		return nil, err
	}
	defer eng.close()
	cfg = r.cfg
	if r.connectErr != "" && cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "%s; going on with %d\n", r.connectErr, r.connected)
	}
	r.schedDone = make(chan struct{}, len(r.loops))
	r.drained = make(chan struct{}, len(r.loops))
	if cfg.QPS > 0 {
		r.step = 1e9 / cfg.QPS
	}

	r.base = clk.Now()
	if cfg.QPS > 0 {
		r.start = int64(10 * time.Millisecond) // let the loops settle
	}
	r.measure = r.start + int64(cfg.Warmup)
	r.end = r.measure + int64(cfg.Duration)
	var hlog *hdrhistogram.HistogramLogWriter
	var logw *latrec.LogWriter // HdrLog, and its first error
	if cfg.HdrLog != nil {
		logw = &latrec.LogWriter{W: cfg.HdrLog}
		hlog = newLogWriter(logw, r.base.Add(time.Duration(r.measure)))
		hlog.OutputComment(fmt.Sprintf("[tcpperf %s]", cfg.waitString(len(r.loops))))
	}
	cpu0, wall0 := env.cpu(), time.Now()
	measureStart := clk.At(r.base.Add(time.Duration(r.measure)))
	// Read before the loops start: on a fake clock they move it at once.
	lastTick := r.now()
	eng.begin()

	// Once a second: progress and the interval log.
	lat, late := newHist(), newHist()           // this interval's
	totalLat, totalLate := newHist(), newHist() // the run's
	// Seconds count from lastTick's first reading, not from when this
	// goroutine got here or last woke: the loops may have moved a fake
	// clock on already, and a late wake-up does not shift the rest.
	origin := lastTick
	nextTick := func(now int64) <-chan time.Time {
		return clk.At(r.base.Add(time.Duration(origin + (now-origin)/int64(time.Second)*int64(time.Second) + int64(time.Second))))
	}
	tick := nextTick(origin)
	var lastSent, lastRecv int64
	lastCPU, lastWall := cpu0, wall0
	final := false        // the last report, after the drain
	var finalEnd int64    // the end of the measurement, for the last report
	var measuredEnd int64 // and the end of the measurement's time
	report := func() {
		now := r.now()
		lat.Reset()
		late.Reset()
		for _, l := range r.loops {
			lat.Merge(l.lat.Interval())
			late.Merge(l.late.Interval())
		}
		totalLat.Merge(lat)
		totalLate.Merge(late)
		// The intervals span the measurement: responses that come in the
		// drain, after its end, are its messages' and go into the last
		// interval, which ends with it (or with the latest send of its
		// messages, if a loop behind its schedule sent them late, in the
		// drain: Result.SendSpanS), so that a merge's span and rate are
		// the run's (in open loop, to the end of the measurement, however
		// early the last send was due: the last interval may have no
		// values).
		end := min(now, r.end)
		if final {
			end = finalEnd
		}
		if hlog != nil && (end > max(r.measure, lastTick) || lat.TotalCount() > 0) {
			start := min(max(lastTick, r.measure), end)
			lat.SetStartTimeMs(r.base.Add(time.Duration(start)).UnixMilli())
			lat.SetEndTimeMs(r.base.Add(time.Duration(end)).UnixMilli())
			hlog.OutputIntervalHistogram(lat)
		}
		if cfg.Progress != nil {
			secs := float64(now-lastTick) / 1e9
			sent, recv := r.sum(func(n *counters) *atomic.Int64 { return &n.sent }), r.sum(func(n *counters) *atomic.Int64 { return &n.answered })
			cpu, wall := env.cpu(), time.Now()
			phase := ""
			switch {
			case final:
				phase = " (the rest, to the end of the drain)"
			case now < r.measure:
				phase = " (warmup)"
			}
			// An empty histogram's quantiles are no latency, not 0.
			q := func(h *hdrhistogram.Histogram, p float64) string {
				switch {
				case h.TotalCount() == 0:
					return "-"
				case p == 100:
					return us(h.Max())
				}
				return us(h.ValueAtQuantile(p))
			}
			errs := r.errors()
			if final && !r.interrupted.Load() {
				// The loops have returned: what the measurement still
				// has in flight is unanswered, as the result counts it.
				for _, l := range r.loops {
					errs += l.minflight + l.heldAtEnd(measuredEnd)
				}
			}
			fmt.Fprintf(cfg.Progress, "%6.1fs  sent %8.0f/s  recv %8.0f/s  p50 %s  p99 %s  max %s  lateness p99 %s  cpu %3.0f%%  errors %d%s\n",
				float64(now-r.start)/1e9, float64(sent-lastSent)/secs, float64(recv-lastRecv)/secs,
				q(lat, 50), q(lat, 99), q(lat, 100), q(late, 99),
				100*float64(cpu-lastCPU)/float64(max(wall.Sub(lastWall), 1)), errs, phase)
			lastSent, lastRecv, lastCPU, lastWall = sent, recv, cpu, wall
		}
		lastTick = now
	}
	// At the end's instant, not after a duration from a now read here:
	// a fake clock the loops move may be past that now already, and stop
	// at the end (the closed loop stops sending there), short of it.
	closedLoopEnd := clk.At(r.base.Add(time.Duration(r.end)))
	schedules := 0
wait:
	for {
		select {
		case <-measureStart:
			cpu0, wall0 = env.cpu(), time.Now()
		case <-tick:
			report()
			tick = nextTick(lastTick)
		case <-r.schedDone:
			if schedules++; schedules == len(r.loops) {
				break wait
			}
		case <-closedLoopEnd:
			if cfg.QPS == 0 {
				break wait
			}
		case <-ctx.Done():
			break wait
		}
	}
	select {
	case <-measureStart: // a measurement without time: the end is the start
		cpu0, wall0 = env.cpu(), time.Now()
	default:
	}
	r.stopping.Store(true)
	eng.wake()

	// Wait for the outstanding responses: each loop sends a token once it
	// has none.
	drainEnd := clk.After(cfg.DrainTimeout)
drain:
	for range r.loops {
		select {
		case <-r.drained:
		case <-drainEnd:
			break drain
		case <-ctx.Done():
			break drain
		}
	}
	cpu1, wall1 := env.cpu(), time.Now()
	measuredEnd = min(r.now(), r.end)
	if cfg.QPS > 0 && ctx.Err() == nil {
		measuredEnd = r.end // the whole schedule went out
	}
	interrupted := ctx.Err() != nil
	r.interrupted.Store(interrupted)
	r.quit.Store(true)
	eng.quit()
	// The measurement's messages went out until the later of its end
	// and the latest send of one of them: a loop behind its schedule
	// sends them late, in the drain, and the rate it achieved is over
	// that span, not the window (Result.SendSpanS). The loops have
	// returned: their last sends are read whole.
	spanEnd := measuredEnd
	if measuredEnd > r.measure {
		for _, l := range r.loops {
			spanEnd = max(spanEnd, l.n.lastSend.Load())
		}
	}
	// The last interval of the log ends there too, so that a merge of
	// the log spans, and rates, as the run.
	final, finalEnd = true, spanEnd
	report()

	secs := float64(max(measuredEnd-r.measure, 0)) / 1e9 // 0: stopped in the warm-up
	span := float64(max(spanEnd-r.measure, 0)) / 1e9
	res := &Result{
		Mode: cfg.Mode, Engine: cfg.Engine, TLS: cfg.TLS != nil, Conns: cfg.Conns, Connected: cfg.Conns - int(r.connects), Loops: len(r.loops), Wait: cfg.Wait, WaitChosen: cfg.waitChosen, Arrival: cfg.Arrival, TargetQPS: cfg.QPS,
		MsgSize: cfg.MsgSize, DurationS: secs, SendSpanS: span,
		ConnectFailures: r.connects, ConnectError: r.connectErr,
	}
	if cfg.Wait == WaitBatch {
		res.BatchUs = float64(cfg.Batch) / 1e3
	}
	percentiles(res, totalLat)
	res.LatenessP50 = float64(totalLate.ValueAtQuantile(50)) / 1e3
	res.LatenessP99 = float64(totalLate.ValueAtQuantile(99)) / 1e3
	res.LatenessMax = float64(totalLate.Max()) / 1e3
	for _, l := range r.loops {
		res.Sent += l.n.msent.Load()
		res.SentAll += l.n.sent.Load()
		res.Unsent += l.n.unsent.Load()
		res.WriteErrors += l.n.write.Load()
		res.ReadErrors += l.n.read.Load()
		res.ContentErrors += l.n.content.Load()
		res.Unanswered += l.n.lost.Load()
		res.Abandoned += l.n.abandoned.Load()
		// In flight at the end, of the measurement; a closed loop's
		// warm-up messages still in flight when it began are the
		// measurement's too (see warmupHeld).
		held := l.heldAtEnd(measuredEnd)
		res.Sent += held
		if interrupted {
			res.Abandoned += l.minflight + held // not waited for: no fault of the server's
		} else {
			res.Unanswered += l.minflight + held
		}
		res.Missed += l.n.missed.Load()
	}
	res.Interrupted = interrupted
	res.Errors = res.ConnectFailures + res.WriteErrors + res.ReadErrors + res.ContentErrors + res.Unanswered + res.Unsent
	if cfg.QPS == 0 {
		res.Depth = cfg.Depth
	}
	if span > 0 {
		res.AchievedQPS = float64(res.Received) / span
	}
	due := r.sum(func(n *counters) *atomic.Int64 { return &n.due })
	for _, l := range r.loops {
		due += l.heldAtEnd(measuredEnd)
	}
	if due > 0 {
		res.CPUPerMsg = float64(cpu1-cpu0) / 1e3 / float64(due)
	}
	if wall := wall1.Sub(wall0); wall > 0 && secs > 0 {
		// Stopped before the measurement began, the span was the
		// warm-up's, or a few microseconds (209% of one core once): no
		// figure, as no percentile.
		res.CPUUtil = float64(cpu1-cpu0) / float64(wall)
	}
	// The loops count idle time from the start of the measurement; they
	// have all returned, so the clock is where they left it.
	if span := r.now() - r.measure; span > 0 && (cfg.Engine == EngineTcpperf || !env.realTime) {
		idle := r.sum(func(n *counters) *atomic.Int64 { return &n.idle })
		res.LoopBusy = min(max(1-float64(idle)/float64(span*int64(len(r.loops))), 0), 1)
	}
	switch {
	case hlog == nil:
	case secs == 0:
		// As the text and the JSON: no figures, not 0.
		hlog.OutputComment("[tcpperf tool CPU - (nothing measured)]")
	default:
		hlog.OutputComment(fmt.Sprintf("[tcpperf tool CPU %.2f µs/msg, %.0f%% of one core]", res.CPUPerMsg, 100*res.CPUUtil))
	}
	if logw != nil && logw.Err != nil {
		// The measurement is whole; the log is cut short.
		return res, fmt.Errorf("%w: %w", ErrHdrLog, logw.Err)
	}
	return res, nil
}

// sum adds one counter over the loops.
func (r *run) sum(f func(*counters) *atomic.Int64) int64 {
	var n int64
	for _, l := range r.loops {
		n += f(&l.n).Load()
	}
	return n
}

// errors is the errors counted so far, of the kinds Result.Errors adds
// (the messages in flight not among them: not yet unanswered).
func (r *run) errors() int64 {
	return r.connects + r.sum(func(n *counters) *atomic.Int64 { return &n.write }) +
		r.sum(func(n *counters) *atomic.Int64 { return &n.read }) + r.sum(func(n *counters) *atomic.Int64 { return &n.content }) +
		r.sum(func(n *counters) *atomic.Int64 { return &n.lost }) + r.sum(func(n *counters) *atomic.Int64 { return &n.unsent })
}

// connect opens cfg.Conns connections, 64 at a time, with dial (i is the
// connection's number), and counts those opened and the failures.
func (r *run) connect(ctx context.Context, dial func(ctx context.Context, i int) error) error {
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range r.cfg.Conns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			dctx, cancel := context.WithTimeout(ctx, r.cfg.DialTimeout)
			err := dial(dctx, i)
			cancel()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				r.connects++
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			r.connected++
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		// Stopped while connecting: the dials cut short are not the
		// server's failures, and there is no run to report.
		return fmt.Errorf("tcpperf: interrupted while connecting, %d of %d connections open: %w", r.connected, r.cfg.Conns, err)
	}
	hint := ""
	switch {
	case fdLimit(firstErr):
		hint = " (raise the file descriptor limit)"
	case outOfPorts(firstErr):
		hint = " (out of ephemeral ports: widen net.ipv4.ip_local_port_range, wait for TIME_WAIT to pass, or use fewer connections: Config.Conns, -conns)"
	case errors.Is(firstErr, netio.ErrHandshake) && !errors.As(firstErr, new(*tls.CertificateVerificationError)) && !errors.As(firstErr, new(tls.AlertError)):
		// Not for a certificate refused nor an alert the server sent:
		// those come from a server that speaks TLS.
		hint = " (does the server speak TLS? wirespeed serve does with -tls)"
	}
	if r.connected == 0 {
		switch {
		case fdLimit(firstErr):
			return fmt.Errorf("%w: %w%s", ErrFDLimit, firstErr, hint)
		case outOfPorts(firstErr):
			return fmt.Errorf("%w: %w%s", ErrPorts, firstErr, hint)
		}
		return fmt.Errorf("%w to %s: %w%s", ErrConnect, r.cfg.Addr, firstErr, hint)
	}
	if firstErr != nil {
		r.connectErr = fmt.Sprintf("%d of %d connections failed, the first with: %v%s", r.cfg.Conns-r.connected, r.cfg.Conns, firstErr, hint)
	}
	return nil
}

package tcpperf

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/internal/sleep"
)

// Errors returned by Run.
var (
	ErrConfig  = errors.New("tcpperf: bad configuration")
	ErrFDLimit = errors.New("tcpperf: not enough file descriptors")
	ErrConnect = errors.New("tcpperf: no connection could be opened")
)

// Config describes a run. Zero fields take the defaults noted.
type Config struct {
	Addr     string
	Conns    int           // connections (default 1)
	QPS      float64       // messages per second over all connections; 0 = closed loop
	Depth    int           // closed loop: messages in flight per connection (default 1)
	MsgSize  int           // bytes per message, "\n" included (default 64, at least 1)
	Duration time.Duration // measured time (default 10s)
	Warmup   time.Duration // time before the measurement, not recorded
	Mode     string        // "echo" (default) or "line"
	Pacers   int           // open loop: pacer goroutines (default 1, at most the connections opened)
	// Spin is how long before each send a pacer stops sleeping and spins
	// (default 30µs). Larger is more punctual and burns more CPU.
	Spin         time.Duration
	DialTimeout  time.Duration // default 5s
	DrainTimeout time.Duration // wait for outstanding responses at the end (default 2s)
	Progress     io.Writer     // one line per second; nil for none
	HdrLog       io.Writer     // HdrHistogram interval log of latencies (ns); nil for none
}

// Result is the outcome of a run. Latencies are in microseconds.
type Result struct {
	Mode            string  `json:"mode"`
	Conns           int     `json:"conns"`     // requested
	Connected       int     `json:"connected"` // opened (Conns - ConnectFailures)
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
	Sent            int64   `json:"sent"`     // messages written or queued for writing
	Received        int64   `json:"received"` // responses recorded in the measurement
	Errors          int64   `json:"errors"`   // sum of the kinds below
	ConnectFailures int64   `json:"connect_failures"`
	ConnectError    string  `json:"connect_error,omitempty"` // the first failure, when some connections opened
	WriteErrors     int64   `json:"write_errors"`            // failed connections, and messages not sent because too many were waiting
	ReadErrors      int64   `json:"read_errors"`
	ContentErrors   int64   `json:"content_errors"`
	Unanswered      int64   `json:"unanswered"` // sent, no response by the end of the drain
	LatenessP50     float64 `json:"send_lateness_p50_us"`
	LatenessP99     float64 `json:"send_lateness_p99_us"`
	LatenessMax     float64 `json:"send_lateness_max_us"`
}

const (
	histMax     = int64(time.Hour)
	maxInflight = 1 << 20 // per connection
	// minMaxPending is the least a connection may hold unsent (open loop:
	// past it, messages are counted as write errors; closed loop holds at
	// most Depth messages).
	minMaxPending = 4 << 20
)

// recorder is a histogram written by many goroutines and read per interval.
type recorder struct {
	mu         sync.Mutex
	cur, spare *hdrhistogram.Histogram
	total      *hdrhistogram.Histogram
}

func newRecorder() *recorder {
	return &recorder{cur: newHist(), spare: newHist(), total: newHist()}
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, histMax, 3) }

func (r *recorder) record(ns int64) {
	r.mu.Lock()
	r.recordLocked(ns)
	r.mu.Unlock()
}

// recordLocked records ns, clamped to the histogram's range; r.mu is held
// (a reader records all the responses of one read under one lock).
func (r *recorder) recordLocked(ns int64) {
	r.cur.RecordValue(min(max(ns, 1), histMax))
}

// interval returns the values recorded since the last call, after adding
// them to the total; the histogram is valid until the next call.
func (r *recorder) interval() *hdrhistogram.Histogram {
	r.spare.Reset()
	r.mu.Lock()
	h := r.cur
	r.cur = r.spare
	r.mu.Unlock()
	r.spare = h
	r.total.Merge(h)
	return h
}

type counters struct {
	sent, received, write, read, content, unanswered, connect atomic.Int64
	inflight                                                  atomic.Int64
}

// A conn is one client connection and the send times of its outstanding
// messages, oldest first.
//
// Sending never blocks: a send appends its messages to pending and, unless a
// flush goroutine owns the socket, tries one non-blocking write; whatever
// the kernel did not take is left to a flush goroutine started for the
// purpose, which writes (blocking) until pending is empty and then exits.
// So neither the pacers nor the readers (which send in closed loop) ever
// wait for a peer that does not read.
type conn struct {
	nc   net.Conn
	id   int
	tmpl []byte // message filler

	wmu      sync.Mutex // serialises sends; guards the fields up to mu
	pending  []byte     // accepted messages not yet handed to the kernel
	spare    []byte     // the flush goroutine's buffer, swapped with pending
	writing  int        // bytes in the flush goroutine's write
	flushing bool       // a flush goroutine owns the socket
	raw      rawWriter  // non-blocking write, if the platform has one

	mu   sync.Mutex // guards the rest
	q    []int64    // send times (ns since base), q[qh:] outstanding
	qh   int
	sent uint64 // next sequence number to send
	dead bool
}

func (c *conn) push(t int64) bool {
	if len(c.q)-c.qh >= maxInflight {
		return false
	}
	if c.qh > 0 && len(c.q) == cap(c.q) {
		n := copy(c.q, c.q[c.qh:])
		c.q, c.qh = c.q[:n], 0
	}
	c.q = append(c.q, t)
	return true
}

func (c *conn) pop() (int64, bool) {
	if c.qh == len(c.q) {
		return 0, false
	}
	t := c.q[c.qh]
	c.qh++
	if c.qh == len(c.q) {
		c.q, c.qh = c.q[:0], 0
	}
	return t, true
}

// msgTemplate is the filler of a connection's messages, "\n" at the end.
func msgTemplate(id, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = 'a' + byte((i+id)%26)
	}
	b[size-1] = '\n'
	return b
}

// hexLen is how many leading bytes of a message carry its sequence number.
func hexLen(size int) int { return min(16, size-1) }

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

type run struct {
	cfg        Config
	env        env
	drained    chan struct{} // a token when the last outstanding response is read after stopping
	base       time.Time
	start      int64 // ns since base: first intended send
	measure    int64 // start of the measurement
	end        int64 // end of sending
	conns      []*conn
	flushers   sync.WaitGroup // conn flush goroutines
	maxPend    int            // most bytes pending per connection
	connectErr string         // connect failures, if some connections opened
	lat, late  *recorder
	n          counters
	stopping   atomic.Bool
}

func (r *run) now() int64 { return int64(r.env.clock.Now().Sub(r.base)) }

func (r *run) measured(t int64) bool { return t >= r.measure && t < r.end }

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
	if cfg.Pacers == 0 {
		cfg.Pacers = 1
	}
	cfg.Pacers = min(cfg.Pacers, cfg.Conns)
	if cfg.Spin == 0 {
		cfg.Spin = 30 * time.Microsecond
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if cfg.DrainTimeout == 0 {
		cfg.DrainTimeout = 2 * time.Second
	}
	switch {
	case cfg.Addr == "":
		return fmt.Errorf("%w: no address", ErrConfig)
	case cfg.Conns < 0 || cfg.Depth < 0 || cfg.Pacers < 0 || cfg.Spin < 0:
		return fmt.Errorf("%w: negative count", ErrConfig)
	case cfg.MsgSize < 1 || cfg.MsgSize > 1<<20:
		return fmt.Errorf("%w: message size %d not in [1, 1 MiB]", ErrConfig, cfg.MsgSize)
	case cfg.QPS < 0:
		return fmt.Errorf("%w: negative rate", ErrConfig)
	case cfg.Duration < 0 || cfg.Warmup < 0:
		return fmt.Errorf("%w: negative duration", ErrConfig)
	case cfg.Mode != "echo" && cfg.Mode != "line":
		return fmt.Errorf("%w: mode %q is neither echo nor line", ErrConfig, cfg.Mode)
	}
	return nil
}

// Run connects, runs the load described by cfg and returns the result. It
// stops early, with the results so far, when ctx is done.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	var d net.Dialer
	return runIn(ctx, cfg, env{dial: d.DialContext, clock: sleep.System{}})
}

func runIn(ctx context.Context, cfg Config, env env) (*Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := ensureFDs(uint64(cfg.Conns) + 64); err != nil {
		return nil, err
	}
	clk := env.clock
	r := &run{cfg: cfg, env: env, drained: make(chan struct{}, 1), lat: newRecorder(), late: newRecorder()}
	r.maxPend = max(minMaxPending, cfg.MsgSize*cfg.Depth)
	if err := r.connect(ctx); err != nil {
		return nil, err
	}
	// Connections that failed to open are reported (ConnectFailures); the
	// run goes on with the others, with no pacer left without a connection.
	r.cfg.Pacers = min(r.cfg.Pacers, len(r.conns))
	cfg = r.cfg
	if r.connectErr != "" && cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "%s; going on with %d\n", r.connectErr, len(r.conns))
	}
	defer func() {
		for _, c := range r.conns {
			c.nc.Close()
		}
	}()

	r.base = clk.Now()
	if cfg.QPS > 0 {
		r.start = int64(10 * time.Millisecond) // let the readers settle
	}
	r.measure = r.start + int64(cfg.Warmup)
	r.end = r.measure + int64(cfg.Duration)
	var hlog *hdrhistogram.HistogramLogWriter
	if cfg.HdrLog != nil {
		hlog = hdrhistogram.NewHistogramLogWriter(cfg.HdrLog)
		startMs := r.base.Add(time.Duration(r.measure)).UnixMilli()
		hlog.SetBaseTime(startMs)
		hlog.OutputLogFormatVersion()
		hlog.OutputComment("[tcpperf latencies in nanoseconds]")
		hlog.OutputStartTime(startMs)
		hlog.OutputBaseTime(startMs)
		hlog.OutputLegend()
	}

	var readers sync.WaitGroup
	for _, c := range r.conns {
		readers.Add(1)
		go func() {
			defer readers.Done()
			r.reader(c)
		}()
	}
	var senders sync.WaitGroup
	if cfg.QPS > 0 {
		for p := 0; p < cfg.Pacers; p++ {
			senders.Add(1)
			go func() {
				defer senders.Done()
				r.pacer(ctx, p)
			}()
		}
	} else {
		for _, c := range r.conns {
			r.sendBatch(c, cfg.Depth, r.now())
		}
	}

	// Once a second: progress and the interval log.
	sendDone := make(chan struct{})
	go func() { senders.Wait(); close(sendDone) }()
	tick := clk.After(time.Second)
	lastTick := r.now()
	var lastSent, lastRecv int64
	report := func() {
		now := r.now()
		h, lh := r.lat.interval(), r.late.interval()
		if hlog != nil && (now > r.measure || h.TotalCount() > 0) {
			h.SetStartTimeMs(r.base.Add(time.Duration(max(lastTick, r.measure))).UnixMilli())
			h.SetEndTimeMs(r.base.Add(time.Duration(now)).UnixMilli())
			hlog.OutputIntervalHistogram(h)
		}
		if cfg.Progress != nil {
			secs := float64(now-lastTick) / 1e9
			sent, recv := r.n.sent.Load(), r.n.received.Load()
			phase := ""
			if now < r.measure {
				phase = " (warmup)"
			}
			fmt.Fprintf(cfg.Progress, "%6.1fs  sent %8.0f/s  recv %8.0f/s  p50 %s  p99 %s  max %s  lateness p99 %s  errors %d%s\n",
				float64(now-r.start)/1e9, float64(sent-lastSent)/secs, float64(recv-lastRecv)/secs,
				us(h.ValueAtQuantile(50)), us(h.ValueAtQuantile(99)), us(h.Max()), us(lh.ValueAtQuantile(99)), r.errors(), phase)
			lastSent, lastRecv = sent, recv
		}
		lastTick = now
	}
	closedLoopEnd := clk.After(time.Duration(r.end - r.now()))
wait:
	for {
		select {
		case <-tick:
			report()
			tick = clk.After(time.Second)
		case <-sendDone:
			if cfg.QPS > 0 {
				break wait
			}
			sendDone = nil // closed loop: no pacers; wait for the end
		case <-closedLoopEnd:
			if cfg.QPS == 0 {
				break wait
			}
		case <-ctx.Done():
			break wait
		}
	}
	r.stopping.Store(true) // closed loop: send no more
	senders.Wait()

	// Wait for the outstanding responses, then close. Only readers change
	// inflight now, and the one that takes it to zero sends r.drained.
	if r.n.inflight.Load() > 0 {
		select {
		case <-r.drained:
		case <-clk.After(cfg.DrainTimeout):
		case <-ctx.Done():
		}
	}
	measuredEnd := min(r.now(), r.end)
	if cfg.QPS > 0 && ctx.Err() == nil {
		measuredEnd = r.end // the whole schedule went out
	}
	for _, c := range r.conns {
		c.nc.Close() // ends blocked reads and flush writes
	}
	readers.Wait()
	r.flushers.Wait()
	r.n.unanswered.Store(r.n.inflight.Load())
	report()
	return r.result(float64(measuredEnd-r.measure) / 1e9), nil
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
	return r.n.write.Load() + r.n.read.Load() + r.n.content.Load() + r.n.unanswered.Load() + r.n.connect.Load()
}

func (r *run) result(secs float64) *Result {
	h, lh := r.lat.total, r.late.total
	q := func(h *hdrhistogram.Histogram, p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1e3 }
	res := &Result{
		Mode: r.cfg.Mode, Conns: r.cfg.Conns, Connected: len(r.conns), TargetQPS: r.cfg.QPS,
		MsgSize: r.cfg.MsgSize, DurationS: secs,
		P50: q(h, 50), P90: q(h, 90), P99: q(h, 99), P999: q(h, 99.9), P9999: q(h, 99.99),
		Max: float64(h.Max()) / 1e3, Mean: h.Mean() / 1e3,
		Sent: r.n.sent.Load(), Received: h.TotalCount(),
		ConnectFailures: r.n.connect.Load(), ConnectError: r.connectErr, WriteErrors: r.n.write.Load(), ReadErrors: r.n.read.Load(),
		ContentErrors: r.n.content.Load(), Unanswered: r.n.unanswered.Load(),
		LatenessP50: q(lh, 50), LatenessP99: q(lh, 99), LatenessMax: float64(lh.Max()) / 1e3,
	}
	if r.cfg.QPS == 0 {
		res.Depth = r.cfg.Depth
	}
	if secs > 0 {
		res.AchievedQPS = float64(res.Received) / secs
	}
	res.Errors = r.errors()
	return res
}

func (r *run) connect(ctx context.Context) error {
	dial := r.env.dial
	conns := make([]*conn, r.cfg.Conns)
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range conns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			dctx, cancel := context.WithTimeout(ctx, r.cfg.DialTimeout)
			nc, err := dial(dctx, "tcp", r.cfg.Addr)
			cancel()
			if err != nil {
				r.n.connect.Add(1)
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return
			}
			if tc, ok := nc.(*net.TCPConn); ok {
				tc.SetNoDelay(true)
			}
			conns[i] = &conn{nc: nc, id: i, tmpl: msgTemplate(i, r.cfg.MsgSize), raw: newRawWriter(nc)}
		}()
	}
	wg.Wait()
	r.conns = slices.DeleteFunc(conns, func(c *conn) bool { return c == nil })
	fdLimit := errors.Is(firstErr, syscall.EMFILE) || errors.Is(firstErr, syscall.ENFILE)
	if len(r.conns) == 0 {
		if fdLimit {
			return fmt.Errorf("%w: %w (raise the file descriptor limit)", ErrFDLimit, firstErr)
		}
		return fmt.Errorf("%w to %s: %w", ErrConnect, r.cfg.Addr, firstErr)
	}
	if firstErr != nil {
		r.connectErr = fmt.Sprintf("%d of %d connections failed, the first with: %v", r.cfg.Conns-len(r.conns), r.cfg.Conns, firstErr)
		if fdLimit {
			r.connectErr += " (raise the file descriptor limit)"
		}
	}
	return nil
}

// pacer sends the open-loop schedule of pacer p: message k of this pacer is
// due at start + (k*Pacers + p)/QPS and goes to the pacer's connections in
// turn.
func (r *run) pacer(ctx context.Context, p int) {
	var mine []*conn
	for i := p; i < len(r.conns); i += r.cfg.Pacers {
		mine = append(mine, r.conns[i])
	}
	sl := r.env.clock.Waiter(r.cfg.Spin)
	defer sl.Close()
	step := 1e9 / r.cfg.QPS
	P := int64(r.cfg.Pacers)
	for k := int64(0); ctx.Err() == nil; k++ {
		t := r.start + int64(float64(k*P+int64(p))*step)
		if t >= r.end {
			return
		}
		sl.Until(ctx, r.base.Add(time.Duration(t)))
		if ctx.Err() != nil {
			return
		}
		if r.measured(t) {
			r.late.record(r.now() - t)
		}
		r.sendBatch(mine[k%int64(len(mine))], 1, t)
	}
}

// sendBatch sends n messages on c, each with intended time t, without
// blocking (see conn).
func (r *run) sendBatch(c *conn, n int, t int64) {
	size := r.cfg.MsgSize
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return
	}
	// At most maxInflight outstanding and maxPend unsent: past that the
	// server is not answering, or not reading.
	room := min(n, (r.maxPend-len(c.pending)-c.writing)/size)
	k := 0
	for ; k < room && c.push(t); k++ {
		off := len(c.pending)
		c.pending = append(c.pending, c.tmpl...)
		putHex(c.pending[off:off+hexLen(size)], c.sent)
		c.sent++
	}
	c.mu.Unlock()
	if k < n {
		r.n.write.Add(int64(n - k))
	}
	if k == 0 {
		return
	}
	r.n.inflight.Add(int64(k))
	r.n.sent.Add(int64(k))
	if c.flushing {
		return // the flush goroutine takes it from here
	}
	if c.raw != nil {
		w, err := c.raw.tryWrite(c.pending)
		if err != nil {
			c.pending = c.pending[:0]
			r.fail(c, &r.n.write)
			return
		}
		rest := copy(c.pending, c.pending[w:])
		c.pending = c.pending[:rest]
		if rest == 0 {
			return
		}
	}
	c.flushing = true
	r.flushers.Add(1)
	go r.flush(c)
}

// flush writes c's pending bytes, blocking, until there are none; sends
// made meanwhile append to pending. It gives up on a write error (the
// connection is closed at the end of the run, which ends a blocked write).
func (r *run) flush(c *conn) {
	defer r.flushers.Done()
	c.wmu.Lock()
	for len(c.pending) > 0 {
		b := c.pending
		c.pending, c.spare = c.spare[:0], nil
		c.writing = len(b)
		c.wmu.Unlock()
		_, err := c.nc.Write(b)
		c.wmu.Lock()
		c.spare, c.writing = b[:0], 0
		if err != nil {
			c.pending = c.pending[:0]
			c.wmu.Unlock()
			r.fail(c, &r.n.write)
			c.wmu.Lock()
			break
		}
	}
	c.flushing = false
	c.wmu.Unlock()
}

// fail marks c dead, counting an error unless the run is over.
func (r *run) fail(c *conn, counter *atomic.Int64) {
	c.mu.Lock()
	dead := c.dead
	c.dead = true
	c.mu.Unlock()
	if !dead && !r.stopping.Load() {
		counter.Add(1)
	}
}

// reader reads and checks c's responses in order, recording latencies, and
// in closed loop sends as many new messages as responses it has just read.
// Responses have the size of messages (in line mode too: one line back per
// line sent); all those completed by one read share its arrival time.
func (r *run) reader(c *conn) {
	size := r.cfg.MsgSize
	buf := make([]byte, max(64<<10, 2*size))
	var start, end int // unparsed data: buf[start:end]
	var seq uint64
	var sent []int64
	for {
		n, err := c.nc.Read(buf[end:])
		now := r.now()
		end += n
		k := (end - start) / size // complete responses
		if k > 0 {
			sent = sent[:0]
			c.mu.Lock()
			for i := 0; i < k; i++ {
				t, ok := c.pop()
				if !ok {
					break
				}
				sent = append(sent, t)
			}
			c.mu.Unlock()
			r.n.content.Add(int64(k - len(sent))) // responses nobody asked for
			bad, measured := 0, 0
			r.lat.mu.Lock()
			for i, t := range sent {
				if !checkMsg(buf[start+i*size:start+(i+1)*size], c.tmpl, seq) {
					bad++
				}
				seq++
				if r.measured(t) {
					r.lat.recordLocked(now - t)
					measured++
				}
			}
			r.lat.mu.Unlock()
			r.n.content.Add(int64(bad))
			r.n.received.Add(int64(measured))
			start += k * size
			if r.cfg.QPS == 0 && !r.stopping.Load() && now < r.end {
				r.sendBatch(c, len(sent), r.now())
			}
			// Only now, so that the drain at the end never sees zero in
			// flight while replacements are about to be sent.
			if r.n.inflight.Add(-int64(len(sent))) == 0 && r.stopping.Load() {
				select {
				case r.drained <- struct{}{}:
				default:
				}
			}
		}
		if err != nil {
			r.fail(c, &r.n.read) // not counted once the run is over
			return
		}
		if start == end {
			start, end = 0, 0
		} else if len(buf)-end < size {
			end = copy(buf, buf[start:end])
			start = 0
		}
	}
}

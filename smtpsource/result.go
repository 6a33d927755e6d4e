package smtpsource

import (
	"crypto/tls"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/internal/latrec"
)

// The phases whose latencies are recorded (see Phases), in their order.
const (
	phaseConnect = iota
	phaseBanner
	phaseEHLO
	phaseTLS
	phaseAuth
	phaseMail
	phaseRcpt
	phaseData
	phaseDot
	phaseMessage
	phaseFailed
	numPhases
)

var phaseNames = [numPhases]string{"connect", "banner", "ehlo", "tls", "auth", "mail", "rcpt", "data", "dot", "message", "failed"}

const histMax = latrec.Max

func newHist() *hdrhistogram.Histogram { return latrec.NewHist() }

func record(h *hdrhistogram.Histogram, ns int64) { latrec.Record(h, ns) }

// A recorder is a histogram written by many sessions and read per
// interval: latrec's, under the names the package uses.
type recorder struct{ *latrec.Recorder }

func newRecorder() *recorder { return &recorder{latrec.New()} }

func (r *recorder) record(ns int64) { r.Record(ns) }

// interval returns the values recorded since the last call; the histogram
// is valid until the next call.
func (r *recorder) interval() *hdrhistogram.Histogram { return r.Interval() }

// Latency summarises one phase's latencies, in microseconds.
type Latency struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_us"`
	P90   float64 `json:"p90_us"`
	P99   float64 `json:"p99_us"`
	P999  float64 `json:"p999_us"`
	Max   float64 `json:"max_us"`
	Mean  float64 `json:"mean_us"`
}

func latency(h *hdrhistogram.Histogram) *Latency {
	if h.TotalCount() == 0 {
		return nil
	}
	q := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1e3 }
	return &Latency{Count: h.TotalCount(), P50: q(50), P90: q(90), P99: q(99), P999: q(99.9),
		Max: float64(h.Max()) / 1e3, Mean: h.Mean() / 1e3}
}

// Phases holds the latencies of each phase; a phase that never happened
// is nil. A command's phase runs from its turn to the reply that ends it.
// Its turn is its write or, for the commands of a message written behind
// the previous message's data (pipelining across messages), the previous
// message's last reply, when the server is done with that one: the
// server's time on a message is in no phase of the next. All the replies
// of a pipelined group count from the group's turn. The source's own
// waits (its one-dial-at-a-time turn, the open-loop schedule) are in no
// phase but Message and Failed, which count from a message's start.
type Phases struct {
	Connect *Latency `json:"connect,omitempty"` // the dial (its retries too), not the wait for the source's one-dial-at-a-time turn
	Banner  *Latency `json:"banner,omitempty"`  // from the open connection (implicit TLS: the handshake's end) to the greeting
	EHLO    *Latency `json:"ehlo,omitempty"`    // EHLO (LHLO) to its reply; HELO too, if EHLO is refused; twice with STARTTLS
	TLS     *Latency `json:"tls,omitempty"`     // STARTTLS to the handshake's end (implicit TLS: the handshake)
	Auth    *Latency `json:"auth,omitempty"`    // AUTH to its last reply, every challenge answered
	Mail    *Latency `json:"mail,omitempty"`    // MAIL FROM to its reply
	Rcpt    *Latency `json:"rcpt,omitempty"`    // RCPT TO to its reply, once per recipient
	Data    *Latency `json:"data,omitempty"`    // DATA to its 354 go-ahead (none with BDAT)
	Dot     *Latency `json:"dot,omitempty"`     // from the first byte of the message's data to its last reply
	// Message is a whole accepted message, from its start to its last
	// reply, QUIT not included. In closed loop a message starts when its
	// session takes it up or, sent ahead, with its turn; in open loop at
	// its intended start, so that the waits behind earlier messages are
	// charged to it. When a connection is opened for it, the wait for the
	// dial's turn and the connect are in it.
	Message *Latency `json:"message,omitempty"`
	// Failed is the same for the messages not accepted, to the reply, the
	// error or the timeout that ended each: with Message, it holds every
	// message started.
	Failed *Latency `json:"failed,omitempty"`
}

// A NamedLatency is one phase's latencies and the phase's name.
type NamedLatency struct {
	Name    string // "connect", "banner", "ehlo", "tls", "auth", "mail", "rcpt", "data", "dot", "message", "failed"
	Latency *Latency
}

// List returns the phases in order, with their names.
func (p *Phases) List() []NamedLatency {
	ls := p.byPhase()
	out := make([]NamedLatency, len(ls))
	for i, l := range ls {
		out[i] = NamedLatency{phaseNames[i], *l}
	}
	return out
}

// byPhase returns the fields of p in the order of the phase constants.
func (p *Phases) byPhase() [numPhases]**Latency {
	return [numPhases]**Latency{&p.Connect, &p.Banner, &p.EHLO, &p.TLS, &p.Auth, &p.Mail, &p.Rcpt, &p.Data, &p.Dot, &p.Message, &p.Failed}
}

// A Digest is the MD5 and size of a message's data as the server received
// it (dot-unstuffed, CRLF kept).
type Digest struct {
	MD5  [16]byte
	Size int64
}

// Result is the outcome of a run.
type Result struct {
	Proto      string  `json:"proto"` // "smtp" or "lmtp"
	Sessions   int     `json:"sessions"`
	Messages   int     `json:"messages"`             // asked for; 0: no limit (Duration)
	Length     int     `json:"length"`               // -l
	LengthMax  int     `json:"length_max,omitempty"` // -l MIN:MAX's MAX (Length is MIN)
	Recipients int     `json:"recipients_per_message"`
	TargetQPS  float64 `json:"target_qps"`          // 0: closed loop, or Stages
	Pipelining bool    `json:"pipelining"`          // used: asked for and offered (on a connection at least)
	Chunking   bool    `json:"chunking"`            // used: asked for and offered (on a connection at least)
	TLSMode    string  `json:"tls_mode,omitempty"`  // "starttls", "implicit" or "" (none)
	AuthMech   string  `json:"auth_mech,omitempty"` // the AUTH mechanism, if any
	DurationS  float64 `json:"duration_s"`          // from the first start to the last reply
	// DurationLimitS is Config.Duration, if set, in seconds.
	DurationLimitS float64 `json:"duration_limit_s,omitempty"`
	// Stages are the open-loop stages (Config.Stages), each with its
	// messages' latencies.
	Stages []StageResult `json:"stages,omitempty"`

	Started   int64 `json:"started"`   // messages begun
	Delivered int64 `json:"delivered"` // accepted by the server (LMTP: for one recipient or more)
	Failed    int64 `json:"failed"`    // begun and not accepted: refused, broken off, timed out, or stopped before its MAIL by the run's fatal error
	// Abandoned counts the messages under way, with no error counted yet,
	// when the run was stopped (its context ended, or a fatal error ended
	// it): their outcome is unknown (the server may have accepted them,
	// its reply unread), so they are neither delivered nor failed.
	Abandoned int64 `json:"abandoned,omitempty"`
	// Missed counts the messages an open-loop run with a Duration meant
	// to start before its end and did not, every session being busy:
	// none starts after the end. Above zero, the server did not keep up
	// with the rate (or the tool: see Lateness).
	Missed int64 `json:"missed,omitempty"`
	// Unscheduled counts the messages of Config.Messages that the
	// open-loop schedule never makes due (Stages ending at rate 0 before
	// them, or a rate so low they fall past the clock's range): not
	// started, and no error.
	Unscheduled int64 `json:"unscheduled,omitempty"`
	// Interrupted says the run's context ended it (a signal, in the
	// command) before it was done: before its messages or its Duration
	// were done, or with an exchange under way that counts, as a QUIT
	// whose reply had not come (the messages' figures are then whole,
	// and Missed and Unscheduled counted).
	Interrupted bool `json:"interrupted,omitempty"`
	// RcptOK counts the recipients the server accepted at RCPT (a 2xx
	// reply), whether or not it then took the message: with LMTP, a
	// recipient whose reply after the data was a refusal is counted
	// here and in Rejections; the message is delivered if one took it.
	RcptOK      int64   `json:"recipients_accepted"`
	Connections int64   `json:"connections"` // opened
	Bytes       int64   `json:"bytes"`       // message data of the delivered messages, as the server keeps it
	MsgPerS     float64 `json:"messages_per_s"`
	MBPerS      float64 `json:"mb_per_s"` // Bytes per second, in 10^6 bytes

	// Replies counts reply codes by phase: "banner", "ehlo", "helo",
	// "mail", "rcpt", "data", "dot" (LMTP: one per recipient), "rset",
	// "quit".
	Replies map[string]map[int]int64 `json:"replies"`
	Phases  Phases                   `json:"latency"`
	// Lateness is how late messages started after their intended start
	// (open loop only): the time all sessions were busy, and the tool's own
	// floor.
	Lateness *Latency `json:"lateness,omitempty"`

	Errors          int64  `json:"errors"`           // the sum of the kinds below
	ConnectErrors   int64  `json:"connect_errors"`   // dials that failed (their last try, with ConnectTries), each followed by a back-off
	ConnectRetries  int64  `json:"connect_retries"`  // failed dials tried again (ConnectTries), not errors
	ConnectRefusals int64  `json:"connect_refusals"` // greetings refused (421, 554, ...), each followed by a back-off
	IOErrors        int64  `json:"io_errors"`        // reads and writes that failed, disconnects, timeouts
	ProtocolErrors  int64  `json:"protocol_errors"`  // replies that are not SMTP replies, or come unasked, and greetings neither 220 nor refusals
	Rejections      int64  `json:"rejections"`       // 4xx and 5xx replies to commands
	FirstError      string `json:"first_error,omitempty"`

	// TLS says what the handshakes of the run's connections agreed on.
	TLS *TLSStats `json:"tls,omitempty"`

	Digests []Digest `json:"-"` // with Config.Digests: the delivered messages', in no order
}

// A StageResult is a stage of the schedule and its messages' latencies,
// from their intended starts: delivered (Message) and failed.
type StageResult struct {
	From      float64  `json:"from_qps"`
	To        float64  `json:"to_qps"`
	StartS    float64  `json:"start_s"`
	DurationS float64  `json:"duration_s"`
	Message   *Latency `json:"message,omitempty"`
	Failed    *Latency `json:"failed,omitempty"`
}

// TLSStats counts the TLS handshakes that succeeded.
type TLSStats struct {
	Handshakes   int64            `json:"handshakes"`
	Resumed      int64            `json:"resumed"`       // resumed an earlier connection's session
	Versions     map[string]int64 `json:"versions"`      // by name: "TLS 1.3", ...
	CipherSuites map[string]int64 `json:"cipher_suites"` // by name: "TLS_AES_128_GCM_SHA256", ...
}

func (t *TLSStats) add(st tls.ConnectionState) {
	if t.Versions == nil {
		t.Versions, t.CipherSuites = map[string]int64{}, map[string]int64{}
	}
	t.Handshakes++
	if st.DidResume {
		t.Resumed++
	}
	t.Versions[tls.VersionName(st.Version)]++
	t.CipherSuites[tls.CipherSuiteName(st.CipherSuite)]++
}

func (t *TLSStats) merge(o *TLSStats) {
	if t.Versions == nil {
		t.Versions, t.CipherSuites = map[string]int64{}, map[string]int64{}
	}
	t.Handshakes += o.Handshakes
	t.Resumed += o.Resumed
	for k, n := range o.Versions {
		t.Versions[k] += n
	}
	for k, n := range o.CipherSuites {
		t.CipherSuites[k] += n
	}
}

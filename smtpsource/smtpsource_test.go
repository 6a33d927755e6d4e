package smtpsource

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// overCInt is one past the largest C int, as a variable: an int of 32
// bits cannot hold it, and wraps to a negative.
var overCInt int64 = math.MaxInt32 + 1

// base is a configuration with fixed names, so that tests can spell out
// what goes on the wire.
func base(addr string) Config {
	return Config{Addr: addr, Helo: "client.test", From: "from@client.test", To: "to@server.test", Length: 300}
}

func runOK(t *testing.T, cfg Config) *Result {
	t.Helper()
	res, err := RunWith(context.Background(), cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	accounted(t, res)
	return res
}

// accounted checks that every message started is in the figures: delivered
// (and in the message latencies) or failed (and in the failed ones).
func accounted(t *testing.T, res *Result) {
	t.Helper()
	count := func(l *Latency) int64 {
		if l == nil {
			return 0
		}
		return l.Count
	}
	if res.Started != res.Delivered+res.Failed+res.Abandoned || count(res.Phases.Message) != res.Delivered || count(res.Phases.Failed) != res.Failed {
		t.Errorf("started %d, delivered %d, failed %d, abandoned %d; latencies of %d delivered and %d failed",
			res.Started, res.Delivered, res.Failed, res.Abandoned, count(res.Phases.Message), count(res.Phases.Failed))
	}
}

// checkLatency checks that l summarises the latencies ds: its count and
// each figure are those of a reference histogram holding them.
func checkLatency(t *testing.T, name string, l *Latency, ds ...time.Duration) {
	t.Helper()
	ref := hdrhistogram.New(1, histMax, 3)
	for _, d := range ds {
		ref.RecordValue(max(int64(d), 1))
	}
	q := func(p float64) float64 { return float64(ref.ValueAtQuantile(p)) / 1e3 }
	if l == nil || l.Count != ref.TotalCount() || l.P50 != q(50) || l.P90 != q(90) || l.P99 != q(99) || l.P999 != q(99.9) ||
		l.Max != float64(ref.Max())/1e3 || l.Mean != ref.Mean()/1e3 {
		t.Errorf("%s: %+v, want %v", name, l, ds)
	}
}

// logCounts reads an interval log and returns the number of latencies it
// holds by tag.
func logCounts(t *testing.T, log *bytes.Buffer) map[string]int64 {
	t.Helper()
	text := log.String()
	lr := hdrhistogram.NewHistogramLogReader(log)
	byTag := map[string]int64{}
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		if h == nil {
			return byTag
		}
		byTag[h.Tag()] += h.TotalCount()
	}
}

// sentLog turns a fake server's messages into a digest log.
func sentLog(msgs [][]byte) string {
	var b strings.Builder
	for i, m := range msgs {
		fmt.Fprintf(&b, "%x %d SESSION-%d\n", md5.Sum(m), len(m), i)
	}
	return b.String()
}

// Closed loop over two sessions that reuse their connections: every
// message arrives whole (header and body as generated, dot-stuffing
// undone by the server), every recipient is named as smtp-source -r names
// them, and the counts add up.
func TestClosedLoop(t *testing.T) {
	f := &fakeServer{}
	addr := f.start(t)
	cfg := base(addr)
	cfg.Sessions, cfg.Messages, cfg.Recipients, cfg.Reuse, cfg.Body, cfg.Digests = 2, 10, 3, true, "mail", true
	res := runOK(t, cfg)
	if res.Started != 10 || res.Delivered != 10 || res.Failed != 0 || res.RcptOK != 30 || res.Connections != 2 || res.Errors != 0 {
		t.Fatalf("%+v", res)
	}
	if res.Replies["mail"][250] != 10 || res.Replies["rcpt"][250] != 30 || res.Replies["data"][354] != 10 || res.Replies["dot"][250] != 10 || res.Replies["quit"][221] != 2 {
		t.Errorf("replies %v", res.Replies)
	}
	msgs := f.messages()
	if len(msgs) != 10 {
		t.Fatalf("%d messages arrived", len(msgs))
	}
	body := MakeBody("mail", 300)
	if !bytes.Contains(body, []byte("\r\n.")) {
		t.Fatal("the mail body has no line to dot-stuff")
	}
	for _, m := range msgs {
		hdr, b, ok := bytes.Cut(m, []byte("\r\n\r\n"))
		if !ok || !bytes.Equal(b, body) || !bytes.HasPrefix(hdr, []byte("From: <from@client.test>\r\nTo: <to@server.test>\r\nDate: ")) {
			t.Fatalf("message:\n%q", m)
		}
	}
	if res.Bytes != int64(len(msgs[0]))*10 {
		t.Errorf("bytes %d, want %d", res.Bytes, len(msgs[0])*10)
	}
	rcpts := map[string]int{}
	for _, c := range f.commands() {
		if strings.HasPrefix(c, "RCPT") {
			rcpts[c]++
		}
	}
	if len(rcpts) != 3 || rcpts["RCPT TO:<3to@server.test>"] != 10 || rcpts["RCPT TO:<2to@server.test>"] != 10 || rcpts["RCPT TO:<to@server.test>"] != 10 {
		t.Errorf("recipients %v", rcpts)
	}
	// What the server received is what the run says it delivered.
	v, err := Verify(strings.NewReader(sentLog(msgs)), res.Digests)
	if err != nil || !v.OK() || v.Matched != 10 {
		t.Errorf("verify: %+v, %v", v, err)
	}
	// A message changed or lost on the way shows.
	msgs[3] = append([]byte("X"), msgs[3]...)
	v, err = Verify(strings.NewReader(sentLog(msgs[1:])), res.Digests)
	if err != nil || v.Matched != 8 || v.Missing != 2 || v.Unexpected != 1 {
		t.Errorf("verify against a changed log: %+v, %v", v, err)
	}
}

// Without -d, each message has its own connection, ended with QUIT. The
// recipients are named as smtp-source -r names them, in its order.
func TestConnectionPerMessage(t *testing.T) {
	f := &fakeServer{}
	cfg := base(f.start(t))
	cfg.Messages, cfg.Recipients = 3, 3
	res := runOK(t, cfg)
	var cmds []string
	for _, c := range f.commands()[:7] {
		cmds = append(cmds, c)
	}
	want := []string{"EHLO client.test", "MAIL FROM:<from@client.test>", "RCPT TO:<3to@server.test>", "RCPT TO:<2to@server.test>", "RCPT TO:<to@server.test>", "DATA", "QUIT"}
	if strings.Join(cmds, "|") != strings.Join(want, "|") {
		t.Errorf("commands %q, want %q", cmds, want)
	}
	if res.Delivered != 3 || res.Connections != 3 || res.Replies["quit"][221] != 3 || res.Replies["ehlo"][250] != 3 || res.Errors != 0 {
		t.Fatalf("%+v", res)
	}
	if res.Phases.Connect.Count != 3 || res.Phases.Banner.Count != 3 || res.Phases.Message.Count != 3 {
		t.Errorf("phases %+v", res.Phases)
	}
}

// Refusals at each step are counted by phase and code, the transaction is
// reset when one is open, and the next message goes out on the same
// connection; with and without pipelining.
func TestRejections(t *testing.T) {
	for _, c := range []struct {
		name, verb, reply string
		rset              bool
	}{
		{"mail", "MAIL", "451 4.3.0 try later", false},
		{"rcpt", "RCPT", "550 5.1.1 no such user", true},
		{"data", "DATA", "451 4.3.0 not now", true},
		{"dot", ".", "552 5.3.4 too big", false},
	} {
		for _, pipe := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/pipelining=%v", c.name, pipe), func(t *testing.T) {
				var n atomic.Int64
				f := &fakeServer{ext: []string{"PIPELINING"}, reply: func(verb, arg string) string {
					if verb == c.verb {
						if n.Add(1) == 1 { // only the first message's
							return c.reply
						}
					}
					return ""
				}}
				cfg := base(f.start(t))
				cfg.Messages, cfg.Reuse, cfg.Pipelining = 2, true, pipe
				res := runOK(t, cfg)
				code := 0
				fmt.Sscan(c.reply, &code)
				phase := strings.ToLower(c.verb)
				if c.verb == "." {
					phase = "dot"
				}
				if res.Delivered != 1 || res.Failed != 1 || res.Rejections < 1 || res.Replies[phase][code] != 1 || res.Connections != 1 || res.IOErrors+res.ProtocolErrors != 0 {
					t.Fatalf("%+v", res)
				}
				if !strings.Contains(res.FirstError, c.reply) {
					t.Errorf("first error %q", res.FirstError)
				}
				if got := res.Replies["rset"][250] == 1; got != c.rset {
					t.Errorf("RSET sent: %v, want %v (%v)", got, c.rset, f.commands())
				}
				if len(f.messages()) != 1+b2i(c.verb == ".") {
					t.Errorf("%d messages arrived", len(f.messages()))
				}
			})
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A server that drops the connection: an I/O error, and the next message
// opens a new connection.
func TestDisconnect(t *testing.T) {
	var n atomic.Int64
	f := &fakeServer{reply: func(verb, arg string) string {
		if verb == "RCPT" {
			if n.Add(1) == 1 {
				return "close"
			}
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Messages, cfg.Reuse = 3, true
	res := runOK(t, cfg)
	if res.Delivered != 2 || res.Failed != 1 || res.IOErrors != 1 || res.Connections != 2 || res.Errors != 1 {
		t.Fatalf("%+v", res)
	}
	// Connection refused: no connection at all is an error of Run.
	addr := tooltest.RefusingAddr(t)
	// Nothing reaches the interval log (not even its header), so that
	// the command does not empty an earlier run's.
	var hlog bytes.Buffer
	cfg = base(addr)
	cfg.HdrLog = &hlog
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConnect) || hlog.Len() != 0 {
		t.Errorf("refused: %v, %d bytes of interval log; want ErrConnect and none", err, hlog.Len())
	}
}

// Replies that are not SMTP are protocol errors.
func TestProtocolError(t *testing.T) {
	f := &fakeServer{reply: func(verb, arg string) string {
		if verb == "MAIL" {
			return "hello there"
		}
		return ""
	}}
	cfg := base(f.start(t))
	res := runOK(t, cfg)
	if res.ProtocolErrors != 1 || res.Delivered != 0 || res.Failed != 1 {
		t.Fatalf("%+v", res)
	}
}

// With PIPELINING offered, MAIL, the RCPTs and DATA leave in one write;
// without it, or without -pipelining, one command per write.
func TestPipeliningGroup(t *testing.T) {
	for _, c := range []struct {
		offer, ask, want bool
	}{{true, true, true}, {false, true, false}, {true, false, false}} {
		f := &fakeServer{}
		if c.offer {
			f.ext = []string{"PIPELINING"}
		}
		var l writeLog
		cfg := base(f.start(t))
		cfg.Recipients, cfg.Pipelining = 2, c.ask
		res, err := RunWith(context.Background(), cfg, l.dial, nil)
		if err != nil || res.Delivered != 1 || res.Errors != 0 || res.Pipelining != c.want {
			t.Fatalf("%+v: %+v, %v", c, res, err)
		}
		group := "MAIL FROM:<from@client.test>\r\nRCPT TO:<2to@server.test>\r\nRCPT TO:<to@server.test>\r\nDATA\r\n"
		found := false
		for _, w := range l.writes {
			found = found || w == group
		}
		if found != c.want {
			t.Errorf("%+v: group in one write: %v; writes %q", c, found, l.writes)
		}
	}
}

// BDAT: the message is cut into chunks of ChunkSize, the last with LAST,
// and arrives whole; pipelined, the chunks follow the envelope in one
// write. Without CHUNKING offered, DATA is used.
func TestChunking(t *testing.T) {
	for _, pipe := range []bool{false, true} {
		f := &fakeServer{ext: []string{"PIPELINING", "CHUNKING"}}
		var l writeLog
		cfg := base(f.start(t))
		cfg.Chunking, cfg.ChunkSize, cfg.Pipelining, cfg.Body, cfg.Digests = true, 100, pipe, "mail", true
		res, err := RunWith(context.Background(), cfg, l.dial, nil)
		if err != nil || res.Delivered != 1 || res.Errors != 0 || !res.Chunking {
			t.Fatalf("pipelining %v: %+v, %v", pipe, res, err)
		}
		msgs := f.messages()
		if len(msgs) != 1 || !bytes.HasSuffix(msgs[0], MakeBody("mail", 300)) {
			t.Fatalf("arrived: %q", msgs)
		}
		var bdat []string
		for _, c := range f.commands() {
			if strings.HasPrefix(c, "BDAT") {
				bdat = append(bdat, c)
			}
		}
		size := len(msgs[0])
		want := []string{"BDAT 100", "BDAT 100", "BDAT 100", "BDAT 100", fmt.Sprintf("BDAT %d LAST", size-400)}
		if size <= 400 || size > 500 || strings.Join(bdat, "|") != strings.Join(want, "|") {
			t.Errorf("chunks %q for %d bytes", bdat, size)
		}
		if res.Replies["bdat"][250] != 4 || res.Replies["dot"][250] != 1 || res.Replies["data"] != nil {
			t.Errorf("replies %v", res.Replies)
		}
		if v, err := Verify(strings.NewReader(sentLog(msgs)), res.Digests); err != nil || !v.OK() {
			t.Errorf("verify %+v %v", v, err)
		}
		if pipe && (len(l.writes) != 3 || !strings.HasPrefix(l.writes[1], "MAIL FROM:<from@client.test>\r\nRCPT TO:<to@server.test>\r\nBDAT 100\r\n") || !strings.HasSuffix(l.writes[1], "\r\n")) {
			t.Errorf("pipelined writes %q", l.writes) // EHLO, the group with all chunks, QUIT
		}
	}
	f := &fakeServer{}
	cfg := base(f.start(t))
	cfg.Chunking = true
	if res := runOK(t, cfg); res.Chunking || res.Delivered != 1 || res.Replies["data"][354] != 1 {
		t.Errorf("CHUNKING not offered: %+v", res)
	}
}

// LMTP: one end-of-data reply per accepted recipient; a message is
// delivered when one recipient took it.
func TestLMTP(t *testing.T) {
	for _, c := range []struct {
		refuse    string // the recipient whose delivery fails; "*" all
		delivered int64
	}{{"", 1}, {"<2to@server.test>", 1}, {"*", 0}} {
		f := &fakeServer{lmtp: true, ext: []string{"PIPELINING", "CHUNKING"}, reply: func(verb, arg string) string {
			if verb == "." && (c.refuse == "*" || arg == "TO:"+c.refuse) {
				return "452 4.2.2 mailbox full"
			}
			return ""
		}}
		for _, chunking := range []bool{false, true} {
			cfg := base(f.start(t))
			cfg.LMTP, cfg.Recipients, cfg.Chunking, cfg.Pipelining = true, 3, chunking, chunking
			res := runOK(t, cfg)
			refused := int64(0)
			switch c.refuse {
			case "":
			case "*":
				refused = 3
			default:
				refused = 1
			}
			if res.Proto != "lmtp" || res.Delivered != c.delivered || res.Replies["lhlo"][250] != 1 || res.Replies["dot"][250] != 3-refused || res.Replies["dot"][452] != refused || res.Rejections != refused {
				t.Errorf("refuse %q, chunking %v: %+v", c.refuse, chunking, res)
			}
		}
	}
}

// The smtp-source body (facts from running Postfix's smtp-source -l N):
// lines of a digit (line number modulo 10) and 77 X's while more than 80
// bytes are left, then the rest in X's; -l does not count the last CRLF.
// TestPatternBodyAllocs: the pattern body of 1 MiB is made in one
// allocation, its own (each line's X's were allocated apart, as much
// again as the body).
func TestPatternBodyAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(2, func() { patternBody(1 << 20) }); n != 1 {
		t.Errorf("%v allocations, want 1", n)
	}
}

func TestPatternBody(t *testing.T) {
	x := func(n int) string { return strings.Repeat("X", n) }
	for _, c := range []struct {
		l    int
		want string
	}{
		{1, "X\r\n"},
		{80, x(80) + "\r\n"},
		{81, "1" + x(77) + "\r\n" + "X\r\n"},
		{100, "1" + x(77) + "\r\n" + x(20) + "\r\n"},
		{160, "1" + x(77) + "\r\n" + x(80) + "\r\n"},
	} {
		if got := string(PatternBody(c.l)); got != c.want || len(got) != c.l+2 {
			t.Errorf("-l %d: %q, want %q", c.l, got, c.want)
		}
	}
	if b := PatternBody(1000); !bytes.HasPrefix(b[9*80:], []byte("0XX")) || !bytes.HasPrefix(b[10*80:], []byte("1XX")) {
		t.Errorf("line counter after 9: %q", b[9*80:11*80])
	}
	if got := string(PatternBody(0)); !strings.HasPrefix(got, "La de da de da 1.\r\n") || strings.Count(got, "\r\n") != 4 {
		t.Errorf("default body %q", got)
	}
	for _, kind := range []string{"mail", "base64", "longline"} {
		for _, l := range []int{1, 2, 77, 78, 79, 1000} {
			b := MakeBody(kind, l)
			if len(b) != l+2 || !bytes.HasSuffix(b, []byte("\r\n")) || bytes.Contains(CRLFLines(b), []byte("\r\r")) {
				t.Errorf("%s %d: %q", kind, l, b)
			}
		}
	}
	if got := string(CRLFLines([]byte("a\nb\r\n.c\rd"))); got != "a\r\nb\r\n.c d\r\n" {
		t.Errorf("CRLFLines: %q", got)
	}
	// Lines CRLF-ended already come back as they are, not copied; any
	// bare CR or LF, or no CRLF at the end, makes a copy.
	for in, want := range map[string]string{
		"\r\n": "\r\n", "a\r\n": "a\r\n", "a\r\n.b\r\n\r\n": "a\r\n.b\r\n\r\n",
		"a\r\r\n": "a \r\n", "a\n\r\n": "a\r\n\r\n", "a\r\nb": "a\r\nb\r\n", "a\r": "a \r\n", "\n": "\r\n",
		"a\r\n\r": "a\r\n \r\n", "\r\r\n\n": " \r\n\r\n", "\n\r\r\n": "\r\n \r\n", "a\r\nb\n": "a\r\nb\r\n",
	} {
		b := []byte(in)
		got := CRLFLines(b)
		if string(got) != want || (&got[0] == &b[0]) != (in == want) {
			t.Errorf("CRLFLines(%q) = %q (the same slice: %v), want %q", in, got, &got[0] == &b[0], want)
		}
	}
}

// A file message is sent as it is, its lines ended with CRLF and
// dot-stuffed on the wire.
func TestMessageFile(t *testing.T) {
	f := &fakeServer{}
	cfg := base(f.start(t))
	cfg.Message = []byte("Subject: x\n\n.leading dot\n..two\n.\nend")
	runOK(t, cfg)
	if m := f.messages(); len(m) != 1 || string(m[0]) != "Subject: x\r\n\r\n.leading dot\r\n..two\r\n.\r\nend\r\n" {
		t.Errorf("arrived: %q", m)
	}
}

// The phases are timed exactly on the test's clock: the server takes
// 2, 3, 4, 5 and 6 ms for EHLO, MAIL, RCPT, DATA and the end of data (and
// no time for the greeting, which it may send before the client's dial
// returns), so every percentile of every phase is its delay, as a
// reference histogram holding that one value gives it.
func TestPhaseLatencies(t *testing.T) {
	clk := newFakeClock()
	ms := time.Millisecond
	f := &fakeServer{clk: clk, delay: map[string]time.Duration{"EHLO": 2 * ms, "MAIL": 3 * ms, "RCPT": 4 * ms, "DATA": 5 * ms, ".": 6 * ms, "QUIT": 7 * ms}}
	cfg := base(f.start(t))
	cfg.Messages, cfg.Recipients = 4, 2
	res, err := RunWith(context.Background(), cfg, nil, clk)
	if err != nil || res.Delivered != 4 || res.Errors != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	want := func(l *Latency, n int64, d time.Duration) {
		t.Helper()
		ref := hdrhistogram.New(1, histMax, 3)
		ref.RecordValue(max(int64(d), 1))
		v := float64(ref.ValueAtQuantile(50)) / 1e3
		if l == nil || l.Count != n || l.P50 != v || l.P90 != v || l.P99 != v || l.P999 != v || l.Max != float64(ref.Max())/1e3 || l.Mean != ref.Mean()/1e3 {
			t.Errorf("%+v, want %d of %v", l, n, d)
		}
	}
	p := res.Phases
	want(p.Connect, 4, 0) // the fake clock does not move while dialling: recorded as 1ns
	want(p.Banner, 4, 0)
	want(p.EHLO, 4, 2*ms)
	want(p.Mail, 4, 3*ms)
	want(p.Rcpt, 8, 4*ms)
	want(p.Data, 4, 5*ms)
	want(p.Dot, 4, 6*ms)
	want(p.Message, 4, (2+3+4+4+5+6)*ms)
	// 4 messages of 24ms and a QUIT of 7ms after each.
	if res.DurationS != 0.124 || res.MsgPerS != 4/0.124 {
		t.Errorf("duration %v, %v msg/s", res.DurationS, res.MsgPerS)
	}

	// Mixed values: recipients that take 2, 3 and 7ms give the
	// percentiles of a reference histogram holding the same values.
	clk = newFakeClock()
	f = &fakeServer{clk: clk, delayFor: func(verb, arg string) time.Duration {
		switch {
		case verb != "RCPT":
			return 0
		case strings.Contains(arg, "<3"):
			return 2 * ms
		case strings.Contains(arg, "<2"):
			return 3 * ms
		}
		return 7 * ms
	}}
	cfg = base(f.start(t))
	cfg.Messages, cfg.Recipients, cfg.Reuse = 3, 3, true
	res, err = RunWith(context.Background(), cfg, nil, clk)
	if err != nil || res.Delivered != 3 {
		t.Fatalf("%+v, %v", res, err)
	}
	ref := hdrhistogram.New(1, histMax, 3)
	for i := 0; i < 3; i++ {
		for _, d := range []time.Duration{2, 3, 7} {
			ref.RecordValue(int64(d * ms))
		}
	}
	r := res.Phases.Rcpt
	q := func(p float64) float64 { return float64(ref.ValueAtQuantile(p)) / 1e3 }
	if r.Count != 9 || r.P50 != q(50) || r.P90 != q(90) || r.P99 != q(99) || r.Max != float64(ref.Max())/1e3 || r.Mean != ref.Mean()/1e3 || r.P50 == r.P90 {
		t.Errorf("rcpt %+v, want p50 %v p90 %v", r, q(50), q(90))
	}
	want(res.Phases.Message, 3, 12*ms)

	// Pipelined, all replies of a group count from its one write: the
	// server answers MAIL, 3 RCPTs and DATA in 1ms each, and sends the
	// replies together, so each phase took 5ms (a connection per message:
	// no group holds two messages).
	clk = newFakeClock()
	delays := map[string]time.Duration{"MAIL": ms, "RCPT": ms, "DATA": ms, ".": 10 * ms}
	f = &fakeServer{ext: []string{"PIPELINING"}, clk: clk, delay: delays}
	cfg = base(f.start(t))
	cfg.Messages, cfg.Recipients, cfg.Pipelining = 3, 3, true
	res, err = RunWith(context.Background(), cfg, nil, clk)
	if err != nil || res.Delivered != 3 {
		t.Fatalf("%+v, %v", res, err)
	}
	want(res.Phases.Mail, 3, 5*ms)
	want(res.Phases.Rcpt, 9, 5*ms)
	want(res.Phases.Data, 3, 5*ms)
	want(res.Phases.Dot, 3, 10*ms)
	want(res.Phases.Message, 3, 15*ms)

	// On a kept connection the next message's envelope follows the data
	// (written at 5ms and 20ms). This server holds the end-of-data reply
	// until it has answered the next group too, 15ms after the write, so
	// the client sees the next message's replies when its turn comes
	// (with the reply before them): its MAIL, RCPTs and DATA take no time
	// it can see, and the 5ms the server spent on them are in the dot
	// phase of the message before. Message 0 runs from 0 to 20ms, 1 from
	// 20 to 35ms, 2 from 35 to 45ms (its data goes alone: 10ms).
	// TestPhasesAcrossMessages has a server that answers each command
	// when it is done.
	clk = newFakeClock()
	f = &fakeServer{ext: []string{"PIPELINING"}, clk: clk, delay: delays}
	cfg = base(f.start(t))
	cfg.Messages, cfg.Recipients, cfg.Reuse, cfg.Pipelining = 3, 3, true, true
	res, err = RunWith(context.Background(), cfg, nil, clk)
	if err != nil || res.Delivered != 3 || res.Started != 3 || res.Errors != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	p = res.Phases
	checkLatency(t, "mail", p.Mail, 5*ms, 0, 0)
	checkLatency(t, "rcpt", p.Rcpt, 5*ms, 5*ms, 5*ms, 0, 0, 0, 0, 0, 0)
	checkLatency(t, "data", p.Data, 5*ms, 0, 0)
	checkLatency(t, "dot", p.Dot, 15*ms, 15*ms, 10*ms)
	checkLatency(t, "message", p.Message, 20*ms, 15*ms, 10*ms)
	if res.DurationS != 0.045 {
		t.Errorf("duration %v, want 45ms", res.DurationS)
	}
}

// Open loop on the test's clock, one session, a message due every 10ms:
// against a server that answers each command in 1ms, each message takes
// 4ms and none is late (but the first, which waited 2ms for the greeting
// and EHLO of the session's connection, opened at the start); when the
// end of data takes 15ms, each message starts where the last ended, and
// its latency, counted from its intended start, grows by 8ms a message:
// the wait is charged (no coordinated omission).
func TestOpenLoop(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		dot       time.Duration
		latencies []time.Duration
		late      []time.Duration
	}{
		{ms, []time.Duration{6, 4, 4, 4, 4}, []time.Duration{2, 0, 0, 0, 0}},
		{15 * ms, []time.Duration{20, 28, 36, 44, 52}, []time.Duration{2, 10, 18, 26, 34}},
	} {
		clk := newFakeClock()
		f := &fakeServer{clk: clk, delay: map[string]time.Duration{"CONNECT": ms, "EHLO": ms, "MAIL": ms, "RCPT": ms, "DATA": ms, ".": c.dot}}
		cfg := base(f.start(t))
		cfg.Messages, cfg.Reuse, cfg.QPS = 5, true, 100
		res, err := RunWith(context.Background(), cfg, nil, clk)
		if err != nil || res.Delivered != 5 || res.Errors != 0 {
			t.Fatalf("%+v, %v", res, err)
		}
		lat, late := hdrhistogram.New(1, histMax, 3), hdrhistogram.New(1, histMax, 3)
		for i := range c.latencies {
			lat.RecordValue(int64(c.latencies[i] * ms))
			late.RecordValue(max(int64(c.late[i]*ms), 1))
		}
		m, l := res.Phases.Message, res.Lateness
		q := func(h *hdrhistogram.Histogram, p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1e3 }
		if m.Count != 5 || m.P50 != q(lat, 50) || m.Max != float64(lat.Max())/1e3 || m.Mean != lat.Mean()/1e3 {
			t.Errorf("dot %v: latency %+v, want p50 %v max %v", c.dot, m, q(lat, 50), float64(lat.Max())/1e3)
		}
		if l == nil || l.Count != 5 || l.P50 != q(late, 50) || l.Max != float64(late.Max())/1e3 {
			t.Errorf("dot %v: lateness %+v, want p50 %v max %v", c.dot, l, q(late, 50), float64(late.Max())/1e3)
		}
	}
}

// -c's counter, the progress lines (one per second of the test's clock)
// and the interval log.
func TestCounterProgressLog(t *testing.T) {
	clk := newFakeClock()
	f := &fakeServer{clk: clk, delay: map[string]time.Duration{".": 400 * time.Millisecond}}
	cfg := base(f.start(t))
	var counter, progress, hlog bytes.Buffer
	cfg.Messages, cfg.Reuse, cfg.Counter, cfg.Progress, cfg.HdrLog = 5, true, &counter, &progress, &hlog
	res, err := RunWith(context.Background(), cfg, nil, clk)
	if err != nil || res.Delivered != 5 {
		t.Fatalf("%+v, %v", res, err)
	}
	if counter.String() != "1\r2\r3\r4\r5\r\n" {
		t.Errorf("counter %q", counter.String())
	}
	if n := strings.Count(progress.String(), "\n"); n < 2 || !strings.Contains(progress.String(), "delivered") {
		t.Errorf("progress:\n%s", progress.String())
	}
	byTag := logCounts(t, &hlog)
	// The delivered messages untagged, and each phase under its name.
	want := map[string]int64{"": 5, "connect": 1, "banner": 1, "ehlo": 1, "mail": 5, "rcpt": 5, "data": 5, "dot": 5}
	if !maps.Equal(byTag, want) {
		t.Errorf("the log holds %v latencies by tag, want %v", byTag, want)
	}
}

// lateClock holds the run's ticker back until the sessions have moved the
// clock past its first second, as a loaded machine can: the goroutine that
// prints progress may get to its first wait after the sessions have run.
type lateClock struct {
	*fakeClock
	gate chan struct{}
}

func (c lateClock) After(d time.Duration) <-chan time.Time { <-c.gate; return c.fakeClock.After(d) }
func (c lateClock) At(t time.Time) <-chan time.Time        { <-c.gate; return c.fakeClock.At(t) }

// The progress lines fall on the run's seconds, however late the
// goroutine that prints them arms its first wait (CI, -race: a run of
// two seconds printed its final line only).
func TestProgressSecondsFromBase(t *testing.T) {
	clk := lateClock{newFakeClock(), make(chan struct{})}
	start := clk.Now()
	var once sync.Once
	clk.Moved = func(now time.Time) {
		if now.Sub(start) > 1500*time.Millisecond {
			once.Do(func() { close(clk.gate) })
		}
	}
	f := &fakeServer{clk: clk.fakeClock, delay: map[string]time.Duration{".": 400 * time.Millisecond}}
	cfg := base(f.start(t))
	var progress bytes.Buffer
	cfg.Messages, cfg.Reuse, cfg.Progress = 5, true, &progress
	res, err := RunWith(context.Background(), cfg, nil, clk)
	if err != nil || res.Delivered != 5 {
		t.Fatalf("%+v, %v", res, err)
	}
	// The first second's, the end's, and the second second's when its
	// tick comes before the end is seen (both at 2 s).
	if n := strings.Count(progress.String(), "\n"); n < 2 || n > 3 {
		t.Errorf("%d progress lines for a run of 2 s, want 2 or 3:\n%s", n, progress.String())
	}
}

// -c ends its count with a line end, as Postfix's smtp-source does when
// its run ends, even when no message completed: the count line is then
// empty, but what follows starts on a line of its own.
func TestCounterNoneCompleted(t *testing.T) {
	f := &fakeServer{reply: func(verb, arg string) string {
		if verb == "MAIL" {
			return "550 5.7.1 no"
		}
		return ""
	}}
	cfg := base(f.start(t))
	var counter bytes.Buffer
	cfg.Messages, cfg.Counter = 2, &counter
	res, err := Run(context.Background(), cfg)
	if err != nil || res.Delivered != 0 || res.Failed != 2 {
		t.Fatalf("%+v, %v", res, err)
	}
	if counter.String() != "\n" {
		t.Errorf("counter %q, want %q", counter.String(), "\n")
	}
}

// A configuration Check refuses is a *ConfigError naming the field at
// fault, which errors.Is takes for ErrConfig: the command names the
// field's flag from it.
func TestConfigErrorField(t *testing.T) {
	for field, cfg := range map[string]Config{
		"Addr":       {},
		"From":       {Addr: "x", From: "a\r\nRCPT TO:<b>"},
		"To":         {Addr: "x", To: "a<b"},
		"Helo":       {Addr: "x", Helo: "a\nb"},
		"Subject":    {Addr: "x", Subject: "a\rb"},
		"XClient":    {Addr: "x", XClient: "NAME=a\r\nQUIT"},
		"XForward":   {Addr: "x", XForward: "NAME=a\n"},
		"DSNNotify":  {Addr: "x", DSNNotify: "SOMETIMES"},
		"DSNRet":     {Addr: "x", DSNRet: "ALL"},
		"DSNEnvID":   {Addr: "x", DSNEnvID: "a\tb"},
		"AuthMech":   {Addr: "x", AuthUser: "u", AuthMech: "NTLM"},
		"AuthPass":   {Addr: "x", AuthUser: "u", AuthPass: "p\x00"},
		"Body":       {Addr: "x", Body: "html"},
		"Length":     {Addr: "x", Length: MaxLength + 1},
		"LengthMax":  {Addr: "x", Length: 1, LengthMax: MaxLength + 1},
		"RandomWait": {Addr: "x", RandomWait: time.Second, QPS: 10},
		"Headers":    {Addr: "x", Headers: []string{"no colon"}},
		"FromList":   {Addr: "x", FromList: []string{"a\x00b"}},
		"ToList":     {Addr: "x", ToList: []string{"<a>", "b>c"}},
		"Stages":     {Addr: "x", Stages: []Stage{{Duration: time.Second}}},
		"Duration":   {Addr: "x", QPS: 1000, Duration: time.Millisecond - 1},
	} {
		err := cfg.Check()
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != field || !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v (%#v), want a *ConfigError for %s", field, err, ce, field)
		}
	}
	// A negative count, time or rate names its field too, in the
	// error's text as in Field (all three kinds were "" before, the text
	// "negative count", "negative rate or time").
	for _, c := range []struct {
		field string
		cfg   Config
	}{
		{"Sessions", Config{Addr: "x", Sessions: -1}},
		{"Messages", Config{Addr: "x", Messages: -1}},
		{"Length", Config{Addr: "x", Length: -1}},
		{"Recipients", Config{Addr: "x", Recipients: -1}},
		{"ChunkSize", Config{Addr: "x", ChunkSize: -1}},
		{"ConnectTries", Config{Addr: "x", ConnectTries: -1}},
		{"WindowSize", Config{Addr: "x", WindowSize: -1}},
		{"QPS", Config{Addr: "x", QPS: -1}},
		{"QPS", Config{Addr: "x", QPS: math.NaN()}},
		{"QPS", Config{Addr: "x", QPS: math.Inf(1)}},
		{"Duration", Config{Addr: "x", Duration: -1}},
		{"Spin", Config{Addr: "x", Spin: -1}},
		{"DialTimeout", Config{Addr: "x", DialTimeout: -1}},
		{"Timeout", Config{Addr: "x", Timeout: -1}},
		{"Wait", Config{Addr: "x", Wait: -1}},
		{"RandomWait", Config{Addr: "x", RandomWait: -1}},
	} {
		field, cfg := c.field, c.cfg
		err := cfg.Check()
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != field || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v (%#v), want a *ConfigError for %s", field, err, ce, field)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Addr: "x", Sessions: -1},
		{Addr: "x", QPS: -1},
		{Addr: "x", Body: "html"},
		{Addr: "x", Body: "base64"},
		{Addr: "x", From: "a\r\nRCPT TO:<b>"},
		{Addr: "x", Wait: time.Second, RandomWait: time.Second},
		{Addr: "x", Wait: time.Second, QPS: 10},
		{Addr: "x", RandomWait: -1},
		{Addr: "x", ConnectTries: -1},
		{Addr: "x", WindowSize: -1},
		{Addr: "x", WindowSize: int(overCInt)}, // negative where int has 32 bits
		{Addr: "x", IPVersion: 5},
		{Addr: "x", Length: MaxLength + 1},
		{Addr: "x", Length: 1, LengthMax: MaxLength + 1},
		{Addr: "x", Recipients: MaxRecipients + 1},
		{Addr: "x", Sessions: MaxSessions + 1},
		{Addr: "x", QPS: 1000, Duration: time.Millisecond - 1}, // one due, at once: missed, "every session busy"
	} {
		if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", cfg, err)
		}
	}
	for in, want := range map[string][2]string{
		"host":             {"tcp", "host:25"},
		"inet:host:2525":   {"tcp", "host:2525"},
		"127.0.0.1:25":     {"tcp", "127.0.0.1:25"},
		"[::1]:26":         {"tcp", "[::1]:26"},
		"::1":              {"tcp", "[::1]:25"},
		"unix:/run/s.sock": {"unix", "/run/s.sock"},
	} {
		if n, a := Network(in, 0, "25"); n != want[0] || a != want[1] {
			t.Errorf("%q: %s %s, want %v", in, n, a, want)
		}
	}
	for ipv, want := range map[int]string{4: "tcp4", 6: "tcp6"} {
		if n, _ := Network("host:25", ipv, "25"); n != want {
			t.Errorf("IP version %d: %s, want %s", ipv, n, want)
		}
		if n, _ := Network("unix:/s", ipv, "25"); n != "unix" {
			t.Errorf("IP version %d, unix:/s: %s", ipv, n)
		}
	}
	if _, err := Verify(strings.NewReader("nothex 12\n"), nil); err == nil {
		t.Error("a bad digest line was taken")
	}
}

// Cancelling the context ends a run that waits for a reply that never
// comes: Run returns the results so far, and the connections it broke by
// closing them are not errors. The message under way is abandoned, not
// failed: the server has it whole and may have taken it (interrupted runs
// counted such messages failed, so a sink had more messages than the
// source's delivered and failed could explain).
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n atomic.Int64
	f := &fakeServer{reply: func(verb, arg string) string {
		if verb == "." && n.Add(1) == 3 {
			cancel()
			return "hang"
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Messages, cfg.Reuse = 10, true
	res, err := RunWith(ctx, cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Started != 3 || res.Delivered != 2 || res.Failed != 0 || res.Abandoned != 1 || !res.Interrupted || res.Errors != 0 {
		t.Fatalf("%+v", res)
	}
	accounted(t, res)
}

// A context that ends once every message is done, while the sessions
// wait for QUIT's reply, leaves the messages' figures whole, and still
// makes the run Interrupted: QUIT's reply, which counts (a server that
// closes instead is an I/O error, one that withholds it a timeout), was
// never read; smtp-source exited 0 for a ^C there and 1 for every other
// (Result.Interrupted). One that ends with messages not yet started
// does too.
func TestCancelAtQuit(t *testing.T) {
	for _, reuse := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		var quits atomic.Int64
		f := &fakeServer{reply: func(verb, arg string) string {
			if verb == "QUIT" && quits.Add(1) == 2 {
				cancel()
				return "hang"
			}
			return ""
		}}
		cfg := base(f.start(t))
		cfg.Messages, cfg.Reuse = 2, reuse
		if reuse {
			cfg.Sessions = 2
		}
		res, err := RunWith(ctx, cfg, nil, nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if res.Delivered != 2 || res.Abandoned != 0 || res.Errors != 0 || !res.Interrupted {
			t.Errorf("reuse %v: delivered %d, abandoned %d, errors %d, interrupted %v; want 2, 0, 0, true", reuse, res.Delivered, res.Abandoned, res.Errors, res.Interrupted)
		}
		accounted(t, res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeServer{reply: func(verb, arg string) string {
		if verb == "QUIT" {
			cancel()
			return "hang"
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Messages = 3
	res, err := RunWith(ctx, cfg, nil, nil)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if res.Delivered != 1 || !res.Interrupted {
		t.Errorf("messages left: delivered %d, interrupted %v; want 1, true", res.Delivered, res.Interrupted)
	}
}

// A server without ESMTP: EHLO refused, HELO taken, the message sent
// unpipelined, and no error. A server that greets with 554: each
// connection is a connect refusal, its message fails, and the run goes on
// (after a back-off, on the test's clock; see TestGreetingBackoff).
func TestGreeting(t *testing.T) {
	f := &fakeServer{ext: []string{"PIPELINING"}, reply: func(verb, arg string) string {
		if verb == "EHLO" {
			return "502 5.5.2 EHLO not supported"
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Pipelining = true
	res := runOK(t, cfg)
	if res.Delivered != 1 || res.Errors != 0 || res.Pipelining || res.Replies["ehlo"][502] != 1 || res.Replies["helo"][250] != 1 {
		t.Errorf("no ESMTP: %+v", res)
	}
	if c := f.commands(); len(c) < 2 || c[0] != "EHLO client.test" || c[1] != "HELO client.test" {
		t.Errorf("commands %q", c)
	}
	f = &fakeServer{reply: func(verb, arg string) string {
		if verb == "CONNECT" {
			return "554 5.7.1 go away"
		}
		return ""
	}}
	cfg = base(f.start(t))
	cfg.Messages = 2
	res, err := RunWith(context.Background(), cfg, nil, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	accounted(t, res)
	if res.Delivered != 0 || res.Failed != 2 || res.ConnectRefusals != 2 || res.Rejections != 0 || res.Errors != 2 || res.Replies["banner"][554] != 2 || res.Connections != 2 {
		t.Errorf("554 greeting: %+v", res)
	}
}

// A server that stops answering: each exchange is bounded by Timeout, the
// wait counts as an I/O error, and the next message gets a new
// connection.
func TestTimeout(t *testing.T) {
	var n atomic.Int64
	f := &fakeServer{reply: func(verb, arg string) string {
		if verb == "DATA" && n.Add(1) == 1 {
			return "hang"
		}
		return ""
	}}
	h := holdDeadlines(f)
	cfg := base(f.start(t))
	cfg.Messages, cfg.Reuse, cfg.Timeout = 2, true, 50*time.Millisecond
	res := h.run(t, cfg)
	if res.Delivered != 1 || res.Failed != 1 || res.IOErrors != 1 || res.Errors != 1 || res.Connections != 2 || !strings.Contains(res.FirstError, "timeout") {
		t.Fatalf("%+v", res)
	}
}

// unix:PATH dials a UNIX-domain socket, as smtp-source's unix:pathname.
func TestUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "smtp.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("no UNIX-domain sockets: %v", err)
	}
	f := &fakeServer{}
	f.serveOn(t, ln)
	cfg := base("unix:" + path)
	cfg.Messages, cfg.Reuse = 3, true
	if res := runOK(t, cfg); res.Delivered != 3 || res.Errors != 0 || res.Connections != 1 {
		t.Fatalf("%+v", res)
	}
}

// A progress line of a second in which no message was delivered has no
// latency to show: "-", not 0.0µs (a stalled server read as the fastest).
// The server's reply waits, on the clock's move past the first second,
// until that second's line is out.
func TestProgressNothingDelivered(t *testing.T) {
	clk := newFakeClock()
	start := clk.Now()
	pw := &signalWriter{wrote: make(chan struct{}, 16)}
	clk.Moved = func(now time.Time) {
		if now.Sub(start) >= time.Second && pw.lines() == 0 {
			select {
			case <-pw.wrote:
			case <-time.After(time.Minute):
				t.Error("no progress line a minute after the first second")
			}
		}
	}
	f := &fakeServer{clk: clk, delay: map[string]time.Duration{".": 1500 * time.Millisecond}}
	cfg := base(f.start(t))
	cfg.Messages, cfg.Progress = 1, pw
	res, err := RunWith(context.Background(), cfg, nil, clk)
	if err != nil || res.Delivered != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
	first, _, _ := strings.Cut(pw.String(), "\n")
	if !strings.Contains(first, "delivered        0") || !strings.Contains(first, "p50 -  p99 -  max -") {
		t.Errorf("first progress line %q: want delivered 0 and no percentiles", first)
	}
}

// signalWriter keeps what is written to it and signals each Write.
type signalWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	n     int
	wrote chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	w.n++
	w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *signalWriter) lines() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// armClock tells when the run has armed its next progress tick (At),
// and for which instant.
type armClock struct {
	*fakeClock
	mu     sync.Mutex
	armed  time.Time // the latest instant armed
	signal chan struct{}
}

func (c *armClock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	if t.After(c.armed) {
		c.armed = t
	}
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
	return c.fakeClock.At(t)
}

// waitArmed waits until an instant after t has been armed.
func (c *armClock) waitArmed(t time.Time) bool {
	for {
		c.mu.Lock()
		ok := c.armed.After(t)
		c.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-c.signal:
		case <-time.After(time.Minute):
			return false
		}
	}
}

// The progress lines of a run of 2.5 s: one at each second, and the last
// at the end, whose rate is over the half second it covers, not over a
// whole one. A message takes 0.5 s (the server's reply to the end of
// data); the server, moving the clock to a whole second, waits until that
// second's line is out and the next second's tick armed, so the line
// sees the clock there and the message whose reply is held not yet
// delivered.
func TestProgressLastStretch(t *testing.T) {
	clk := &armClock{fakeClock: newFakeClock(), signal: make(chan struct{}, 1)}
	start := clk.Now()
	clk.Moved = func(now time.Time) {
		if k := now.Sub(start).Truncate(time.Second); k > 0 && !clk.waitArmed(start.Add(k)) {
			t.Errorf("no progress line for %v a minute after the clock passed it", k)
		}
	}
	f := &fakeServer{clk: clk.fakeClock, delay: map[string]time.Duration{".": 500 * time.Millisecond}}
	cfg := base(f.start(t))
	var progress bytes.Buffer
	cfg.Messages, cfg.Reuse, cfg.Progress = 5, true, &progress
	res, err := RunWith(context.Background(), cfg, nil, clk)
	if err != nil || res.Delivered != 5 || res.DurationS != 2.5 {
		t.Fatalf("%+v, %v", res, err)
	}
	// Delivered at 0.5 and 1 s, at 1.5 and 2 s, at 2.5 s; each line has
	// those delivered before it.
	want := []string{
		"   1.0s  delivered        1         1 msg/s  p50 500ms  p99 500ms  max 500ms  failed 0  errors 0",
		"   2.0s  delivered        3         2 msg/s  p50 500ms  p99 500ms  max 500ms  failed 0  errors 0",
		"   2.5s  delivered        5         4 msg/s  p50 500ms  p99 500ms  max 500ms  failed 0  errors 0",
	}
	if got := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n"); !slices.Equal(got, want) {
		t.Errorf("progress:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A progress line's rate over no time is none, not +Inf or NaN.
func TestProgressRate(t *testing.T) {
	for _, c := range []struct {
		n    int64
		secs float64
		want string
	}{{5, 0, "-"}, {0, 0, "-"}, {5, 0.5, "10"}, {0, 1, "0"}} {
		if got := rate(c.n, c.secs); got != c.want {
			t.Errorf("rate(%d, %g) = %q, want %q", c.n, c.secs, got, c.want)
		}
	}
}

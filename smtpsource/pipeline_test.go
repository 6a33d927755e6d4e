package smtpsource

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// With pipelining on a kept connection, each message's data and end line
// go out in one write with the next message's MAIL, RCPTs and DATA, which
// end the group (RFC 2920 §3.1); the last message's data goes alone.
// Without -d, or without pipelining, no write holds two messages.
func TestPipeliningAcrossMessages(t *testing.T) {
	env := "MAIL FROM:<from@client.test>\r\nRCPT TO:<2to@server.test>\r\nRCPT TO:<to@server.test>\r\nDATA\r\n"
	for _, c := range []struct {
		reuse, pipe bool
		ahead       int // writes that hold a message's end and the next envelope
	}{{true, true, 3}, {false, true, 0}, {true, false, 0}} {
		f := &fakeServer{ext: []string{"PIPELINING"}}
		var l writeLog
		cfg := base(f.start(t))
		cfg.Messages, cfg.Recipients, cfg.Reuse, cfg.Pipelining, cfg.Digests = 4, 2, c.reuse, c.pipe, true
		res, err := RunWith(context.Background(), cfg, l.dial, nil)
		if err != nil || res.Delivered != 4 || res.Started != 4 || res.Errors != 0 {
			t.Fatalf("%+v: %+v, %v", c, res, err)
		}
		ahead, alone := 0, 0
		for _, w := range l.writes {
			switch {
			case strings.HasSuffix(w, "\r\n.\r\n"+env):
				ahead++
			case strings.HasSuffix(w, "\r\n.\r\n"):
				alone++
			}
		}
		if ahead != c.ahead || alone != 4-c.ahead {
			t.Errorf("%+v: %d writes with data and the next envelope, %d data alone; writes %q", c, ahead, alone, l.writes)
		}
		if c.reuse && c.pipe && len(l.writes) != 7 { // EHLO, the first group, 4 data writes, QUIT
			t.Errorf("%+v: writes %q", c, l.writes)
		}
		if v, err := Verify(strings.NewReader(sentLog(f.messages())), res.Digests); err != nil || !v.OK() || v.Matched != 4 {
			t.Errorf("%+v: verify %+v %v", c, v, err)
		}
	}
}

// In open loop the next message rides behind the data only once it is
// due: messages are due every 10ms; with quick replies the data is written
// at 3ms, before the next is due, and goes alone; when DATA's reply takes
// 12ms the data is written at 14ms and the next message (due at 10ms,
// 4ms late) follows it, and so on, each later than the last.
func TestPipeliningAcrossMessagesOpenLoop(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		data  time.Duration
		ahead int
	}{{ms, 0}, {12 * ms, 3}} {
		clk := newFakeClock()
		f := &fakeServer{ext: []string{"PIPELINING"}, clk: clk, delay: map[string]time.Duration{"MAIL": ms, "RCPT": ms, "DATA": c.data}}
		var l writeLog
		cfg := base(f.start(t))
		cfg.Messages, cfg.Reuse, cfg.Pipelining, cfg.QPS = 4, true, true, 100
		res, err := RunWith(context.Background(), cfg, l.dial, clk)
		if err != nil || res.Delivered != 4 || res.Errors != 0 {
			t.Fatalf("%+v: %+v, %v", c, res, err)
		}
		ahead := 0
		for _, w := range l.writes {
			if strings.Contains(w, ".\r\nMAIL FROM:") {
				ahead++
			}
		}
		if ahead != c.ahead {
			t.Errorf("DATA in %v: %d messages sent ahead, want %d; writes %q", c.data, ahead, c.ahead, l.writes)
		}
		// Each message takes 14ms against a schedule of 10ms: message k
		// starts 4k ms late, sent ahead or not.
		ref := hdrhistogram.New(1, histMax, 3)
		for k := range 4 {
			ref.RecordValue(max(int64(c.data+2*ms-10*ms)*int64(k), 1)) // 2ms for MAIL and RCPT
		}
		if l := res.Lateness; c.ahead > 0 && (l == nil || l.Count != 4 || l.Max != float64(ref.Max())/1e3 || l.P50 != float64(ref.ValueAtQuantile(50))/1e3) {
			t.Errorf("DATA in %v: lateness %+v, want 0, 4, 8 and 12ms", c.data, res.Lateness)
		}
	}
}

// Replies cut into pieces of any size by the server's writes and by the
// client's reads, to groups that span two messages, and some of them
// refusals: every reply is matched to its command. The codes the client
// counts by phase are the codes the server sent by command, the messages
// it counts delivered are the ones the server accepted, byte for byte, and
// nothing is a protocol error. Run for SMTP and LMTP.
func TestPipeliningSplitReplies(t *testing.T) {
	for _, lmtp := range []bool{false, true} {
		for seed := range 4 {
			var mails, rcpts, dots atomic.Int64
			f := &fakeServer{ext: []string{"PIPELINING"}, lmtp: lmtp, splitMax: 1 + 3*seed, reply: func(verb, arg string) string {
				switch verb {
				case "MAIL":
					if mails.Add(1)%5 == 0 {
						return "451 4.3.0 try again"
					}
				case "RCPT":
					if rcpts.Add(1)%7 == 0 {
						return "550 5.1.1 no such user"
					}
				case ".":
					if dots.Add(1)%4 == 0 {
						return "554 5.7.1 refused"
					}
				}
				return ""
			}}
			cfg := base(f.start(t))
			cfg.Sessions, cfg.Messages, cfg.Recipients, cfg.Reuse, cfg.Pipelining, cfg.LMTP, cfg.Body, cfg.Digests = 3, 60, 2, true, true, lmtp, "mail", true
			res, err := RunWith(context.Background(), cfg, choppyDial(1+2*seed), nil)
			name := fmt.Sprintf("lmtp %v, seed %d", lmtp, seed)
			if err != nil || res.Started != 60 || res.Delivered+res.Failed != 60 || res.IOErrors != 0 || res.ProtocolErrors != 0 || res.Connections != 3 {
				t.Fatalf("%s: %+v, %v", name, res, err)
			}
			sameCodes(t, name, res, f)
			accounted(t, res)
			if taken := f.accepted(); res.Delivered != int64(len(taken)) {
				t.Errorf("%s: delivered %d, the server accepted %d", name, res.Delivered, len(taken))
			} else if v, err := Verify(strings.NewReader(sentLog(taken)), res.Digests); err != nil || !v.OK() {
				t.Errorf("%s: verify %+v %v", name, v, err)
			}
			if res.Delivered == 0 || res.Delivered == 60 || res.Rejections == 0 {
				t.Errorf("%s: the script refused nothing or everything: %+v", name, res)
			}
		}
	}
}

// replyPhase is the phase under which the client counts the reply to each
// of the fake server's verbs.
var replyPhase = map[string]string{"CONNECT": "banner", "EHLO": "ehlo", "LHLO": "lhlo", "MAIL": "mail", "RCPT": "rcpt",
	"DATA": "data", "BDAT": "bdat", ".": "dot", "RSET": "rset", "QUIT": "quit", "STARTTLS": "starttls", "AUTH": "auth"}

// sameCodes checks that the reply codes the client counted by phase are
// the ones the fake server sent by command: every reply was matched to
// its command.
func sameCodes(t *testing.T, name string, res *Result, f *fakeServer) {
	t.Helper()
	sent := f.sentCodes()
	for verb, codes := range sent {
		for code, n := range codes {
			if got := res.Replies[replyPhase[verb]][code]; got != n {
				t.Errorf("%s: %s %d: server sent %d, client counted %d (client's counts %v)", name, verb, code, n, got, res.Replies)
			}
		}
	}
	for ph, codes := range res.Replies {
		for code, n := range codes {
			found := false
			for verb, p := range replyPhase {
				found = found || p == ph && sent[verb][code] == n
			}
			if !found {
				t.Errorf("%s: client counted %d × %d under %s, which the server did not send (server's %v)", name, n, code, ph, sent)
			}
		}
	}
}

// What each phase of a message measures does not depend on whether its
// commands went out behind the previous message's data: a phase runs from
// the command's turn, the later of its write and the previous message's
// last reply, so the server's time on the previous message is in no phase
// of the next. On the test's clock, a server that answers each command as
// soon as it is done (MAIL, each RCPT and DATA in 1ms, the data in 10ms)
// gives every message, sent ahead or not, MAIL 1ms, its RCPTs 2, 3 and 4ms
// and DATA 5ms (a group's replies count from its turn), its data 10ms.
// In closed loop a message sent ahead starts with its turn, so each takes
// 15ms as if sent alone; in open loop (a message due every 10ms) each
// counts from its intended start, 15, 20, 25 and 30ms: the wait behind
// the one before is charged to it.
func TestPhasesAcrossMessages(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		qps      float64
		messages []time.Duration
		ahead    int // messages written behind the previous one's data
	}{
		{0, []time.Duration{15 * ms, 15 * ms, 15 * ms, 15 * ms}, 3},
		{100, []time.Duration{15 * ms, 20 * ms, 25 * ms, 30 * ms}, 2},
	} {
		name := fmt.Sprintf("qps %v", c.qps)
		clk := newFakeClock()
		st := newStepper()
		f := &fakeServer{ext: []string{"PIPELINING"}, clk: clk, step: st, eager: true,
			delay: map[string]time.Duration{"MAIL": ms, "RCPT": ms, "DATA": ms, ".": 10 * ms}}
		cfg := base(f.start(t))
		cfg.Messages, cfg.Recipients, cfg.Reuse, cfg.Pipelining, cfg.QPS = 4, 3, true, true, c.qps
		res, err := RunWith(context.Background(), cfg, st.dial, clk)
		if err != nil || res.Delivered != 4 || res.Errors != 0 || st.lostStep() {
			t.Fatalf("%s: %+v, %v (step lost: %v)", name, res, err, st.lostStep())
		}
		ahead := 0
		for _, w := range st.log.writes {
			if strings.Contains(w, ".\r\nMAIL FROM:") {
				ahead++
			}
		}
		if ahead != c.ahead {
			t.Errorf("%s: %d messages sent ahead, want %d: %q", name, ahead, c.ahead, st.log.writes)
		}
		four := func(d ...time.Duration) []time.Duration {
			var out []time.Duration
			for range 4 {
				out = append(out, d...)
			}
			return out
		}
		p := res.Phases
		checkLatency(t, name+": mail", p.Mail, four(ms)...)
		checkLatency(t, name+": rcpt", p.Rcpt, four(2*ms, 3*ms, 4*ms)...)
		checkLatency(t, name+": data", p.Data, four(5*ms)...)
		checkLatency(t, name+": dot", p.Dot, four(10*ms)...)
		checkLatency(t, name+": message", p.Message, c.messages...)
	}
}

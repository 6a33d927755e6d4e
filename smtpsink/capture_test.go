package smtpsink

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	nettextproto "net/textproto"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/dot"
)

// captured is a Config.Capture that keeps every message's transaction
// and data, and whether its writer was closed.
type captured struct {
	mu   sync.Mutex
	txs  []Transaction
	bufs []*capBuf
}

type capBuf struct {
	c      *captured
	b      bytes.Buffer
	closed bool
}

func (b *capBuf) Write(p []byte) (int, error) {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	return b.b.Write(p)
}

func (b *capBuf) Close() error {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	b.closed = true
	return nil
}

func (c *captured) capture(t Transaction) io.WriteCloser {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := &capBuf{c: c}
	c.txs, c.bufs = append(c.txs, t), append(c.bufs, b)
	return b
}

// get returns capture i's transaction, data and whether it was closed.
func (c *captured) get(i int) (Transaction, string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i >= len(c.txs) {
		return Transaction{}, "", false
	}
	return c.txs[i], c.bufs[i].b.String(), c.bufs[i].closed
}

func (c *captured) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.txs)
}

// Capture gets each message's data as the digest sees it, and its
// transaction (dated when MAIL was taken, by the sessions' clock); its
// writer is closed before the reply to the data, whatever the reply, and
// when the transaction or the session ends first.
func TestCapture(t *testing.T) {
	var cp captured
	ended := make(chan SessionInfo, 1)
	clk := &fakeClock{t: time.Now()} // the deadlines are the connection's, by this clock
	s := startSink(t, Config{Capture: cp.capture, OnSessionEnd: func(i SessionInfo) { ended <- i }}, hooks{now: clk.now})
	c := dial(t, s)
	c.cmd(250, "EHLO client.test")
	mailAt := clk.now()
	c.cmd(250, "MAIL FROM:<a@b> SIZE=10")
	clk.advance(time.Minute)
	c.cmd(250, "RCPT TO:<c@d> NOTIFY=NEVER")
	c.cmd(250, "RCPT TO:<e@f>")
	c.cmd(354, "DATA")
	c.cmd(250, "Subject: x\r\n\r\n..dot\r\nline\r\n.")
	if tx, data, closed := cp.get(0); !closed || data != "Subject: x\r\n\r\n.dot\r\nline\r\n" ||
		!reflect.DeepEqual(tx, Transaction{Session: 1, Seq: 1, RemoteAddr: tx.RemoteAddr, Proto: "ESMTP", Helo: "client.test",
			MailArgs: "<a@b> SIZE=10", Mail: mailAt, RcptArgs: []string{"<c@d> NOTIFY=NEVER", "<e@f>"}}) {
		t.Errorf("capture 0: closed %v, data %q, %+v", closed, data, tx)
	}
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(250, "RCPT TO:<c@d>")
	c.send("BDAT 5\r\nhelloBDAT 1 LAST\r\n!")
	c.codes(2)
	if tx, data, closed := cp.get(1); !closed || data != "hello!" || tx.Seq != 2 || len(tx.RcptArgs) != 1 {
		t.Errorf("capture 1: closed %v, data %q, %+v", closed, data, tx)
	}
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(250, "RCPT TO:<c@d>")
	c.cmd(354, "DATA")
	c.cmd(550, "bare\nLF\r\n.") // refused: captured up to its problem
	if _, data, closed := cp.get(2); !closed || data != "bare" {
		t.Errorf("capture 2: closed %v, data %q", closed, data)
	}
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(250, "RCPT TO:<c@d>")
	c.send("BDAT 3\r\nabc")
	c.codes(1)
	c.cmd(250, "RSET") // the transaction ends before its message does
	if _, data, closed := cp.get(3); !closed || data != "abc" {
		t.Errorf("capture 3: closed %v, data %q", closed, data)
	}
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(250, "RCPT TO:<c@d>")
	c.cmd(354, "DATA")
	c.send("cut off")
	for cp.len() < 5 {
		time.Sleep(time.Millisecond) // the capture starts after the 354 has left
	}
	c.raw.Close() // the session ends in the middle of the data
	<-ended
	if _, data, closed := cp.get(4); !closed || !strings.HasPrefix("cut off", data) {
		t.Errorf("capture 4: closed %v, data %q", closed, data)
	}
	if st := s.Stats(); st.Messages != 2 {
		t.Errorf("messages %d, want 2", st.Messages)
	}
}

// Decide chooses the reply to a message's data from its envelope and,
// with Capture, its bytes: a 2xx accepts (with its text, or the sink's),
// a 4xx or 5xx refuses, Close alone drops the connection with no reply
// (it was taken for the zero Reply: the message was accepted), the zero
// Reply leaves the sink's own.
func TestDecide(t *testing.T) {
	var cp captured
	var got messages
	decide := func(m Message) Reply {
		// The last capture is this message's: sessions here are one at a time.
		_, data, _ := cp.get(cp.len() - 1)
		switch {
		case m.From == "no@x":
			return Reply{Code: 550, Text: "5.7.1 not from you"}
		case strings.Contains(data, "VIRUS"):
			return Reply{Code: 554, Text: "5.7.1 infected"}
		case m.From == "custom@x":
			return Reply{Code: 250, Text: "2.0.0 kept as " + m.To[0]}
		case m.From == "bye@x":
			return Reply{Code: 421, Text: "4.3.2 closing"}
		case m.From == "drop@x":
			return Reply{Close: true}
		}
		return Reply{}
	}
	s := startSink(t, Config{Capture: cp.capture, Decide: decide, OnMessage: got.add}, hooks{})
	c := dial(t, s)
	c.cmd(250, "EHLO c")
	send := func(from, body string, code int) string {
		t.Helper()
		c.cmd(250, "MAIL FROM:<"+from+">")
		c.cmd(250, "RCPT TO:<r@x>")
		c.cmd(354, "DATA")
		return c.cmd(code, body+"\r\n.")
	}
	send("no@x", "hi", 550)
	send("a@x", "a VIRUS here", 554)
	if text := send("custom@x", "hi", 250); text != "2.0.0 kept as r@x" {
		t.Errorf("custom reply %q", text)
	}
	if text := send("a@x", "hi", 250); !strings.HasPrefix(text, "2.0.0 Ok: queued as") {
		t.Errorf("own reply %q", text)
	}
	send("bye@x", "hi", 421)
	if _, err := c.R.ReadByte(); err != io.EOF {
		t.Errorf("after Decide's 421: %v, want EOF", err)
	}
	c = dial(t, s)
	c.cmd(250, "EHLO c")
	c.cmd(250, "MAIL FROM:<drop@x>")
	c.cmd(250, "RCPT TO:<r@x>")
	c.cmd(354, "DATA")
	c.send("hi\r\n.\r\n")
	if b, err := c.R.ReadByte(); err != io.EOF {
		t.Errorf("after Decide's Close: %q, %v; want EOF and no reply", b, err)
	}
	ms := got.all()
	if len(ms) != 2 || ms[0].From != "custom@x" || ms[0].Seq != 1 || ms[1].Seq != 2 {
		t.Errorf("accepted %+v", ms)
	}
}

// With Decide and OnMessage both set (smtp-sink's -digest with -c), a
// message's Message, its digest summed and its recipients copied, is
// built once, for Decide, and OnMessage gets it (Seq as accepted,
// Refused false), after a Delay["."] too: it was built twice. A message
// Decide sees refused by a rule and accepts reaches OnMessage as
// accepted.
func TestDecideOnMessageBuiltOnce(t *testing.T) {
	for _, delay := range []time.Duration{0, time.Hour} {
		t.Run(delay.String(), func(t *testing.T) { testDecideOnMessageBuiltOnce(t, delay) })
	}
}

func testDecideOnMessageBuiltOnce(t *testing.T, delay time.Duration) {
	var built atomic.Int64
	var got messages
	decided := make(chan Message, 4)
	cfg := Config{Digest: digest.SHA256, OnMessage: got.add,
		Delay: map[string]time.Duration{".": delay},
		Rules: []Rule{{Stage: StageDot, Match: regexp.MustCompile("^ruled@x$"), Reply: Reply{Code: 554}}},
		Decide: func(m Message) Reply {
			decided <- m
			if m.Refused {
				return Reply{Code: 250}
			}
			return Reply{}
		}}
	s := startSink(t, cfg, hooks{message: func() { built.Add(1) }, sleep: func(time.Duration) {}})
	c := dial(t, s)
	c.cmd(250, "EHLO c")
	c.deliver(2, "r@x")
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(250, "RCPT TO:<ruled@x>")
	c.cmd(354, "DATA")
	c.cmd(250, "y\r\n.")
	c.cmd(221, "QUIT")
	if n := built.Load(); n != 3 {
		t.Errorf("Messages built %d times for 3 messages, want 3", n)
	}
	ms := got.all()
	if len(ms) != 3 {
		t.Fatalf("OnMessage got %d messages, want 3", len(ms))
	}
	want := sha256.Sum256([]byte("x\r\n"))
	for i, m := range ms {
		d := <-decided
		if m.Seq != i+1 || m.Refused || d.Seq != m.Seq || d.Refused != (i == 2) || m.Size != d.Size || !m.Digest.Equal(d.Digest) || !slices.Equal(m.To, d.To) {
			t.Errorf("message %d: OnMessage got %+v, Decide %+v", i+1, m, d)
		}
		if i < 2 && (!m.Digest.MatchHex(hex.AppendEncode(nil, want[:])) || m.To[0] != "r@x") {
			t.Errorf("message %d: digest %s, to %v", i+1, m.Digest, m.To)
		}
	}
}

// piped is what a pipeCapture writer's reader got: the data, and the
// error the writer was closed with (nil for a plain Close).
type piped struct {
	data string
	err  error
}

// pipeCapture is a Capture whose writers are io.Pipes, each read to its
// end by a goroutine that sends what it got to results.
func pipeCapture(results chan<- piped) func(Transaction) io.WriteCloser {
	return func(Transaction) io.WriteCloser {
		pr, pw := io.Pipe()
		go func() {
			b, err := io.ReadAll(pr)
			results <- piped{string(b), err}
		}()
		return pw
	}
}

// A Capture writer that has CloseWithError, as an io.Pipe's has, learns
// that a message is not whole: its data ends in the data's error, or in
// ErrAborted for a message cut short, not in an end of file that would
// pass it for a whole message.
func TestCaptureAborted(t *testing.T) {
	results := make(chan piped, 4)
	s := startSink(t, Config{Capture: pipeCapture(results)}, hooks{})
	c := dial(t, s)
	c.cmd(250, "EHLO client.test")
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(250, "RCPT TO:<c@d>")
	c.cmd(354, "DATA")
	c.cmd(250, "whole\r\n.")
	if r := <-results; r.err != nil || r.data != "whole\r\n" {
		t.Errorf("whole message: %q, %v", r.data, r.err)
	}
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(250, "RCPT TO:<c@d>")
	c.cmd(354, "DATA")
	c.cmd(550, "bare\nLF\r\n.") // refused: captured up to its problem
	if r := <-results; !errors.Is(r.err, dot.ErrBareLF) || r.data != "bare" {
		t.Errorf("bare LF: %q, %v", r.data, r.err)
	}
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(250, "RCPT TO:<c@d>")
	c.send("BDAT 3\r\nabc")
	c.codes(1)
	c.cmd(250, "RSET")
	if r := <-results; !errors.Is(r.err, ErrAborted) || r.data != "abc" {
		t.Errorf("BDAT, then RSET: %q, %v", r.data, r.err)
	}
	c.cmd(250, "MAIL FROM:<a@b>")
	c.cmd(250, "RCPT TO:<c@d>")
	c.cmd(354, "DATA")
	c.send("cut off\r\n")
	c.raw.Close()
	if r := <-results; !errors.Is(r.err, ErrAborted) || !strings.HasPrefix("cut off\r\n", r.data) {
		t.Errorf("session ended in the data: %q, %v", r.data, r.err)
	}
}

// A Decide reply whose text is not one line (Reply.Text must be) gets
// the generic text for its code: a CR or LF in it would end the reply
// early and have the client read the rest as another reply.
func TestDecideTextOneLine(t *testing.T) {
	decide := func(m Message) Reply {
		if m.From == "ok@x" {
			return Reply{Code: 250, Text: "2.0.0 kept\r\n250 more"}
		}
		return Reply{Code: 550, Text: "5.7.1 no\r\n250 2.0.0 fake"}
	}
	s := startSink(t, Config{Decide: decide}, hooks{})
	c := dial(t, s)
	c.cmd(250, "EHLO c")
	c.cmd(250, "MAIL FROM:<no@x>")
	c.cmd(250, "RCPT TO:<r@x>")
	c.cmd(354, "DATA")
	if text := c.cmd(550, "hi\r\n."); strings.ContainsAny(text, "\r\n") {
		t.Errorf("550 text %q", text)
	}
	c.cmd(250, "MAIL FROM:<ok@x>")
	c.cmd(250, "RCPT TO:<r@x>")
	c.cmd(354, "DATA")
	c.cmd(250, "hi\r\n.")
	c.cmd(250, "NOOP")
	c.cmd(221, "QUIT")
}

// A message whose data ended whole is captured whole though a "." Delay
// is under way when Close ends its session: its writer was closed only
// after the wait, so Close's cut closed it with ErrAborted, as if the
// data had been cut short (and smtp-sink -d left no dump). On both
// engines, the writer is closed before the wait, which is an hour: only
// Close ends it.
func TestCaptureWholeBeforeDotDelay(t *testing.T) {
	for _, engine := range []Engine{EngineGoroutine, EngineLoops} {
		t.Run(string(engine), func(t *testing.T) {
			results := make(chan piped, 1)
			decided := make(chan struct{}, 1)
			s := startSink(t, Config{Engine: engine, Capture: pipeCapture(results), Delay: map[string]time.Duration{".": time.Hour},
				Decide: func(Message) Reply { decided <- struct{}{}; return Reply{} }}, hooks{})
			c := dial(t, s)
			c.cmd(250, "EHLO client.test")
			c.cmd(250, "MAIL FROM:<a@b>")
			c.cmd(250, "RCPT TO:<c@d>")
			c.cmd(354, "DATA")
			c.send("whole\r\n.\r\n")
			<-decided // the data has ended; the wait follows
			s.Close()
			if r := <-results; r.err != nil || r.data != "whole\r\n" {
				t.Errorf("a whole message in the wait at Close: %q, %v", r.data, r.err)
			}
		})
	}
}

// failingCapture is a Capture writer that fails: its Write calls with
// writeErr (it keeps nothing then), its Close with closeErr.
type failingCapture struct{ writeErr, closeErr error }

func (w failingCapture) Write(p []byte) (int, error) {
	if w.writeErr != nil {
		return 0, w.writeErr
	}
	return len(p), nil
}
func (w failingCapture) Close() error { return w.closeErr }

// A message whose Capture writer failed (a Write or its Close returned
// an error: a dump on a full disk) is refused with 451, not accepted
// with a 250 that claims it stored, and not counted; in LMTP each
// recipient that would have had 250 gets the 451, one a dot rule
// refuses keeps its reply. A refusal keeps its own code. On both engines.
func TestCaptureFailedRefuses(t *testing.T) {
	boom := errors.New("no space left on device")
	for _, engine := range []Engine{EngineGoroutine, EngineLoops} {
		t.Run(string(engine), func(t *testing.T) {
			var fail failingCapture
			var mu sync.Mutex
			capture := func(Transaction) io.WriteCloser { mu.Lock(); defer mu.Unlock(); return fail }
			set := func(w failingCapture) { mu.Lock(); defer mu.Unlock(); fail = w }
			s := startSink(t, Config{Engine: engine, Capture: capture}, hooks{})
			c := dial(t, s)
			c.cmd(250, "EHLO client.test")
			for _, w := range []failingCapture{{closeErr: boom}, {writeErr: boom}} {
				set(w)
				c.cmd(250, "MAIL FROM:<a@b>")
				c.cmd(250, "RCPT TO:<c@d>")
				c.cmd(354, "DATA")
				if text := c.cmd(451, "x\r\n."); !strings.Contains(text, "4.3.0") {
					t.Errorf("%+v: %q", w, text)
				}
				c.cmd(250, "MAIL FROM:<a@b>")
				c.cmd(250, "RCPT TO:<c@d>")
				c.send("BDAT 1 LAST\r\ny")
				c.expect(451)
			}
			set(failingCapture{closeErr: boom})
			c.cmd(250, "MAIL FROM:<a@b>")
			c.cmd(250, "RCPT TO:<c@d>")
			c.cmd(354, "DATA")
			c.cmd(550, "bare\nLF\r\n.") // refused for its data: still 550
			set(failingCapture{})
			c.cmd(250, "MAIL FROM:<a@b>")
			c.cmd(250, "RCPT TO:<c@d>")
			c.cmd(354, "DATA")
			c.cmd(250, "fine\r\n.")
			if st := s.Stats(); st.Messages != 1 || st.Errors[451] != 4 {
				t.Errorf("messages %d, 451s %d; want 1 and 4", st.Messages, st.Errors[451])
			}

			rule, err := ParseRule("dot:no@=550 5.1.1 no")
			if err != nil {
				t.Fatal(err)
			}
			l := startSink(t, Config{Engine: engine, LMTP: true, Rules: []Rule{rule},
				Capture: func(Transaction) io.WriteCloser { return failingCapture{closeErr: boom} }}, hooks{})
			c = dial(t, l)
			c.cmd(250, "LHLO client.test")
			c.cmd(250, "MAIL FROM:<a@b>")
			c.cmd(250, "RCPT TO:<c@d>")
			c.cmd(250, "RCPT TO:<no@d>")
			c.cmd(354, "DATA")
			c.send("x\r\n.\r\n")
			if got := c.codes(2); !strings.Contains(got, "451") || !strings.Contains(got, "550") {
				t.Errorf("LMTP replies %q, want a 451 and a 550", got)
			}
			if st := l.Stats(); st.Messages != 0 {
				t.Errorf("LMTP: messages %d, want 0", st.Messages)
			}
		})
	}
}

// splitsBuf is a Capture writer that keeps its data and counts its
// Writes.
type splitsBuf struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (b *splitsBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	return b.b.Write(p)
}

func (b *splitsBuf) Close() error { return nil }

// A client that sends a message's data a byte at a time gets the same
// bytes captured on both engines, and the same as a reader nobody here
// wrote (net/textproto's DotReader, its LFs made CRLFs again) makes of
// DATA's lines; BDAT's are the chunk's bytes. How the data is split into
// Writes is not promised, and differs (Config.Capture says so): on
// EngineLoops the Writes follow the reads, on EngineGoroutine a buffer
// of 32 KiB fills first (one Write here).
func TestCaptureSplitsEngines(t *testing.T) {
	const body = "Subject: split\r\n\r\n..stuffed\r\n..\r\nline one\r\n\r\n...\r\nlast line\r\n"
	const chunk = "chunk\r\n.with dot\r\nend"
	r := nettextproto.NewReader(bufio.NewReader(strings.NewReader(body + ".\r\n")))
	lf, err := io.ReadAll(r.DotReader())
	if err != nil {
		t.Fatal(err)
	}
	wantData := strings.ReplaceAll(string(lf), "\n", "\r\n")
	got := map[Engine][2]string{}
	for _, e := range bothEngines {
		t.Run(string(e), func(t *testing.T) {
			var mu sync.Mutex
			var bufs []*splitsBuf
			s := startSink(t, Config{Engine: e, Capture: func(Transaction) io.WriteCloser {
				mu.Lock()
				defer mu.Unlock()
				b := &splitsBuf{}
				bufs = append(bufs, b)
				return b
			}}, hooks{})
			c := dial(t, s)
			dribble := func(s string) {
				for i := range len(s) {
					if _, err := c.raw.Write([]byte{s[i]}); err != nil {
						t.Fatal(err)
					}
				}
			}
			c.cmd(250, "EHLO client.test")
			c.cmd(250, "MAIL FROM:<a@b>")
			c.cmd(250, "RCPT TO:<c@d>")
			c.cmd(354, "DATA")
			dribble(body + ".\r\n")
			c.expect(250)
			c.cmd(250, "MAIL FROM:<a@b>")
			c.cmd(250, "RCPT TO:<c@d>")
			dribble("BDAT " + itoa(len(chunk)) + " LAST\r\n" + chunk)
			c.expect(250)
			c.cmd(221, "QUIT")
			mu.Lock()
			defer mu.Unlock()
			if len(bufs) != 2 {
				t.Fatalf("%d captures, want 2", len(bufs))
			}
			for i, b := range bufs {
				b.mu.Lock()
				t.Logf("capture %d: %d bytes in %d Writes", i, b.b.Len(), b.writes)
				b.mu.Unlock()
			}
			got[e] = [2]string{bufs[0].b.String(), bufs[1].b.String()}
			if got[e][0] != wantData {
				t.Errorf("DATA captured %q, want %q", got[e][0], wantData)
			}
			if got[e][1] != chunk {
				t.Errorf("BDAT captured %q, want %q", got[e][1], chunk)
			}
		})
	}
	if len(got) == 2 && got[EngineLoops] != got[EngineGoroutine] {
		t.Errorf("the engines captured apart: loops %q, goroutine %q", got[EngineLoops], got[EngineGoroutine])
	}
}

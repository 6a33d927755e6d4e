package smtpsource

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// quits counts the QUIT commands a fake server received.
func quits(f *fakeServer) int {
	n := 0
	for _, c := range f.commands() {
		if c == "QUIT" {
			n++
		}
	}
	return n
}

// A 421 to any command of a transaction, pipelined or not, DATA or BDAT,
// ends the connection (RFC 5321 §3.8): the message fails with its 421,
// counted once as a rejection, the connection is closed without QUIT or
// RSET, nothing else is an error (no reply is read after the 421, no
// command written into the closed connection), and the next message goes
// out on a new connection. The fake server sends its 421 and closes, as
// servers do. With pipelining on a kept connection the second message's
// envelope goes out behind the first's data; a 421 to that data leaves
// it unanswered, and it goes out again on the new connection.
func TestReply421(t *testing.T) {
	for _, c := range []struct {
		name, verb string
		chunking   bool
	}{
		{"mail", "MAIL", false},
		{"rcpt", "RCPT", false},
		{"data", "DATA", false},
		{"dot", ".", false},
		{"bdat", "BDAT", true},
		{"bdat-last", ".", true},
	} {
		for _, pipe := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/pipelining=%v", c.name, pipe), func(t *testing.T) {
				var n atomic.Int64
				f := &fakeServer{ext: []string{"PIPELINING", "CHUNKING"}, reply: func(verb, arg string) string {
					if verb == c.verb && n.Add(1) == 1 { // the first message's only
						return "421 4.4.2 closing: timeout"
					}
					return ""
				}}
				cfg := base(f.start(t))
				cfg.Messages, cfg.Recipients, cfg.Reuse, cfg.Pipelining, cfg.Digests = 3, 2, true, pipe, true
				cfg.Chunking, cfg.ChunkSize = c.chunking, 100
				res := runOK(t, cfg)
				phase := replyPhase[c.verb]
				if res.Started != 3 || res.Delivered != 2 || res.Failed != 1 || res.Connections != 2 ||
					res.Rejections != 1 || res.Errors != 1 || res.Replies[phase][421] != 1 {
					t.Fatalf("%+v", res)
				}
				if !strings.Contains(res.FirstError, "421 4.4.2 closing") {
					t.Errorf("first error %q", res.FirstError)
				}
				sameCodes(t, c.name, res, f)
				if q := quits(f); q != 1 || res.Replies["rset"] != nil {
					t.Errorf("%d QUITs (want 1, on the second connection), RSET replies %v; commands %q", q, res.Replies["rset"], f.commands())
				}
				if taken := f.accepted(); len(taken) != 2 {
					t.Errorf("the server took %d messages", len(taken))
				} else if v, err := Verify(strings.NewReader(sentLog(taken)), res.Digests); err != nil || !v.OK() {
					t.Errorf("verify %+v %v", v, err)
				}
			})
		}
	}
}

// A 421 while the connection is set up (to EHLO) ends it the same way:
// the message fails, no QUIT is sent, and the next message connects
// again.
func TestReply421Setup(t *testing.T) {
	var n atomic.Int64
	f := &fakeServer{reply: func(verb, arg string) string {
		if verb == "EHLO" && n.Add(1) == 1 {
			return "421 4.7.0 too many errors"
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Messages = 2
	res := runOK(t, cfg)
	if res.Delivered != 1 || res.Failed != 1 || res.Connections != 2 || res.Rejections != 1 || res.Errors != 1 || res.Replies["ehlo"][421] != 1 {
		t.Fatalf("%+v", res)
	}
	if q := quits(f); q != 1 {
		t.Errorf("%d QUITs, want 1; commands %q", q, f.commands())
	}
}

// In open loop a connection that a 421 ended is replaced, and the
// schedule goes on: messages are due every 10ms; the second one's MAIL
// gets a 421 (it fails after 1ms, from its intended start), the third
// opens a new connection (greeting and EHLO, 2ms more than the others),
// and every message is in the figures, timed from its intended start, as
// on the test's clock: delivered in 6ms (the first, whose session
// connected first, and the third), 4ms and 4ms; failed in 1ms.
func TestReply421OpenLoop(t *testing.T) {
	ms := time.Millisecond
	clk := newFakeClock()
	var n atomic.Int64
	f := &fakeServer{clk: clk, delay: map[string]time.Duration{"CONNECT": ms, "EHLO": ms, "MAIL": ms, "RCPT": ms, "DATA": ms, ".": ms},
		reply: func(verb, arg string) string {
			if verb == "MAIL" && n.Add(1) == 2 {
				return "421 4.4.2 closing: timeout"
			}
			return ""
		}}
	cfg := base(f.start(t))
	cfg.Messages, cfg.Reuse, cfg.QPS = 5, true, 100
	res, err := RunWith(context.Background(), cfg, nil, clk)
	if err != nil {
		t.Fatal(err)
	}
	accounted(t, res)
	if res.Started != 5 || res.Delivered != 4 || res.Failed != 1 || res.Connections != 2 || res.Errors != 1 || res.Rejections != 1 {
		t.Fatalf("%+v", res)
	}
	checkLatency(t, "message", res.Phases.Message, 6*ms, 6*ms, 4*ms, 4*ms)
	checkLatency(t, "failed", res.Phases.Failed, ms)
}

// A refused greeting (421 or 554) is a connect refusal, not a rejection;
// the connection is closed without QUIT, and the session backs off before
// it connects again: 10ms after the first refusal, doubling with each that
// follows, up to 1s, and from 10ms again once a greeting has been a 220.
// The test's clock moves only when the session waits, so the instants of
// the connections are its waits. The message each refused connection was
// for fails. No session backs off when no message is left: a run of
// three messages against a server that refuses them all ends at its third
// connection, 30ms in.
func TestGreetingBackoff(t *testing.T) {
	ms := time.Millisecond
	for _, code := range []string{"421 4.3.2 busy, try later", "554 5.7.1 go away"} {
		clk := newFakeClock()
		var mu sync.Mutex
		var at []time.Duration // each greeting's instant, from the start
		start := clk.Now()
		var conns atomic.Int64
		f := &fakeServer{reply: func(verb, arg string) string {
			if verb != "CONNECT" {
				return ""
			}
			mu.Lock()
			at = append(at, clk.Now().Sub(start))
			mu.Unlock()
			if n := conns.Add(1); n <= 10 || n == 12 {
				return code
			}
			return ""
		}}
		cfg := base(f.start(t))
		cfg.Messages = 13
		res, err := RunWith(context.Background(), cfg, nil, clk)
		if err != nil {
			t.Fatal(err)
		}
		accounted(t, res)
		var num int
		fmt.Sscan(code[:3], &num)
		if res.Delivered != 2 || res.Failed != 11 || res.Connections != 13 || res.ConnectRefusals != 11 || res.Rejections != 0 ||
			res.Errors != 11 || res.Replies["banner"][num] != 11 || res.Replies["banner"][220] != 2 {
			t.Errorf("%s: %+v", code, res)
		}
		if q := quits(f); q != 2 {
			t.Errorf("%s: %d QUITs, want 2 (one for each delivered message)", code, q)
		}
		mu.Lock()
		var gaps []time.Duration
		for i := 1; i < len(at); i++ {
			gaps = append(gaps, at[i]-at[i-1])
		}
		mu.Unlock()
		want := []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms, 1000 * ms, 1000 * ms, 1000 * ms, 0, 10 * ms}
		if fmt.Sprint(gaps) != fmt.Sprint(want) {
			t.Errorf("%s: waits between connections %v, want %v", code, gaps, want)
		}
	}
	f := &fakeServer{reply: func(verb, arg string) string {
		if verb == "CONNECT" {
			return "421 4.3.2 busy, try later"
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Messages = 3
	res, err := RunWith(context.Background(), cfg, nil, newFakeClock())
	if err != nil || res.Failed != 3 || res.ConnectRefusals != 3 || res.DurationS != 0.03 {
		t.Errorf("all refused: %+v, %v; want 3 refusals in 30ms", res, err)
	}
}

// With Reuse, a session connects before it takes a message; that
// connection's refused greeting is retried with the first message, and
// counted once with it: against a server that refuses every greeting,
// three messages on one session failed with 4 errors (-d -m 3: "failed 3,
// errors 4"), the first connection's refusal counted apart from the
// message it was opened for. Refused and then overcome (the first
// message's connection greeted with 220), it is still an error. (With
// more sessions, one that takes no message, the others having sent them
// all, counts its refusal too: which one does is the scheduler's choice.)
func TestReuseFirstConnectRefused(t *testing.T) {
	for _, c := range []struct {
		sessions, messages int
		refused            int64 // the connections refused, from the first
		failed, errors     int64
	}{
		{1, 3, 4, 3, 3}, // every connection refused
		{1, 2, 1, 0, 1}, // the first only: both messages delivered on the second
	} {
		var conns atomic.Int64
		f := &fakeServer{reply: func(verb, arg string) string {
			if verb == "CONNECT" && conns.Add(1) <= c.refused {
				return "554 5.7.1 go away"
			}
			return ""
		}}
		cfg := base(f.start(t))
		cfg.Sessions, cfg.Messages, cfg.Reuse = c.sessions, c.messages, true
		res, err := RunWith(context.Background(), cfg, nil, newFakeClock())
		if err != nil {
			t.Fatal(err)
		}
		accounted(t, res)
		if res.Failed != c.failed || res.Delivered != int64(c.messages)-c.failed || res.Errors != c.errors || res.ConnectRefusals != c.errors ||
			res.Replies["banner"][554] != c.refused || !strings.Contains(res.FirstError, "554 5.7.1 go away") {
			t.Errorf("-s %d -m %d, %d refused: %+v; want failed %d, errors %d", c.sessions, c.messages, c.refused, res, c.failed, c.errors)
		}
	}
}

// A 421 that comes while the client is still writing (here to the MAIL of
// a pipelined group whose BDAT chunks are larger than the socket buffers:
// the server closes with them unread, and the client's write fails when
// the connection is reset) is counted as the reply it is, not as an I/O
// error: the write's failure sends the client to read what the server
// said before the reset.
func TestReply421WriteFailed(t *testing.T) {
	var n atomic.Int64
	f := &fakeServer{ext: []string{"PIPELINING", "CHUNKING"}, reply: func(verb, arg string) string {
		if verb == "MAIL" && n.Add(1) == 1 {
			return "421 4.4.2 closing: timeout"
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Messages, cfg.Reuse, cfg.Pipelining, cfg.Chunking = 2, true, true, true
	cfg.Length, cfg.ChunkSize, cfg.WindowSize = 4<<20, 1<<20, 16<<10
	res := runOK(t, cfg)
	if res.Delivered != 1 || res.Failed != 1 || res.Connections != 2 || res.Errors != 1 || res.Rejections != 1 || res.Replies["mail"][421] != 1 {
		t.Fatalf("%+v", res)
	}
}

// A greeting that is neither 220 nor a refusal is a protocol error: the
// message fails, the connection is closed without QUIT, and the session
// backs off as after a refusal (10ms before the second connection).
func TestGreetingNot220(t *testing.T) {
	f := &fakeServer{reply: func(verb, arg string) string {
		if verb == "CONNECT" {
			return "250 hello"
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Messages = 2
	res, err := RunWith(context.Background(), cfg, nil, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	accounted(t, res)
	if res.Failed != 2 || res.ProtocolErrors != 2 || res.Errors != 2 || res.ConnectRefusals != 0 || res.Replies["banner"][250] != 2 ||
		res.DurationS != 0.01 || !strings.Contains(res.FirstError, "neither 220 nor a refusal") || quits(f) != 0 {
		t.Errorf("%+v, QUITs %d", res, quits(f))
	}
}

// A connection that fails backs the session off as a refused greeting
// does: 10ms, then doubling. Here the server's 421 to the first message
// (on a connection that delivered nothing) starts it at 10ms; the message
// sent ahead (pipelining, -d) is retried at once, and its failed dial
// doubles the wait. That message fails once when no new connection can
// be had: it was taken again at every pass, counted failed each time,
// and the run never ended.
func TestConnectFailureBackoff(t *testing.T) {
	ms := time.Millisecond
	f := &fakeServer{ext: []string{"PIPELINING"}, reply: func(verb, arg string) string {
		if verb == "." {
			return "421 4.3.2 going away"
		}
		return ""
	}}
	addr := f.start(t)
	clk := newFakeClock()
	start := clk.Now()
	var mu sync.Mutex
	var at []time.Duration // each failed dial's instant
	dials := 0
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		if dials++; dials == 1 {
			var d net.Dialer
			return d.DialContext(ctx, network, a)
		}
		at = append(at, clk.Now().Sub(start))
		return nil, &net.OpError{Op: "dial", Net: network, Err: errRefused}
	}
	cfg := base(addr)
	cfg.Messages, cfg.Reuse, cfg.Pipelining = 5, true, true
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := RunWith(ctx, cfg, dial, clk)
	if err != nil || ctx.Err() != nil {
		t.Fatalf("%v (%v)", err, ctx.Err())
	}
	accounted(t, res)
	if res.Started != 5 || res.Failed != 5 || res.ConnectErrors != 4 {
		t.Errorf("started %d, failed %d, connect errors %d; want 5, 5, 4", res.Started, res.Failed, res.ConnectErrors)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []time.Duration{0, 20 * ms, 60 * ms, 140 * ms}; fmt.Sprint(at) != fmt.Sprint(want) {
		t.Errorf("failed dials at %v, want %v", at, want)
	}
}

// Replies are bounded: a line past 2 KiB, or a reply past 1,000 lines,
// fails the message as a protocol error, with the first error's text cut
// short, where the client read on without bound (a server that floods
// took it to hundreds of MB in seconds).
func TestReplyBounded(t *testing.T) {
	for _, greeting := range []string{
		"220 " + strings.Repeat("x", 3000),
		strings.Repeat("220-flood\r\n", 2000) + "220 end",
	} {
		f := &fakeServer{reply: func(verb, arg string) string {
			if verb == "CONNECT" {
				return greeting
			}
			return ""
		}}
		cfg := base(f.start(t))
		cfg.Messages = 1
		res, err := RunWith(context.Background(), cfg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed != 1 || res.ProtocolErrors != 1 || len(res.FirstError) > 1100 {
			t.Errorf("greeting of %d bytes: failed %d, protocol errors %d, first error of %d bytes", len(greeting), res.Failed, res.ProtocolErrors, len(res.FirstError))
		}
	}
}

// A server that ends every connection before a message is delivered,
// after its greeting (here EHLO gets 421), backs the session off as a
// refused greeting does; it reconnected at once, thousands of times a
// second. A delivered message starts the waits from 10ms again.
func TestBackoffAfterGreeting(t *testing.T) {
	ms := time.Millisecond
	clk := newFakeClock()
	start := clk.Now()
	var mu sync.Mutex
	var at []time.Duration // each connection's greeting
	var conns atomic.Int64
	f := &fakeServer{reply: func(verb, arg string) string {
		switch verb {
		case "CONNECT":
			mu.Lock()
			at = append(at, clk.Now().Sub(start))
			mu.Unlock()
			conns.Add(1)
		case "EHLO":
			if n := conns.Load(); n <= 4 || n == 6 {
				return "421 4.3.2 busy"
			}
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Messages = 7
	res, err := RunWith(context.Background(), cfg, nil, clk)
	if err != nil {
		t.Fatal(err)
	}
	accounted(t, res)
	if res.Delivered != 2 || res.Failed != 5 {
		t.Errorf("delivered %d, failed %d; want 2, 5", res.Delivered, res.Failed)
	}
	mu.Lock()
	defer mu.Unlock()
	var gaps []time.Duration
	for i := 1; i < len(at); i++ {
		gaps = append(gaps, at[i]-at[i-1])
	}
	if want := []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 0, 10 * ms}; fmt.Sprint(gaps) != fmt.Sprint(want) {
		t.Errorf("waits between connections %v, want %v", gaps, want)
	}
}

// A reply of another kind than the command wants (250 to DATA, 354 to
// MAIL) fails the message as a protocol error: it failed with no error
// counted.
func TestReplyOfWrongKind(t *testing.T) {
	for verb, r := range map[string]string{"DATA": "250 ok", "MAIL": "354 go on"} {
		f := &fakeServer{reply: func(v, arg string) string {
			if v == verb {
				return r
			}
			return ""
		}}
		cfg := base(f.start(t))
		cfg.Messages = 2
		res := runOK(t, cfg)
		if res.Failed != 2 || res.ProtocolErrors != 2 || res.Errors != 2 || !strings.Contains(res.FirstError, "reply was due") {
			t.Errorf("%s answered %q: %+v", verb, r, res)
		}
	}
}

// A kept connection the server closed silently since the last message
// (here, at the next MAIL, without a 421) is not a failure: the message
// goes again on a new connection, as a connection cache's client sends
// it. It failed as an I/O error. A new connection that breaks the same
// way is not retried (the server is broken, not idle). With pipelining
// the sessions wait between messages, so that no envelope goes out
// ahead, behind the last message's data, where the close would break
// that message instead.
func TestKeptConnectionClosed(t *testing.T) {
	for _, pipe := range []bool{false, true} {
		t.Run(fmt.Sprintf("pipelining=%v", pipe), func(t *testing.T) {
			var mails atomic.Int64
			f := &fakeServer{ext: []string{"PIPELINING"}, reply: func(verb, arg string) string {
				if verb == "MAIL" && mails.Add(1)%2 == 0 { // every connection's second MAIL
					return "close"
				}
				return ""
			}}
			cfg := base(f.start(t))
			cfg.Messages, cfg.Reuse, cfg.Pipelining, cfg.Digests = 4, true, pipe, true
			if pipe {
				cfg.Wait = time.Millisecond
			}
			res := runOK(t, cfg)
			if res.Delivered != 4 || res.Failed != 0 || res.Errors != 0 || res.Connections != 4 {
				t.Errorf("delivered %d, failed %d, errors %d (%s), connections %d; want 4, 0, 0, 4",
					res.Delivered, res.Failed, res.Errors, res.FirstError, res.Connections)
			}
			sameCodes(t, "kept", res, f)
		})
	}
	f := &fakeServer{reply: func(verb, arg string) string {
		if verb == "MAIL" {
			return "close"
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Messages, cfg.Reuse = 2, true
	if res := runOK(t, cfg); res.Failed != 2 || res.IOErrors != 2 || res.Connections != 2 {
		t.Errorf("every MAIL closed: failed %d, I/O errors %d, connections %d; want 2, 2, 2", res.Failed, res.IOErrors, res.Connections)
	}
}

// Pipelined BDAT writes a message's chunks with its MAIL, before MAIL is
// answered: a kept connection found closed at MAIL's reply may have taken
// the message, so it is not sent again (it would be twice); it fails.
func TestKeptConnectionClosedBDAT(t *testing.T) {
	var mails atomic.Int64
	f := &fakeServer{ext: []string{"PIPELINING", "CHUNKING"}, reply: func(verb, arg string) string {
		if verb == "MAIL" && mails.Add(1)%2 == 0 {
			return "close"
		}
		return ""
	}}
	cfg := base(f.start(t))
	cfg.Messages, cfg.Reuse, cfg.Pipelining, cfg.Chunking, cfg.Wait = 4, true, true, true, time.Millisecond
	res := runOK(t, cfg)
	if res.Delivered != 2 || res.Failed != 2 || res.IOErrors != 2 {
		t.Errorf("delivered %d, failed %d, I/O errors %d; want 2, 2, 2", res.Delivered, res.Failed, res.IOErrors)
	}
}

// A message whose error was counted before the run stopped is failed,
// not abandoned: here the AUTH refusal that stops the run (ErrAuth).
func TestStoppedAfterCountedError(t *testing.T) {
	srvTLS, roots := testCerts(t)
	f := &fakeServer{tlsConf: srvTLS, authMechs: []string{"PLAIN"}, authAfterTLS: true, users: map[string]string{"u": "right"}}
	cfg := base(f.start(t))
	cfg.TLS, cfg.TLSConfig = true, &tls.Config{RootCAs: roots}
	cfg.AuthUser, cfg.AuthPass = "u", "wrong"
	res, err := RunWith(context.Background(), cfg, nil, nil)
	if !errors.Is(err, ErrAuth) || res == nil {
		t.Fatalf("%v, %v; want ErrAuth with a result", res, err)
	}
	accounted(t, res)
	if res.Failed != 1 || res.Abandoned != 0 {
		t.Errorf("failed %d, abandoned %d; want 1, 0", res.Failed, res.Abandoned)
	}
}

// A server that refuses a command with a 5xx and then closes the
// connection, as servers that give up on a client do, fails the message
// once, with its refusal: the QUIT (a connection a message) or RSET (a
// kept one) that follows finds the connection closed, which is no second
// error, as Postfix's smtp-source counts it. So does the HELO tried
// after a refused EHLO (the message fails with EHLO's refusal), and,
// with pipelining, the wait for the replies to the commands written
// behind the refused one. The refused message is the first of three, or
// the last (with Reuse, its connection is then ended by the session's
// QUIT). A server that closes instead of answering QUIT after a
// delivered message is still an I/O error.
func TestRefusalThenClose(t *testing.T) {
	for _, verb := range []string{"EHLO", "MAIL", "RCPT", "DATA", "."} {
		for _, reuse := range []bool{false, true} {
			for _, pipe := range []bool{false, true} {
				for _, nth := range []int64{1, 3} {
					if verb == "EHLO" && reuse {
						continue // the connection is made before the first message
					}
					t.Run(fmt.Sprintf("%s/reuse=%v/pipelining=%v/message=%d", replyPhase[verb], reuse, pipe, nth), func(t *testing.T) {
						var n atomic.Int64
						f := &fakeServer{ext: []string{"PIPELINING"}, reply: func(v, arg string) string {
							if v == verb && n.Add(1) == nth {
								return "close:554 5.7.1 go away"
							}
							return ""
						}}
						cfg := base(f.start(t))
						cfg.Messages, cfg.Reuse, cfg.Pipelining = 3, reuse, pipe
						res := runOK(t, cfg)
						phase := replyPhase[verb]
						if res.Delivered != 2 || res.Failed != 1 || res.Errors != 1 || res.Rejections != 1 || res.Replies[phase][554] != 1 {
							t.Fatalf("delivered %d, failed %d, errors %d (I/O %d, rejections %d), first %q; want 2, 1, 1 (0, 1)",
								res.Delivered, res.Failed, res.Errors, res.IOErrors, res.Rejections, res.FirstError)
						}
						if !strings.Contains(res.FirstError, "554 5.7.1 go away") {
							t.Errorf("first error %q", res.FirstError)
						}
					})
				}
			}
		}
	}
	f := &fakeServer{reply: func(verb, arg string) string {
		if verb == "QUIT" {
			return "close"
		}
		return ""
	}}
	cfg := base(f.start(t))
	if res := runOK(t, cfg); res.Delivered != 1 || res.IOErrors != 1 || !strings.Contains(res.FirstError, "quit") {
		t.Errorf("QUIT unanswered after a delivered message: delivered %d, I/O errors %d, first %q; want 1, 1, quit's",
			res.Delivered, res.IOErrors, res.FirstError)
	}
}

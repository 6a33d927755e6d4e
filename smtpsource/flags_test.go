package smtpsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// NumberRecipients (smtp-source -N): every recipient of the run gets a
// number of its own, 1 to messages × recipients, pipelined or not.
func TestNumberRecipients(t *testing.T) {
	for _, pipe := range []bool{false, true} {
		f := &fakeServer{ext: []string{"PIPELINING"}}
		cfg := base(f.start(t))
		cfg.Sessions, cfg.Messages, cfg.Recipients, cfg.Reuse, cfg.Pipelining, cfg.NumberRecipients = 3, 10, 2, true, pipe, true
		if res := runOK(t, cfg); res.Delivered != 10 || res.RcptOK != 20 || res.Errors != 0 {
			t.Fatalf("pipelining %v: %+v", pipe, res)
		}
		seen := map[string]bool{}
		for _, c := range f.commands() {
			if strings.HasPrefix(c, "RCPT") {
				seen[c] = true
			}
		}
		for n := 1; n <= 20; n++ {
			if c := fmt.Sprintf("RCPT TO:<%dto@server.test>", n); !seen[c] {
				t.Errorf("pipelining %v: no %q among %d distinct RCPTs", pipe, c, len(seen))
			}
		}
		if len(seen) != 20 {
			t.Errorf("pipelining %v: %d distinct RCPTs, want 20", pipe, len(seen))
		}
	}
}

// OldMode (smtp-source -o): MAIL right after the greeting, no EHLO or
// HELO, and a message without a header: its body alone.
func TestOldMode(t *testing.T) {
	f := &fakeServer{ext: []string{"PIPELINING"}}
	cfg := base(f.start(t))
	cfg.Messages, cfg.Reuse, cfg.OldMode, cfg.Pipelining, cfg.Digests = 3, true, true, true, true
	res := runOK(t, cfg)
	if res.Delivered != 3 || res.Errors != 0 || res.Pipelining || res.Replies["ehlo"] != nil {
		t.Fatalf("%+v", res)
	}
	cmds := f.commands()
	if len(cmds) == 0 || cmds[0] != "MAIL FROM:<from@client.test>" {
		t.Errorf("commands %q", cmds)
	}
	for _, m := range f.messages() {
		if !bytes.Equal(m, PatternBody(300)) {
			t.Errorf("message %q, want the body alone", m)
		}
	}
	if v, err := Verify(strings.NewReader(sentLog(f.messages())), res.Digests); err != nil || !v.OK() || v.Matched != 3 {
		t.Errorf("verify %+v %v", v, err)
	}
}

// Wait (smtp-source -w) between a session's messages, on the test's clock:
// 4 messages, none of whose commands take time, on one session, take the
// 3 waits between them, which no message's latency includes. RandomWait
// (-R): each wait is from 0 to the bound.
func TestWait(t *testing.T) {
	ms := time.Millisecond
	clk := newFakeClock()
	f := &fakeServer{}
	cfg := base(f.start(t))
	cfg.Messages, cfg.Reuse, cfg.Wait = 4, true, 10*ms
	res, err := RunWith(context.Background(), cfg, nil, clk)
	if err != nil || res.Delivered != 4 || res.Errors != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	if res.DurationS != 0.030 || res.Phases.Message.Max != 0.001 {
		t.Errorf("duration %vs (want 0.03), message latency %+v (want 1ns)", res.DurationS, res.Phases.Message)
	}

	clk = newFakeClock()
	cfg.Messages, cfg.Wait, cfg.RandomWait = 40, 0, 10*ms
	res, err = RunWith(context.Background(), cfg, nil, clk)
	if err != nil || res.Delivered != 40 {
		t.Fatalf("%+v, %v", res, err)
	}
	// 39 waits of 0 to 10ms: all of them 0 has odds below 1e-200.
	if res.DurationS <= 0 || res.DurationS > 0.390 {
		t.Errorf("duration %vs, want from 0 to 0.39", res.DurationS)
	}
}

// ConnectTries (smtp-source -C): a dial refused twice is tried again; with
// too few tries the message fails with a connect error.
func TestConnectTries(t *testing.T) {
	f := &fakeServer{}
	addr := f.start(t)
	refusals := func(n int) func(ctx context.Context, network, addr string) (net.Conn, error) {
		return func(ctx context.Context, network, addr string) (net.Conn, error) {
			if n > 0 {
				n--
				return nil, &net.OpError{Op: "dial", Net: network, Err: errRefused}
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
	}
	cfg := base(addr)
	cfg.ConnectTries = 3
	res, err := RunWith(context.Background(), cfg, refusals(2), nil)
	if err != nil || res.Delivered != 1 || res.Errors != 0 || res.ConnectRetries != 2 || res.Connections != 1 {
		t.Fatalf("3 tries: %+v, %v", res, err)
	}
	cfg.ConnectTries = 2
	res, err = RunWith(context.Background(), cfg, refusals(2), nil)
	if !errors.Is(err, ErrConnect) || !errors.Is(err, errRefused) && !strings.Contains(err.Error(), "refused") {
		t.Fatalf("2 tries: %+v, %v", res, err)
	}
}

// IPVersion (smtp-source -4, -6): a server on 127.0.0.1 is reached over
// IPv4 and not over IPv6.
func TestIPVersion(t *testing.T) {
	f := &fakeServer{}
	cfg := base(f.start(t))
	cfg.IPVersion = 4
	if res := runOK(t, cfg); res.Delivered != 1 {
		t.Errorf("-4: %+v", res)
	}
	cfg.IPVersion = 6
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConnect) {
		t.Errorf("-6 to 127.0.0.1: %v, want ErrConnect", err)
	}
}

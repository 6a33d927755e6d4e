package smtpsource

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/internal/sleep"
	"github.com/wirespeed/wirespeed/smtpsink"
)

// startSmtpsink runs wirespeed's own sink (package smtpsink, written by
// someone else against the RFCs, with CHUNKING) on 127.0.0.1:0, logging
// the MD5 of each message it accepts as its -digest log does.
func startSmtpsink(t *testing.T, lmtp bool) (addr string, log func() string) {
	t.Helper()
	var mu sync.Mutex
	var b strings.Builder
	srv := startSmtpsinkCfg(t, smtpsink.Config{LMTP: lmtp, Digest: digest.MD5,
		OnMessage: func(m smtpsink.Message) {
			mu.Lock()
			fmt.Fprintf(&b, "%s %d SESSION-%d\n", m.Digest, m.Size, m.Session)
			mu.Unlock()
		}})
	return srv.Addr().String(), func() string {
		mu.Lock()
		defer mu.Unlock()
		return b.String()
	}
}

// startSmtpsinkCfg runs package smtpsink's sink with cfg on 127.0.0.1:0
// until the test ends.
func startSmtpsinkCfg(t *testing.T, cfg smtpsink.Config) *smtpsink.Server {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	srv, err := smtpsink.Listen(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Close() })
	return srv
}

// BDAT and DATA, pipelined or not, SMTP and LMTP, every body, against
// package smtpsink: every message arrives with the bytes the run meant
// (Verify against the sink's digests), and nothing is an error.
func TestSmtpsink(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"data", Config{Sessions: 3, Messages: 30, Length: 4096, Body: "mail", Reuse: true}},
		{"data-pipelining", Config{Sessions: 3, Messages: 30, Length: 4096, Body: "mail", Reuse: true, Pipelining: true, Recipients: 3}},
		{"bdat", Config{Sessions: 3, Messages: 30, Length: 10000, Body: "base64", Reuse: true, Chunking: true, ChunkSize: 4096}},
		{"bdat-pipelining", Config{Sessions: 3, Messages: 30, Length: 10000, Body: "mail", Reuse: true, Chunking: true, ChunkSize: 1000, Pipelining: true}},
		{"bdat-one-chunk", Config{Sessions: 2, Messages: 10, Length: 100, Chunking: true, Pipelining: true}},
		{"longline", Config{Sessions: 2, Messages: 10, Length: 50000, Body: "longline", Reuse: true, Pipelining: true}},
		{"lmtp-bdat", Config{Sessions: 2, Messages: 20, Recipients: 3, LMTP: true, Reuse: true, Chunking: true, ChunkSize: 500, Length: 2000, Pipelining: true}},
		{"length-range", Config{Sessions: 2, Messages: 30, Length: 0, LengthMax: 20000, Body: "mail", Reuse: true, Pipelining: true}},
		{"length-range-pattern-bdat", Config{Sessions: 2, Messages: 30, Length: 100, LengthMax: 5000, Reuse: true, Chunking: true, ChunkSize: 700}},
		{"length-range-bdat-pipelining", Config{Sessions: 2, Messages: 30, Length: 0, LengthMax: 5000, Body: "mail", Reuse: true, Chunking: true, ChunkSize: 333, Pipelining: true}},
		{"message-set", Config{Sessions: 2, Messages: 10, MessageSet: [][]byte{[]byte("Subject: a\n\n.a\n"), []byte("Subject: b\r\n\r\nb\r")}, Headers: []string{"X-H: v"}, Reuse: true, Pipelining: true}},
		{"message-file", Config{Sessions: 2, Messages: 10, Message: []byte("Subject: dots\n\n.\n..\n.x\n"), Reuse: true, Pipelining: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, log := startSmtpsink(t, c.cfg.LMTP)
			cfg := c.cfg
			cfg.Addr, cfg.Digests = addr, true
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			n := int64(cfg.Messages)
			if res.Delivered != n || res.Errors != 0 || res.Chunking != cfg.Chunking || res.Pipelining != cfg.Pipelining {
				t.Fatalf("%+v", res)
			}
			v, err := Verify(strings.NewReader(log()), res.Digests)
			if err != nil || !v.OK() || v.Matched != n {
				t.Errorf("verify: %+v, %v", v, err)
			}
			if cfg.Chunking && (res.Replies["data"] != nil || res.Replies["dot"][250] == 0) {
				t.Errorf("replies %v", res.Replies)
			}
		})
	}
}

// idleClock is the test's fake clock, but each wait between a session's
// messages (Config.Wait) first waits until idle returns.
type idleClock struct {
	*fakeClock
	idle func(ctx context.Context)
}

func (c *idleClock) Waiter(time.Duration) sleep.Waiter { return c }

func (c *idleClock) Until(ctx context.Context, t time.Time) {
	c.idle(ctx)
	c.fakeClock.Until(ctx, t)
}

// Issue 27's case against package smtpsink: a session that waits between
// messages (-d -w) longer than the sink's Timeout finds its connection
// ended by the sink's 421 each second message. The wait is the test's:
// it lasts until the sink has ended every session the source opened (so
// it is longer than the sink's Timeout, however slow the machine), and
// the sink's Timeout is long beside the source's turns between commands.
// Of six messages the first, third and fifth are delivered, each on a
// connection of its own; the others fail with the 421 their MAIL meets,
// and nothing is an I/O error (each connection ends with a 421, so no
// QUIT is sent). With pipelining, the group's other replies are never
// awaited.
func TestSmtpsinkTimeout421(t *testing.T) {
	for _, pipe := range []bool{false, true} {
		ended := make(chan struct{}, 16)
		srv := startSmtpsinkCfg(t, smtpsink.Config{Timeout: time.Second,
			OnSessionEnd: func(smtpsink.SessionInfo) { ended <- struct{}{} }})
		var dialled atomic.Int64
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			if err == nil {
				dialled.Add(1)
			}
			return c, err
		}
		var gone int64 // sessions ended, as far as the waits have seen
		clk := &idleClock{fakeClock: newFakeClock(), idle: func(ctx context.Context) {
			for gone < dialled.Load() {
				select {
				case <-ended:
					gone++
				case <-ctx.Done():
					return
				case <-time.After(time.Minute): // a bound on a broken test's wait
					t.Error("the sink did not end an idle session")
					return
				}
			}
		}}
		cfg := base(srv.Addr().String())
		cfg.Messages, cfg.Reuse, cfg.Wait, cfg.Length, cfg.Pipelining = 6, true, 3*time.Second, 2000, pipe
		res, err := RunWith(context.Background(), cfg, dial, clk)
		if err != nil {
			t.Fatal(err)
		}
		accounted(t, res)
		if res.Delivered != 3 || res.Failed != 3 || res.Connections != 3 || res.IOErrors != 0 || res.ProtocolErrors != 0 ||
			res.Rejections != 3 || res.Replies["mail"][421] != 3 || res.Replies["quit"] != nil || res.Pipelining != pipe {
			t.Errorf("pipelining %v: %+v", pipe, res)
		}
	}
}

// AUTH CRAM-MD5, XOAUTH2 and OAUTHBEARER against package smtpsink, which
// checks CRAM-MD5's digest against the password and takes a bearer token
// as the password: the right secret delivers, a wrong one is ErrAuth.
func TestSmtpsinkAuthMechs(t *testing.T) {
	for _, mech := range []string{"CRAM-MD5", "XOAUTH2", "OAUTHBEARER"} {
		t.Run(mech, func(t *testing.T) {
			var got atomic.Int64
			srv := startSmtpsinkCfg(t, smtpsink.Config{Auth: true, AuthPlaintext: true, AuthMechanisms: []string{mech},
				AuthUsers: map[string]string{"alice": "s3cret"},
				OnMessage: func(m smtpsink.Message) {
					if m.Authenticated && m.AuthUser == "alice" {
						got.Add(1)
					}
				}})
			cfg := Config{Addr: srv.Addr().String(), Sessions: 2, Messages: 6, Reuse: true, AuthUser: "alice", AuthPass: "s3cret", AuthMech: mech}
			res, err := Run(context.Background(), cfg)
			if err != nil || res.Delivered != 6 || got.Load() != 6 {
				t.Fatalf("%v: delivered %d, %d authenticated at the sink", err, res.Delivered, got.Load())
			}
			cfg.AuthPass = "wrong"
			if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrAuth) {
				t.Errorf("a wrong secret: %v, want ErrAuth", err)
			}
		})
	}
}

// A server that refuses the data and closes while the client still
// writes it (smtp-sink -A 0: 354, then 550 and a close) is counted as the
// refusal it sent, not as the broken pipe the write met.
func TestRefusalWriteFailed(t *testing.T) {
	srv := startSmtpsinkCfg(t, smtpsink.Config{AbortData: true})
	cfg := base(srv.Addr().String())
	cfg.Messages, cfg.Length, cfg.WindowSize = 1, 8<<20, 16<<10
	res := runOK(t, cfg)
	if res.Failed != 1 || res.Rejections != 1 || res.IOErrors != 0 {
		t.Errorf("%+v", res)
	}
}

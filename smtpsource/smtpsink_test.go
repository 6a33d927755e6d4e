package smtpsource

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/wirespeed/wirespeed/digest"
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

package smtpsource

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A reply cut short, its last line without its line end, is no reply: a
// server that stalls in mid-line (one that drips its replies slower than
// Timeout allows) fails the exchange with a timeout, counted as an I/O
// error of the phase whose reply it was, and one that closes the
// connection in mid-line fails it with an unexpected EOF. Before, the
// part that had come was taken as the whole reply: "250 2.0.0 Ok" cut
// short after the end of data delivered the message, and a greeting cut
// short was a greeting, the timeout then charged to EHLO's write.
func TestReplyCutShort(t *testing.T) {
	for _, tc := range []struct {
		verb, reply, phase, err string
	}{
		{".", "part:250 2.0.0 Ok", "dot: ", "timeout"},
		{".", "part!250 2.0.0 Ok", "dot: ", "unexpected EOF"},
		{"CONNECT", "part:220 fake ESMTP", "banner: ", "timeout"},
		{"MAIL", "part:250 2.1.0 Ok", "mail: ", "timeout"},
	} {
		t.Run(tc.reply, func(t *testing.T) {
			f := &fakeServer{reply: func(verb, arg string) string {
				if verb == tc.verb {
					return tc.reply
				}
				return ""
			}}
			h := holdDeadlines(f)
			cfg := base(f.start(t))
			cfg.Timeout = 50 * time.Millisecond
			res := h.run(t, cfg)
			if res.Delivered != 0 || res.Failed != 1 || res.IOErrors != 1 || res.Errors != 1 ||
				!strings.HasPrefix(res.FirstError, tc.phase) || !strings.Contains(res.FirstError, tc.err) {
				t.Fatalf("%+v", res)
			}
		})
	}
}

// A server that stops reading after DATA's 354: the write of a message
// larger than the socket buffers then blocks, and Timeout bounds it. The
// message fails with one I/O error, a write timeout of its data ("dot"),
// the connection is closed, and the next message goes on a new one.
func TestStallWrite(t *testing.T) {
	var n atomic.Int64
	f := &fakeServer{reply: func(verb, arg string) string {
		if verb == "DATA" && n.Add(1) == 1 {
			return "stall:354 go ahead"
		}
		return ""
	}}
	h := holdDeadlines(f)
	cfg := base(f.start(t))
	// Small socket buffers (the server's receive window stays small
	// while it does not read), and a first message many times their
	// size; the second is small.
	large := append([]byte("Subject: x\n\n"), bytes.Repeat([]byte(strings.Repeat("x", 76)+"\n"), 16<<10)...)
	cfg.MessageSet = [][]byte{large, []byte("Subject: y\n\nsmall\n")}
	cfg.Messages, cfg.Reuse, cfg.Timeout, cfg.WindowSize = 2, true, 50*time.Millisecond, 16<<10
	res := h.run(t, cfg)
	if res.Delivered != 1 || res.Failed != 1 || res.IOErrors != 1 || res.Errors != 1 || res.Connections != 2 ||
		!strings.HasPrefix(res.FirstError, "dot: write") || !strings.Contains(res.FirstError, "timeout") {
		t.Fatalf("%+v", res)
	}
}

// A server that refuses a message while it is being sent ("552 message
// too big", "554 transaction failed") and then reads no more: the write
// of the data blocks until Timeout, and the refusal, which came before,
// is what the message failed with: one rejection, counted under "dot",
// the end of data's reply, not a write timeout. The refusal comes with
// the 354 (in the same write: the client holds it read before it sends
// the data) or when the server has read the data's first byte (it waits
// in the socket). Over TLS too. A server that stops reading without a
// word leaves a write timeout, as before. Before, every one was a
// timeout (an I/O error, "dot: write ...: i/o timeout"), and the
// server's refusal went uncounted.
func TestRefusalMidData(t *testing.T) {
	srvTLS, roots := testCerts(t)
	for _, tc := range []struct {
		name, reply string
		code        int // the refusal's; 0: none
	}{
		{"with354", "stall:354 go ahead\r\n552 5.3.4 message too big", 552},
		{"afterFirstByte", "midstall:554 5.3.0 transaction failed", 554},
		{"noReply", "stall:354 go ahead", 0},
	} {
		for _, overTLS := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/tls=%v", tc.name, overTLS), func(t *testing.T) {
				t.Parallel()
				var n atomic.Int64
				f := &fakeServer{reply: func(verb, arg string) string {
					if verb == "DATA" && n.Add(1) == 1 {
						return tc.reply
					}
					return ""
				}}
				if overTLS {
					f.tlsConf, f.implicit = srvTLS, true
				}
				cfg := base(f.start(t))
				if overTLS {
					cfg.TLSImplicit, cfg.TLSConfig = true, &tls.Config{RootCAs: roots}
				}
				// As TestStallWrite: small socket buffers and a first
				// message many times their size, so that its write blocks.
				large := append([]byte("Subject: x\n\n"), bytes.Repeat([]byte(strings.Repeat("x", 76)+"\n"), 16<<10)...)
				cfg.MessageSet = [][]byte{large, []byte("Subject: y\n\nsmall\n")}
				// The write waits out the whole Timeout: one long enough
				// for a TLS handshake, and the refusal after the first
				// byte, under any load; the cases run side by side.
				cfg.Messages, cfg.Reuse, cfg.Timeout, cfg.WindowSize = 2, true, 2*time.Second, 16<<10
				res := runOK(t, cfg)
				if res.Delivered != 1 || res.Failed != 1 || res.Errors != 1 || res.Connections != 2 {
					t.Fatalf("delivered %d, failed %d, errors %d (I/O %d, rejections %d), %d connections, first %q; want 1, 1, 1, 2",
						res.Delivered, res.Failed, res.Errors, res.IOErrors, res.Rejections, res.Connections, res.FirstError)
				}
				if tc.code == 0 {
					if res.IOErrors != 1 || !strings.HasPrefix(res.FirstError, "dot: write") || !strings.Contains(res.FirstError, "timeout") {
						t.Fatalf("I/O errors %d, first %q; want 1, a write timeout", res.IOErrors, res.FirstError)
					}
					return
				}
				code := tc.code
				if res.Rejections != 1 || res.IOErrors != 0 || res.Replies["dot"][code] != 1 ||
					!strings.HasPrefix(res.FirstError, fmt.Sprintf("dot: %d ", code)) {
					t.Fatalf("rejections %d, I/O errors %d, dot replies %v, first %q; want 1, 0, one %d, its text",
						res.Rejections, res.IOErrors, res.Replies["dot"], res.FirstError, code)
				}
			})
		}
	}
}

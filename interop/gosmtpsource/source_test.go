package gosmtpsource

import (
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-smtp"
	"github.com/wirespeed/wirespeed/smtpsource"
)

// received is what go-smtp's sessions were given.
type received struct {
	mu     sync.Mutex
	log    strings.Builder // "<md5> <size> <n>" per message, as a sink's digest log
	n      int
	mails  int
	rcpts  int
	errs   []string // errors from go-smtp's data readers and its log
	resets int
	file   io.Writer // if set, gets the log's lines too
}

func (r *received) add(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
}

type session struct {
	r     *received
	rcpts int
}

func (s *session) Reset()        { s.rcpts = 0; s.r.add(func() { s.r.resets++ }) }
func (s *session) Logout() error { return nil }

func (s *session) Mail(from string, opts *smtp.MailOptions) error {
	s.r.add(func() { s.r.mails++ })
	return nil
}

func (s *session) Rcpt(to string, opts *smtp.RcptOptions) error {
	s.rcpts++
	s.r.add(func() { s.r.rcpts++ })
	return nil
}

func (s *session) Data(rd io.Reader) error {
	body, err := io.ReadAll(rd)
	s.r.add(func() {
		if err != nil {
			s.r.errs = append(s.r.errs, "data: "+err.Error())
			return
		}
		s.r.n++
		fmt.Fprintf(&s.r.log, "%x %d %d\n", md5.Sum(body), len(body), s.r.n)
		if s.r.file != nil {
			fmt.Fprintf(s.r.file, "%x %d %d\n", md5.Sum(body), len(body), s.r.n)
		}
	})
	return err
}

// LMTPData answers each recipient alike.
func (s *session) LMTPData(rd io.Reader, status smtp.StatusCollector) error {
	return s.Data(rd)
}

func (r *received) Printf(format string, v ...any) {
	r.add(func() { r.errs = append(r.errs, "log: "+fmt.Sprintf(format, v...)) })
}
func (r *received) Println(v ...any) {
	r.add(func() { r.errs = append(r.errs, "log: "+fmt.Sprint(v...)) })
}

// startGoSMTP runs a go-smtp server on 127.0.0.1:0 until the test ends,
// with its own limits unless noLineLimit.
func startGoSMTP(t *testing.T, lmtp, noLineLimit bool) (string, *received) {
	t.Helper()
	return startGoSMTPWith(t, func(rec *received, srv *smtp.Server) {
		srv.LMTP = lmtp
		if noLineLimit {
			srv.MaxLineLength = 0
		}
	})
}

// startGoSMTPWith runs a go-smtp server on 127.0.0.1:0 until the test
// ends, its sessions of type session unless configure sets another
// Backend, its options set by configure.
func startGoSMTPWith(t *testing.T, configure func(*received, *smtp.Server)) (string, *received) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rec := &received{}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{r: rec}, nil
	}))
	srv.Domain = "gosmtp.test"
	configure(rec, srv)
	srv.EnableBINARYMIME = true
	srv.ErrorLog = rec
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-served; err != nil && !strings.Contains(err.Error(), "closed") {
			t.Errorf("go-smtp Serve: %v", err)
		}
	})
	return ln.Addr().String(), rec
}

// wirespeed's source against go-smtp's server: every message delivered,
// no error on either side, every reply a success, and the bodies go-smtp
// read match the source's digests one for one.
func TestSourceAgainstGoSMTP(t *testing.T) {
	for _, c := range []struct {
		name        string
		cfg         smtpsource.Config
		noLineLimit bool // go-smtp's MaxLineLength off (its default: 2000)
	}{
		{"data", smtpsource.Config{Sessions: 4, Messages: 200, Length: 4096, Reuse: true}, false},
		{"data-no-reuse", smtpsource.Config{Sessions: 4, Messages: 40, Length: 1000, Body: "mail"}, false},
		{"pipelining", smtpsource.Config{Sessions: 4, Messages: 200, Length: 4096, Reuse: true, Pipelining: true, Body: "mail"}, false},
		{"pipelining-r3", smtpsource.Config{Sessions: 3, Messages: 90, Recipients: 3, Length: 2000, Reuse: true, Pipelining: true}, false},
		{"pipelining-1MiB", smtpsource.Config{Sessions: 2, Messages: 6, Length: 1 << 20, Reuse: true, Pipelining: true, Body: "base64"}, false},
		{"chunking", smtpsource.Config{Sessions: 3, Messages: 60, Length: 10000, Reuse: true, Chunking: true, ChunkSize: 4096, Body: "mail"}, false},
		{"chunking-pipelining", smtpsource.Config{Sessions: 3, Messages: 60, Length: 10000, Reuse: true, Chunking: true, ChunkSize: 1000, Pipelining: true, Body: "base64"}, false},
		{"longline", smtpsource.Config{Sessions: 2, Messages: 10, Length: 50000, Body: "longline", Reuse: true, Pipelining: true}, true},
		{"message-file", smtpsource.Config{Sessions: 2, Messages: 10, Message: []byte("Subject: dots\n\n.\n..\n.x\n"), Reuse: true, Pipelining: true}, false},
		{"lmtp-pipelining", smtpsource.Config{Sessions: 2, Messages: 40, Recipients: 3, LMTP: true, Reuse: true, Pipelining: true, Length: 3000}, false},
		{"lmtp-chunking", smtpsource.Config{Sessions: 2, Messages: 20, Recipients: 2, LMTP: true, Reuse: true, Chunking: true, ChunkSize: 500, Length: 2000, Pipelining: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, rec := startGoSMTP(t, c.cfg.LMTP, c.noLineLimit)
			cfg := c.cfg
			cfg.Addr, cfg.Helo, cfg.Digests = addr, "source.test", true
			res, err := smtpsource.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			n := int64(cfg.Messages)
			rcpts := int64(max(cfg.Recipients, 1))
			if res.Delivered != n || res.Errors != 0 || res.RcptOK != n*rcpts || res.Pipelining != cfg.Pipelining || res.Chunking != cfg.Chunking {
				t.Fatalf("%+v", res)
			}
			for phase, codes := range res.Replies {
				for code := range codes {
					if code >= 400 {
						t.Errorf("%s: reply %d: %v", phase, code, res.Replies)
					}
				}
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.errs) > 0 {
				t.Errorf("go-smtp: %q", rec.errs)
			}
			if int64(rec.n) != n || int64(rec.mails) != n || int64(rec.rcpts) != n*rcpts {
				t.Errorf("go-smtp took %d messages, %d MAILs, %d RCPTs; want %d, %d, %d", rec.n, rec.mails, rec.rcpts, n, n, n*rcpts)
			}
			v, err := smtpsource.Verify(strings.NewReader(rec.log.String()), res.Digests)
			if err != nil || !v.OK() || v.Matched != n {
				t.Errorf("verify: %+v, %v", v, err)
			}
		})
	}
}

package smtpsink_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net/smtp"
	"strings"
	"sync"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/smtpsink"
)

// A sink inside an integration test: the code under test sends mail to
// it, and OnMessage has seen each message by the time the client has the
// reply.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // closes the sink
	got := make(chan smtpsink.Message, 10)
	s, err := smtpsink.Listen(ctx, smtpsink.Config{
		Addr:      "127.0.0.1:0",
		MaxSize:   1 << 20,
		Digest:    digest.SHA256,
		OnMessage: func(m smtpsink.Message) { got <- m },
	})
	if err != nil {
		log.Fatal(err)
	}
	go s.Serve()

	// The code under test; here the standard library's client.
	body := "Subject: hello\r\n\r\nHello, sink.\r\n"
	if err := smtp.SendMail(s.Addr().String(), nil, "app@example.com", []string{"ops@example.com", "dev@example.com"}, []byte(body)); err != nil {
		log.Fatal(err)
	}

	m := <-got
	fmt.Println(m.From, strings.Join(m.To, " "), m.Size)
	fmt.Println(m.Digest)
	want, _ := digest.Reader(digest.SHA256, strings.NewReader(body))
	fmt.Println(m.Digest.Equal(want))
	st := s.Stats()
	fmt.Println(st.Messages, st.Recipients, st.Bytes, st.ErrorCount())
	// Output:
	// app@example.com ops@example.com dev@example.com 32
	// 5d752bc0a0fa4308af0d2935c4337ae01d8938bea50c8d2dbdf2b240551595e9
	// true
	// 1 2 32 0
}

// Forced replies and a size limit make the failures a client must handle.
func ExampleConfig_force() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := smtpsink.Listen(ctx, smtpsink.Config{
		Addr: "127.0.0.1:0",
		Force: map[string]smtpsink.Reply{
			"RCPT": {Code: 450, Text: "4.2.0 try again later"},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	go s.Serve()
	err = smtp.SendMail(s.Addr().String(), nil, "a@example.com", []string{"b@example.com"}, []byte("x\r\n"))
	fmt.Println(err)
	fmt.Println(s.Stats().Errors)
	// Output:
	// 450 "4.2.0 try again later"
	// map[450:1]
}

// A sink for a client that must use STARTTLS and AUTH, as a submission
// server (port 587) wants: the certificate is made at start, and any
// credentials are accepted.
func ExampleSelfSigned() {
	cert, err := smtpsink.SelfSigned("127.0.0.1")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := smtpsink.Listen(ctx, smtpsink.Config{
		Addr:        "127.0.0.1:0",
		TLS:         &tls.Config{Certificates: []tls.Certificate{cert}},
		TLSRequired: true,
		Auth:        true,
	})
	if err != nil {
		log.Fatal(err)
	}
	go s.Serve()

	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	c, err := smtp.Dial(s.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.Mail("app@example.com")) // before STARTTLS
	if err := c.StartTLS(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Auth(smtp.PlainAuth("", "app", "secret", "127.0.0.1")))
	// Output:
	// 530 "5.7.0 Must issue a STARTTLS command first"
	// <nil>
}

// Rules make failures on cue, for the addresses a test names.
func ExampleParseRule() {
	bounce, err := smtpsink.ParseRule("rcpt:^bounce@=550 5.1.1 no such user")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := smtpsink.Listen(ctx, smtpsink.Config{Addr: "127.0.0.1:0", Rules: []smtpsink.Rule{bounce}})
	if err != nil {
		log.Fatal(err)
	}
	go s.Serve()
	fmt.Println(smtp.SendMail(s.Addr().String(), nil, "a@example.com", []string{"bounce@example.com"}, []byte("x\r\n")))
	fmt.Println(smtp.SendMail(s.Addr().String(), nil, "a@example.com", []string{"ok@example.com"}, []byte("x\r\n")))
	// Output:
	// 550 "5.1.1 no such user"
	// <nil>
}

// Capture keeps each message's bytes, and Decide answers a message from
// them.
func ExampleConfig_decide() {
	var mu sync.Mutex
	data := map[uint64]*bytes.Buffer{} // by session: here, one message each
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := smtpsink.Listen(ctx, smtpsink.Config{
		Addr: "127.0.0.1:0",
		Capture: func(t smtpsink.Transaction) io.WriteCloser {
			mu.Lock()
			defer mu.Unlock()
			b := new(bytes.Buffer)
			data[t.Session] = b
			return nopCloser{b}
		},
		Decide: func(m smtpsink.Message) smtpsink.Reply {
			mu.Lock()
			defer mu.Unlock()
			if strings.Contains(data[m.Session].String(), "EICAR") {
				return smtpsink.Reply{Code: 554, Text: "5.7.1 virus found"}
			}
			return smtpsink.Reply{} // the sink's own reply
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	go s.Serve()
	fmt.Println(smtp.SendMail(s.Addr().String(), nil, "a@example.com", []string{"b@example.com"}, []byte("EICAR test\r\n")))
	fmt.Println(smtp.SendMail(s.Addr().String(), nil, "a@example.com", []string{"b@example.com"}, []byte("clean\r\n")))
	// Output:
	// 554 "5.7.1 virus found"
	// <nil>
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

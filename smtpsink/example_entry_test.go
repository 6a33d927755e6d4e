package smtpsink_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/smtp"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/smtpsink"
	"github.com/wirespeed/wirespeed/textproto"
)

// A sink as a load target that runs until interrupted, with its limits
// set: a message over MaxSize is read to its end and refused with 552,
// and the session goes on. Shutdown lets the sessions finish, and then
// Serve returns nil.
func ExampleListen() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s, err := smtpsink.Listen(ctx, smtpsink.Config{
		Addr:          "127.0.0.1:0",
		Hostname:      "sink.example",
		MaxSize:       1 << 20,
		MaxRecipients: 100,
		Timeout:       time.Minute,
	})
	if err != nil {
		log.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()

	c, err := smtp.Dial(s.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for _, size := range []int{100, 2 << 20} {
		fmt.Println(send(c, strings.Repeat("x", size)))
	}
	if err := c.Quit(); err != nil {
		log.Fatal(err)
	}

	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(sctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-served)
	st := s.Stats()
	fmt.Println(st.Messages, st.Errors)
	// Output:
	// <nil>
	// 552 "5.3.4 Error: message size exceeds fixed limit"
	// <nil>
	// 1 map[552:1]
}

// send sends one message with body on c and returns the data's reply as
// an error, or nil.
func send(c *smtp.Client, body string) error {
	if err := c.Mail("app@example.com"); err != nil {
		return err
	}
	if err := c.Rcpt("ops@example.com"); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte("Subject: test\r\n\r\n" + body + "\r\n")); err != nil {
		return err
	}
	return w.Close()
}

// Shutdown waits for clients to QUIT, for as long as its context allows;
// a client still connected then gets 421, and Shutdown returns the
// context's error.
func ExampleServer_Shutdown() {
	s, err := smtpsink.Listen(context.Background(), smtpsink.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		log.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()

	c, err := textproto.Dial("tcp", s.Addr().String()) // a client that never QUITs
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, _, err := c.ReadResponse(220); err != nil {
		log.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = s.Shutdown(ctx)
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	fmt.Println(<-served)
	_, _, err = c.ReadResponse(220) // what the client has next
	fmt.Println(err)
	// Output:
	// true
	// <nil>
	// 421 "4.3.2 Service shutting down, closing connection"
}

package textproto_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/wirespeed/wirespeed/textproto"
)

func ExampleReader_ReadLine() {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader("first line\r\nsecond\nunterminated")))
	for {
		line, err := r.ReadLine()
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		fmt.Printf("%q\n", line)
	}
	// Output:
	// "first line"
	// "second"
	// "unterminated"
	// error: EOF
}

func ExampleReader_ReadMIMEHeader() {
	const in = "content-type: text/plain\r\n" +
		"Subject: a long\r\n" +
		"  subject\r\n" +
		"Received: from a\r\n" +
		"received: from b\r\n" +
		"\r\n" +
		"body\r\n"
	r := textproto.NewReader(bufio.NewReader(strings.NewReader(in)))
	h, err := r.ReadMIMEHeader()
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("%s: %q\n", k, h[k])
	}
	body, _ := r.ReadLine()
	fmt.Println("then:", body)
	// Output:
	// Content-Type: ["text/plain"]
	// Received: ["from a" "from b"]
	// Subject: ["a long subject"]
	// then: body
}

func ExampleReader_ReadResponse() {
	const in = "250-mx.example.com greets you\r\n" +
		"250-SIZE 35882577\r\n" +
		"250 SMTPUTF8\r\n" +
		"550 mailbox unavailable\r\n"
	r := textproto.NewReader(bufio.NewReader(strings.NewReader(in)))
	code, msg, err := r.ReadResponse(250)
	fmt.Printf("%d %q %v\n", code, msg, err)

	// A code other than the expected one is an *Error.
	_, _, err = r.ReadResponse(2)
	var e *textproto.Error
	if errors.As(err, &e) {
		fmt.Println("refused:", e.Code, e.Msg)
	}
	// Output:
	// 250 "mx.example.com greets you\nSIZE 35882577\nSMTPUTF8" <nil>
	// refused: 550 mailbox unavailable
}

// A server sets limits on what it reads from clients. After a limit error
// the Reader skips the rest of the offending line or header, so the server
// can answer and read the next command.
func ExampleReader_SetLimits() {
	in := "HELO " + strings.Repeat("x", 2000) + "\r\nNOOP\r\n"
	r := textproto.NewReader(bufio.NewReader(strings.NewReader(in)))
	r.SetLimits(textproto.Limits{MaxLineBytes: 512, MaxHeaderBytes: 64 << 10, MaxHeaderFields: 100})
	for {
		line, err := r.ReadLine()
		if errors.Is(err, textproto.ErrLineTooLong) {
			fmt.Println("500 line too long")
			continue
		}
		if err != nil {
			break
		}
		fmt.Println("command:", line)
	}
	// Output:
	// 500 line too long
	// command: NOOP
}

// A client and a server talk over a connection, here an in-memory one.
func ExampleConn() {
	client, server := net.Pipe()
	go func() {
		s := textproto.NewConn(server)
		defer s.Close()
		s.PrintfLine("220 ready")
		for {
			line, err := s.ReadLine()
			if err != nil {
				return
			}
			if line == "QUIT" {
				s.PrintfLine("221 bye")
				return
			}
			s.PrintfLine("250-you said")
			s.PrintfLine("250 %s", line)
		}
	}()

	c := textproto.NewConn(client)
	defer c.Close()
	if _, _, err := c.ReadCodeLine(220); err != nil {
		fmt.Println(err)
		return
	}
	for _, cmd := range []string{"HELO me", "QUIT"} {
		id, err := c.Cmd("%s", cmd)
		if err != nil {
			fmt.Println(err)
			return
		}
		c.StartResponse(id)
		code, msg, err := c.ReadResponse(2)
		c.EndResponse(id)
		fmt.Printf("%s -> %d %q %v\n", cmd, code, msg, err)
	}
	// Output:
	// HELO me -> 250 "you said\nHELO me" <nil>
	// QUIT -> 221 "bye" <nil>
}

func ExampleDial() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		textproto.NewConn(nc).PrintfLine("200 hello")
		nc.Close()
	}()

	c, err := textproto.Dial("tcp", ln.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	code, msg, err := c.ReadCodeLine(200)
	fmt.Println(code, msg, err)
	// Output:
	// 200 hello <nil>
}

func ExampleCanonicalMIMEHeaderKey() {
	for _, k := range []string{"content-type", "X-CUSTOM-header", "key with space"} {
		fmt.Printf("%q\n", textproto.CanonicalMIMEHeaderKey(k))
	}
	// Output:
	// "Content-Type"
	// "X-Custom-Header"
	// "key with space"
}

func ExampleWriter_PrintfLine() {
	var sb strings.Builder
	w := textproto.NewWriter(bufio.NewWriter(&sb))
	w.PrintfLine("MAIL FROM:<%s>", "a@example.com")
	fmt.Printf("%q\n", sb.String())
	// Output:
	// "MAIL FROM:<a@example.com>\r\n"
}

package gosmtp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"
	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/textproto"
)

// wsServer is a minimal SMTP server on wirespeed's textproto: it accepts one
// message per connection and reads its data with DotReaderMode(dot.Raw).
type wsServer struct {
	l    net.Listener
	msgs chan decoded
}

func startWSServer(t *testing.T) *wsServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &wsServer{l: l, msgs: make(chan decoded, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.serve(c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return s
}

// serve speaks just enough SMTP for go-smtp's client; a failure to write
// ends the connection, and the client reports it.
func (s *wsServer) serve(c net.Conn) {
	defer c.Close()
	r := textproto.NewReader(bufio.NewReader(c))
	w := textproto.NewWriter(bufio.NewWriter(c))
	if w.PrintfLine("220 wirespeed.test ESMTP") != nil {
		return
	}
	for {
		line, err := r.ReadLine()
		if err != nil {
			return
		}
		verb, _, _ := strings.Cut(strings.ToUpper(line), " ")
		switch verb {
		case "EHLO", "HELO":
			err = w.PrintfLine("250 wirespeed.test")
		case "MAIL", "RCPT":
			err = w.PrintfLine("250 OK")
		case "DATA":
			if err = w.PrintfLine("354 go ahead"); err != nil {
				return
			}
			var d decoded
			d.data, d.err = io.ReadAll(r.DotReaderMode(dot.Raw))
			s.msgs <- d
			if d.err != nil {
				err = w.PrintfLine("554 %v", d.err)
			} else {
				err = w.PrintfLine("250 OK")
			}
		case "QUIT":
			w.PrintfLine("221 bye")
			return
		default:
			err = w.PrintfLine("502 %s", verb)
		}
		if err != nil {
			return
		}
	}
}

// TestGoSMTPClientToDotReader sends message texts with go-smtp's client to
// a server that reads them with wirespeed's Raw dot reader, which must give
// back each text: with CRLF line endings, as go-smtp's client (through
// net/textproto's dot writer) turns every LF into CRLF and ends an open last
// line. The texts have no bare CR, which that writer would pass on and the
// Raw reader refuse.
func TestGoSMTPClientToDotReader(t *testing.T) {
	s := startWSServer(t)
	bodies := messageBodies()
	for _, b := range messageBodies() {
		if !strings.Contains(b, "\r") {
			continue
		}
		// The same text with LF line endings.
		bodies = append(bodies, strings.ReplaceAll(b, "\r\n", "\n"))
	}
	for i, body := range bodies {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			c, err := smtp.Dial(s.l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Hello("client.test"); err != nil {
				t.Fatal(err)
			}
			if err := c.Mail("from@client.test", nil); err != nil {
				t.Fatal(err)
			}
			if err := c.Rcpt("to@wirespeed.test", nil); err != nil {
				t.Fatal(err)
			}
			wc, err := c.Data()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(wc, body); err != nil {
				t.Fatal(err)
			}
			cerr := wc.Close()
			got := <-s.msgs
			if cerr != nil {
				var se *smtp.SMTPError
				t.Fatalf("go-smtp client: %v (an SMTP reply: %v); the server read %s, %v", cerr, errors.As(cerr, &se), q(got.data), got.err)
			}
			if err := c.Quit(); err != nil {
				t.Fatal(err)
			}
			// net/textproto's dot writer counts the start of an
			// empty message as an open line too: it sends "\r\n.\r\n".
			want := strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\n", "\r\n")
			if !strings.HasSuffix(want, "\r\n") {
				want += "\r\n"
			}
			if string(got.data) != want || got.err != nil {
				t.Errorf("go-smtp's client sent %s; the Raw dot reader read %s (error %v), want %q", q([]byte(body)), q(got.data), got.err, want)
			}
		})
	}
}

package textproto_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/textproto"
)

func ExampleNewReader() {
	conn := strings.NewReader("+OK POP3 ready\r\n")
	r := textproto.NewReader(bufio.NewReader(conn))
	line, err := r.ReadLine()
	fmt.Println(line, err)
	// Output:
	// +OK POP3 ready <nil>
}

func ExampleReader_ReadLineBytes() {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader("EHLO client\r\n")))
	b, err := r.ReadLineBytes()
	fmt.Printf("%q %v\n", b, err)
	// Output:
	// "EHLO client" <nil>
}

func ExampleReader_ReadContinuedLine() {
	in := "Subject: a subject\r\n  folded over\r\n\tthree lines\r\nFrom: ann\r\n"
	r := textproto.NewReader(bufio.NewReader(strings.NewReader(in)))
	for {
		line, err := r.ReadContinuedLine()
		if err != nil {
			break
		}
		fmt.Printf("%q\n", line)
	}
	// Output:
	// "Subject: a subject folded over three lines"
	// "From: ann"
}

func ExampleReader_ReadContinuedLineBytes() {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader("To: ann,\r\n bob\r\n\r\n")))
	b, err := r.ReadContinuedLineBytes()
	fmt.Printf("%q %v\n", b, err)
	// Output:
	// "To: ann, bob" <nil>
}

func ExampleReader_ReadCodeLine() {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader("220 ready\r\n421 closing\r\n")))
	code, msg, err := r.ReadCodeLine(220)
	fmt.Println(code, msg, err)
	code, msg, err = r.ReadCodeLine(2) // any 2xx
	var e *textproto.Error
	fmt.Println(code, msg, errors.As(err, &e))
	// Output:
	// 220 ready <nil>
	// 421 closing true
}

func ExampleReader_ReadDotLines() {
	in := "1 first article\r\n2 second\r\n..3 dotted\r\n.\r\n"
	r := textproto.NewReader(bufio.NewReader(strings.NewReader(in)))
	lines, err := r.ReadDotLines()
	fmt.Printf("%q %v\n", lines, err)
	// Output:
	// ["1 first article" "2 second" ".3 dotted"] <nil>
}

func ExampleReader_ReadDotBytes() {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader("Subject: hi\r\n\r\nbody\r\n.\r\n")))
	data, err := r.ReadDotBytes()
	fmt.Printf("%q %v\n", data, err)
	// Output:
	// "Subject: hi\n\nbody\n" <nil>
}

func ExampleReader_Limits() {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader("")))
	fmt.Printf("%+v\n", r.Limits()) // none, as with net/textproto
	r.SetLimits(textproto.Limits{MaxLineBytes: 1000})
	fmt.Println(r.Limits().MaxLineBytes)
	// Output:
	// {MaxLineBytes:0 MaxHeaderBytes:0 MaxHeaderFields:0 MaxDotBytes:0 MaxDiscardBytes:0}
	// 1000
}

// A header with too many fields fails with ErrHeaderTooLarge; the Reader
// skips the rest of it and reads on.
func ExampleLimits() {
	in := "A: 1\r\nB: 2\r\nC: 3\r\n\r\nNEXT\r\n"
	r := textproto.NewReader(bufio.NewReader(strings.NewReader(in)))
	r.SetLimits(textproto.Limits{MaxHeaderFields: 2})
	_, err := r.ReadMIMEHeader()
	fmt.Println(errors.Is(err, textproto.ErrHeaderTooLarge))
	next, _ := r.ReadLine()
	fmt.Println(next)
	// Output:
	// true
	// NEXT
}

func ExampleNewWriter() {
	var conn strings.Builder
	w := textproto.NewWriter(bufio.NewWriter(&conn))
	w.PrintfLine("USER %s", "ann")
	fmt.Printf("%q\n", conn.String())
	// Output:
	// "USER ann\r\n"
}

// In Strict mode the input must already have "\r\n" line endings: a bare
// LF is refused instead of being turned into a line break.
func ExampleWriter_DotWriterMode() {
	var conn strings.Builder
	w := textproto.NewWriter(bufio.NewWriter(&conn))
	d := w.DotWriterMode(dot.Strict)
	io.WriteString(d, "ok\r\n.dot\r\n")
	fmt.Println(d.Close())
	fmt.Printf("%q\n", conn.String())

	d = w.DotWriterMode(dot.Strict)
	_, err := io.WriteString(d, "bare\n")
	fmt.Println(err, errors.Is(d.Close(), dot.ErrBareLF))
	// Output:
	// <nil>
	// "ok\r\n..dot\r\n.\r\n"
	// dot: bare LF at offset 4 true
}

func ExampleNewConn() {
	client, server := net.Pipe()
	go func() {
		textproto.NewConn(server).PrintfLine("200 hello")
		server.Close()
	}()
	c := textproto.NewConn(client)
	defer c.Close()
	code, msg, err := c.ReadCodeLine(200)
	fmt.Println(code, msg, err)
	// Output:
	// 200 hello <nil>
}

// Cmd sends a command in its turn; the id it returns orders the reading
// of the replies, here of two commands pipelined from two goroutines.
func ExampleConn_Cmd() {
	client, server := net.Pipe()
	go func() {
		s := textproto.NewConn(server)
		defer s.Close()
		for {
			line, err := s.ReadLine()
			if err != nil {
				return
			}
			s.PrintfLine("250 %s done", line)
		}
	}()
	c := textproto.NewConn(client)
	defer c.Close()
	replies := make(chan string, 2)
	for _, cmd := range []string{"RSET", "NOOP"} {
		id, err := c.Cmd("%s", cmd)
		if err != nil {
			fmt.Println(err)
			return
		}
		go func() {
			c.StartResponse(id)
			defer c.EndResponse(id)
			_, msg, _ := c.ReadCodeLine(250)
			replies <- fmt.Sprint(id, " ", msg)
		}()
	}
	r1, r2 := <-replies, <-replies
	fmt.Println(min(r1, r2))
	fmt.Println(max(r1, r2))
	// Output:
	// 0 RSET done
	// 1 NOOP done
}

func ExampleConn_Close() {
	client, server := net.Pipe()
	c := textproto.NewConn(client)
	fmt.Println(c.Close())
	_, err := server.Write([]byte("x"))
	fmt.Println(err)
	// Output:
	// <nil>
	// io: read/write on closed pipe
}

func ExampleTrimString() {
	fmt.Printf("%q\n", textproto.TrimString(" \t value \r\n"))
	// Output:
	// "value"
}

func ExampleTrimBytes() {
	fmt.Printf("%q\n", textproto.TrimBytes([]byte("\tvalue  ")))
	// Output:
	// "value"
}

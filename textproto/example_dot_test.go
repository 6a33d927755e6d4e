package textproto_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/textproto"
)

func ExampleReader_DotReader() {
	conn := strings.NewReader("Subject: hi\r\n\r\n..one dot\r\n.\r\nQUIT\r\n")
	r := textproto.NewReader(bufio.NewReader(conn))
	var body strings.Builder
	io.Copy(&body, r.DotReader()) // uses the DotReader's WriteTo
	cmd, _ := r.ReadLine()
	fmt.Printf("%q %s\n", body.String(), cmd)
	// Output:
	// "Subject: hi\n\n.one dot\n" QUIT
}

func ExampleReader_DotReaderMode() {
	// A server that must not be fooled by "\n.\n" (SMTP smuggling) and
	// caps messages at 1 MiB reads DATA like this.
	conn := strings.NewReader("hi\n.\nMAIL FROM:<smuggled>\r\n.\r\nQUIT\r\n")
	r := textproto.NewReader(bufio.NewReader(conn))
	r.SetLimits(textproto.Limits{MaxDotBytes: 1 << 20})
	_, err := io.Copy(io.Discard, r.DotReaderMode(dot.Strict))
	fmt.Println(err)
	cmd, _ := r.ReadLine() // the stream is still in step
	fmt.Println(cmd)
	// Output:
	// dot: bare LF at offset 2
	// QUIT
}

func ExampleWriter_DotWriter() {
	var conn strings.Builder
	w := textproto.NewWriter(bufio.NewWriter(&conn))
	d := w.DotWriter()
	io.Copy(d, strings.NewReader("hello\n.world\n")) // uses the DotWriter's ReadFrom
	d.Close()                                        // writes the end marker and flushes
	fmt.Printf("%q\n", conn.String())
	// Output:
	// "hello\r\n..world\r\n.\r\n"
}

func ExampleReader_DotReaderWith() {
	// An SMTP server takes the size limit of each transaction from the
	// client's SIZE parameter, on top of the limits it set once.
	conn := strings.NewReader("a line\r\nand a line much too long\r\n.\r\nQUIT\r\n")
	r := textproto.NewReader(bufio.NewReader(conn))
	r.SetLimits(textproto.Limits{MaxLineBytes: 998})
	d := r.DotReaderWith(textproto.DotOptions{Mode: dot.Strict, MaxBytes: 10, MaxLineBytes: 20})
	_, err := io.Copy(io.Discard, d)
	switch {
	case errors.Is(err, dot.ErrTooLarge): // takes precedence
		fmt.Println("552 message too large")
	case errors.Is(err, dot.ErrLineTooLong):
		fmt.Println("500 line too long")
	}
	fmt.Println(errors.Is(err, dot.ErrLineTooLong), d.Size())
	cmd, _ := r.ReadLine()
	fmt.Println(cmd)
	// Output:
	// 552 message too large
	// true 10
	// QUIT
}

func ExampleDotReader_Size() {
	conn := strings.NewReader("one\r\n..two\r\n.\r\n")
	r := textproto.NewReader(bufio.NewReader(conn))
	d := r.DotReaderWith(textproto.DotOptions{})
	io.Copy(io.Discard, d)
	fmt.Println(d.Size()) // "one\n.two\n"
	// Output:
	// 9
}

func ExampleDotReader_Read() {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader("hi\r\n.\r\n")))
	d := r.DotReaderWith(textproto.DotOptions{Mode: dot.Raw})
	b := make([]byte, 16)
	n, err := d.Read(b)
	fmt.Printf("%q %v\n", b[:n], err) // the block ended within b
	// Output:
	// "hi\r\n" EOF
}

func ExampleDotReader_WriteTo() {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader("hi\r\n.\r\n")))
	var sb strings.Builder
	n, err := r.DotReaderWith(textproto.DotOptions{}).WriteTo(&sb)
	fmt.Printf("%q %d %v\n", sb.String(), n, err)
	// Output:
	// "hi\n" 3 <nil>
}

// An SMTP server's DATA handler: the size limit of each transaction comes
// from the client's SIZE parameter, and the reply from what the block held.
// Whatever it held, the block has been read to its end marker, so the
// session goes on with the next command.
func ExampleReader_DotReaderWith_dataHandler() {
	conn := strings.NewReader("Subject: hi\r\n\r\nhello\r\n.\r\n" +
		"Subject: big\r\n\r\n" + strings.Repeat("x", 100) + "\r\n.\r\n" +
		"Subject: odd\r\n\r\nbare\nLF\r\n.\r\n" +
		"QUIT\r\n")
	r := textproto.NewReader(bufio.NewReader(conn))
	data := func(size int64) string {
		d := r.DotReaderWith(textproto.DotOptions{Mode: dot.Strict, MaxBytes: size, MaxLineBytes: 998})
		_, err := io.Copy(io.Discard, d) // a real server spools the message
		switch {
		case err == nil:
			return fmt.Sprintf("250 2.0.0 OK: %d bytes", d.Size())
		case errors.Is(err, dot.ErrTooLarge): // takes precedence over the others
			return "552 5.3.4 message too large"
		case errors.Is(err, dot.ErrLineTooLong):
			return "500 5.5.2 line too long"
		case errors.Is(err, dot.ErrBareLF), errors.Is(err, dot.ErrBareCR):
			return "550 5.6.0 bare CR or LF in the message"
		default: // the connection failed, or ErrNotInStep: close it
			return "421 4.4.2 closing"
		}
	}
	for _, size := range []int64{1000, 50, 1000} {
		fmt.Println(data(size))
	}
	cmd, _ := r.ReadLine()
	fmt.Println(cmd)
	// Output:
	// 250 2.0.0 OK: 19 bytes
	// 552 5.3.4 message too large
	// 550 5.6.0 bare CR or LF in the message
	// QUIT
}

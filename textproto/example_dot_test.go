package textproto_test

import (
	"bufio"
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

package dot_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wirespeed/wirespeed/dot"
	"golang.org/x/text/transform"
)

func ExampleDecoder() {
	// An SMTP DATA body as it arrives, followed by the next command.
	wire := []byte("Subject: hi\r\n\r\n..leading dot\r\n.\r\nQUIT\r\n")
	var d dot.Decoder // Compat: exactly net/textproto
	dst := make([]byte, 64)
	nDst, nSrc, err := d.Transform(dst, wire, false)
	fmt.Printf("%q\n", dst[:nDst])
	fmt.Println(err == io.EOF, string(wire[nSrc:]))
	// Output:
	// "Subject: hi\n\n.leading dot\n"
	// true QUIT
}

func ExampleDecoder_strict() {
	// "\n.\n" ends the data for lenient servers: the classic smuggling
	// sequence. Strict mode refuses it and stays in step with the client.
	wire := []byte("hello\n.\nMAIL FROM:<x>\r\n.\r\nQUIT\r\n")
	d := dot.Decoder{Mode: dot.Strict}
	dst := make([]byte, 64)
	_, nSrc, err := d.Transform(dst, wire, false)
	var se *dot.SyntaxError
	fmt.Println(errors.Is(err, dot.ErrBareLF), errors.As(err, &se) && se.Offset == 5)
	fmt.Printf("%q\n", wire[nSrc:])
	// Output:
	// true true
	// "QUIT\r\n"
}

func ExampleDecoder_maxSize() {
	wire := []byte("a very long message\r\n.\r\nQUIT\r\n")
	d := dot.Decoder{Mode: dot.Raw, MaxSize: 6}
	dst := make([]byte, 64)
	nDst, nSrc, err := d.Transform(dst, wire, false)
	fmt.Printf("%q %v %q\n", dst[:nDst], err, wire[nSrc:])
	// Output:
	// "a very" dot: data too large "QUIT\r\n"
}

func ExampleEncoder() {
	// An Encoder is a transform.Transformer, so it composes with
	// golang.org/x/text/transform's readers and writers.
	r := transform.NewReader(strings.NewReader("hello\n.world\n"), &dot.Encoder{})
	out, _ := io.ReadAll(r)
	fmt.Printf("%q\n", out)
	// Output:
	// "hello\r\n..world\r\n.\r\n"
}

func ExampleEncoder_strict() {
	e := dot.Encoder{Mode: dot.Strict}
	dst := make([]byte, 64)
	n, _, err := e.Transform(dst, []byte("ok\r\nbare\nLF\r\n"), true)
	fmt.Printf("%q %v\n", dst[:n], err)
	// Output:
	// "ok\r\nbare" dot: bare LF at offset 8
}

package dot_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wirespeed/wirespeed/dot"
	"golang.org/x/text/transform"
)

// transform.NewReader decodes a block, but it reads its source ahead: the
// command after the block is gone with it.
func ExampleDecoder_transformReader() {
	conn := strings.NewReader("hello\r\n.\r\nQUIT\r\n")
	body, err := io.ReadAll(transform.NewReader(conn, &dot.Decoder{}))
	fmt.Printf("%q %v, %d bytes left for the next command\n", body, err, conn.Len())
	// Output:
	// "hello\n" <nil>, 0 bytes left for the next command
}

// Decoding from a bufio.Reader's buffer with Peek and Discard consumes
// exactly the block and leaves the next command to be read.
func ExampleDecoder_Transform() {
	br := bufio.NewReader(strings.NewReader("hello\r\n..dot\r\n.\r\nQUIT\r\n"))
	var d dot.Decoder
	var body []byte
	dst := make([]byte, 4) // tiny, to show that Transform resumes anywhere
	for {
		src, _ := br.Peek(br.Buffered())
		if len(src) == 0 {
			if _, err := br.Peek(1); err != nil {
				fmt.Println(err)
				return
			}
			continue
		}
		nDst, nSrc, err := d.Transform(dst, src, false)
		br.Discard(nSrc)
		body = append(body, dst[:nDst]...)
		if err == io.EOF {
			break
		}
		if err != nil && err != dot.ErrShortDst {
			fmt.Println(err)
			return
		}
	}
	next, _ := br.ReadString('\n')
	fmt.Printf("%q %q\n", body, next)
	// Output:
	// "hello\n.dot\n" "QUIT\r\n"
}

func ExampleDecoder_Reset() {
	wire := []byte("one\r\n.\r\ntwo\r\n.\r\n")
	var d dot.Decoder
	dst := make([]byte, 16)
	for len(wire) > 0 {
		d.Reset() // a new block
		nDst, nSrc, _ := d.Transform(dst, wire, true)
		fmt.Printf("%q\n", dst[:nDst])
		wire = wire[nSrc:]
	}
	// Output:
	// "one\n"
	// "two\n"
}

// Err reports a rejected block before its end, so a server can stop
// keeping the data while it reads on to the end marker.
func ExampleDecoder_Err() {
	d := dot.Decoder{MaxSize: 4}
	dst := make([]byte, 16)
	_, _, err := d.Transform(dst, []byte("too long\r\n"), false)
	fmt.Println(err, d.Err(), d.Done())
	_, _, err = d.Transform(dst, []byte(".\r\n"), false)
	fmt.Println(err, d.Done())
	// Output:
	// <nil> dot: data too large false
	// dot: data too large true
}

func ExampleDecoder_Done() {
	var d dot.Decoder
	dst := make([]byte, 16)
	d.Transform(dst, []byte("a\r\n"), false)
	fmt.Println(d.Done())
	d.Transform(dst, []byte(".\r\n"), false)
	fmt.Println(d.Done())
	// Output:
	// false
	// true
}

func ExampleEncoder_Reset() {
	var e dot.Encoder
	dst := make([]byte, 32)
	for _, msg := range []string{"one", ".two\n"} {
		e.Reset() // a new block
		n, _, _ := e.Transform(dst, []byte(msg), true)
		fmt.Printf("%q\n", dst[:n])
	}
	// Output:
	// "one\r\n.\r\n"
	// "..two\r\n.\r\n"
}

func ExampleMode_String() {
	fmt.Println(dot.Compat, dot.Strict, dot.Raw)
	// Output:
	// compat strict raw
}

func ExampleSyntaxError() {
	d := dot.Decoder{Mode: dot.Strict}
	dst := make([]byte, 32)
	_, _, err := d.Transform(dst, []byte("a\rb\r\n.\r\n"), false)
	var se *dot.SyntaxError
	if errors.As(err, &se) {
		fmt.Println(se.Offset, errors.Is(err, dot.ErrBareCR))
	}
	// Output:
	// 1 true
}

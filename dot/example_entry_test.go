package dot_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"

	"github.com/wirespeed/wirespeed/dot"
)

// encodeParts dot-stuffs a message that arrives in parts through a
// fixed send buffer, as an event loop would: each time the buffer is full
// (ErrShortDst) it goes to out, and the Encoder resumes where it stopped.
// It returns the Encoder's error: a *dot.SyntaxError in Strict mode for
// a bare CR or LF.
func encodeParts(e *dot.Encoder, out *bytes.Buffer, parts ...string) error {
	buf := make([]byte, 16) // a send buffer; any size of at least 2 works
	for i, p := range parts {
		src, last := []byte(p), i == len(parts)-1
		for {
			nDst, nSrc, err := e.Transform(buf, src, last)
			out.Write(buf[:nDst])
			src = src[nSrc:]
			if err == nil {
				break // src consumed; with last, the end marker written
			}
			if !errors.Is(err, dot.ErrShortDst) {
				return err
			}
		}
	}
	return nil
}

// Encoding a message for SMTP DATA in Strict mode: lines that begin with
// "." get another, the end marker follows, and a bare LF (which a
// receiver might take for a line end) is refused instead of sent.
func ExampleEncoder_Transform() {
	var out bytes.Buffer
	e := dot.Encoder{Mode: dot.Strict}
	if err := encodeParts(&e, &out, "Subject: hi\r\n\r\n.", "leading dot\r\n", "last line"); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", out.String())

	out.Reset()
	e.Reset() // the same Encoder, for the next message
	err := encodeParts(&e, &out, "bare\nLF\r\n")
	var se *dot.SyntaxError
	fmt.Println(errors.As(err, &se), err)
	fmt.Printf("%q sent before it\n", out.String())
	// Output:
	// "Subject: hi\r\n\r\n..leading dot\r\nlast line\r\n.\r\n"
	// true dot: bare LF at offset 4
	// "bare" sent before it
}

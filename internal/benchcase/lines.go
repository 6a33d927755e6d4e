package benchcase

import (
	"bufio"
	"bytes"
	"io"
	stdtp "net/textproto"

	"github.com/wirespeed/wirespeed/textproto"
)

// HeaderSize is the size of the header corpus: a large mail header.
const HeaderSize = 4 << 10

// ReadLines reads data line by line with ReadLine until io.EOF, each op,
// through a Reader reused across ops whose default-size bufio.Reader is
// reset onto data.
func ReadLines(b B, impl string, data []byte) {
	br := bufio.NewReader(nil)
	var readLine func() (string, error)
	switch impl {
	case "stdlib":
		readLine = stdtp.NewReader(br).ReadLine
	case "wirespeed":
		readLine = textproto.NewReader(br).ReadLine
	default:
		panic("unknown impl " + impl)
	}
	src := bytes.NewReader(data)
	for b.Loop() {
		src.Reset(data)
		br.Reset(src)
		for {
			if _, err := readLine(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

// ReadHeader reads the header block data with ReadMIMEHeader, each op, in
// the same way.
func ReadHeader(b B, impl string, data []byte) {
	br := bufio.NewReader(nil)
	var readHeader func() error
	switch impl {
	case "stdlib":
		r := stdtp.NewReader(br)
		readHeader = func() error { _, err := r.ReadMIMEHeader(); return err }
	case "wirespeed":
		r := textproto.NewReader(br)
		readHeader = func() error { _, err := r.ReadMIMEHeader(); return err }
	default:
		panic("unknown impl " + impl)
	}
	src := bytes.NewReader(data)
	for b.Loop() {
		src.Reset(data)
		br.Reset(src)
		if err := readHeader(); err != nil {
			b.Fatal(err)
		}
	}
}

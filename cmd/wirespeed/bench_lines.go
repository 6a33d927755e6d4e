package main

import (
	"bufio"
	"bytes"
	"io"
	stdtp "net/textproto"
	"sync"
	"testing"

	"github.com/wirespeed/wirespeed/internal/corpus"
	"github.com/wirespeed/wirespeed/textproto"
)

// The line and header rows of `wirespeed bench` (suite "textproto"): the
// same bodies as textproto's BenchmarkReadLine and BenchmarkReadMIMEHeader.
// Each op reads a whole corpus through a Reader reused across ops, its
// default-size bufio.Reader reset onto the corpus.

// lineHeaderSize is the size of the header corpus: a large mail header.
const lineHeaderSize = 4 << 10

func init() {
	inputs := map[string]func() []byte{
		"mail":     sync.OnceValue(func() []byte { return corpus.Mail(corpus.Size) }),
		"longline": sync.OnceValue(func() []byte { return corpus.LongLine(corpus.Size) }),
		"tiny":     sync.OnceValue(func() []byte { return corpus.Tiny(corpus.Size) }),
		"header":   sync.OnceValue(func() []byte { return corpus.Header(lineHeaderSize) }),
	}
	for _, name := range []string{"mail", "longline", "tiny"} {
		data := inputs[name]
		size := func() int64 { return int64(len(data())) }
		registerBench(
			benchCase{suite: "textproto", group: "ReadLine/corpus=" + name, impl: "stdlib", size: size,
				fn: func(b *testing.B) { benchReadLines(b, data(), stdReadLine) }},
			benchCase{suite: "textproto", group: "ReadLine/corpus=" + name, impl: "wirespeed", size: size,
				fn: func(b *testing.B) { benchReadLines(b, data(), oursReadLine) }},
		)
	}
	header := inputs["header"]
	size := func() int64 { return int64(len(header())) }
	registerBench(
		benchCase{suite: "textproto", group: "ReadMIMEHeader/corpus=header", impl: "stdlib", size: size,
			fn: func(b *testing.B) { benchReadHeader(b, header(), stdReadHeader) }},
		benchCase{suite: "textproto", group: "ReadMIMEHeader/corpus=header", impl: "wirespeed", size: size,
			fn: func(b *testing.B) { benchReadHeader(b, header(), oursReadHeader) }},
	)
}

// The implementations, each returning a function that reads from br.
func stdReadLine(br *bufio.Reader) func() (string, error) { return stdtp.NewReader(br).ReadLine }

func oursReadLine(br *bufio.Reader) func() (string, error) { return textproto.NewReader(br).ReadLine }

func stdReadHeader(br *bufio.Reader) func() error {
	r := stdtp.NewReader(br)
	return func() error { _, err := r.ReadMIMEHeader(); return err }
}

func oursReadHeader(br *bufio.Reader) func() error {
	r := textproto.NewReader(br)
	return func() error { _, err := r.ReadMIMEHeader(); return err }
}

// benchReadLines reads data line by line until io.EOF, each op.
func benchReadLines(b *testing.B, data []byte, impl func(*bufio.Reader) func() (string, error)) {
	br := bufio.NewReader(nil)
	readLine := impl(br)
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

// benchReadHeader reads the header data, each op.
func benchReadHeader(b *testing.B, data []byte, impl func(*bufio.Reader) func() error) {
	br := bufio.NewReader(nil)
	readHeader := impl(br)
	src := bytes.NewReader(data)
	for b.Loop() {
		src.Reset(data)
		br.Reset(src)
		if err := readHeader(); err != nil {
			b.Fatal(err)
		}
	}
}

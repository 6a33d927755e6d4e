package main

import (
	"sync"
	"testing"

	"github.com/wirespeed/wirespeed/internal/benchcase"
	"github.com/wirespeed/wirespeed/internal/corpus"
)

// The line and header rows of `wirespeed bench` (suite "textproto"): the
// same bodies as textproto's BenchmarkReadLine and BenchmarkReadMIMEHeader.
func init() {
	inputs := map[string]func() []byte{
		"mail":     sync.OnceValue(func() []byte { return corpus.Mail(corpus.Size) }),
		"longline": sync.OnceValue(func() []byte { return corpus.LongLine(corpus.Size) }),
		"tiny":     sync.OnceValue(func() []byte { return corpus.Tiny(corpus.Size) }),
	}
	for _, name := range []string{"mail", "longline", "tiny"} {
		data := inputs[name]
		size := func() int64 { return int64(len(data())) }
		for _, impl := range []string{"stdlib", "wirespeed"} {
			registerBench(benchCase{suite: "textproto", group: "ReadLine/corpus=" + name, impl: impl, size: size,
				fn: func(b *testing.B) { benchcase.ReadLines(b, impl, data()) }})
		}
	}
	header := sync.OnceValue(func() []byte { return corpus.Header(benchcase.HeaderSize) })
	size := func() int64 { return int64(len(header())) }
	for _, impl := range []string{"stdlib", "wirespeed"} {
		registerBench(benchCase{suite: "textproto", group: "ReadMIMEHeader/corpus=header", impl: impl, size: size,
			fn: func(b *testing.B) { benchcase.ReadHeader(b, impl, header()) }})
	}
}

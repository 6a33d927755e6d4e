package textproto_test

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/textproto"
)

// BenchmarkChunks reads each corpus as one BDAT chunk, beside a dot block
// of the same text read with the same line rules (impl=dot: Strict, or
// Strict with BareNormalize, and MaxLineBytes 998). Compare with
//
//	go test -run '^$' -bench Chunks -count 6 ./textproto | benchstat -col /impl -
func BenchmarkChunks(b *testing.B) {
	for _, c := range corpora() {
		data := c.Encoded[:len(c.Encoded)-len(".\r\n")] // CRLF text, as BDAT sends it
		wire := append([]byte("BDAT "+strconv.Itoa(len(data))+" LAST\r\n"), data...)
		// The floor: a plain copy of the same bytes into a buffer of their
		// size, as the DotReader benchmarks' copy row.
		b.Run("corpus="+c.Name+"/impl=copy", func(b *testing.B) {
			buf := make([]byte, len(data))
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, data)
			}
		})
		// BINARYMIME: no line rules, only the chunk's framing and limits.
		b.Run("corpus="+c.Name+"/bare=binary/impl=chunks", func(b *testing.B) {
			src := bytes.NewReader(wire)
			br := bufio.NewReader(src)
			r := textproto.NewReader(br)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				src.Reset(wire)
				br.Reset(src)
				r.ReadLine()
				c := r.Chunks(textproto.ChunkOptions{Binary: true})
				if _, err := c.Next(int64(len(data)), true).WriteTo(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, rules := range []struct {
			name string
			bare dot.BarePolicy
		}{{"reject", dot.BareReject}, {"normalize", dot.BareNormalize}} {
			b.Run("corpus="+c.Name+"/bare="+rules.name+"/impl=dot", func(b *testing.B) {
				src := bytes.NewReader(c.Encoded)
				br := bufio.NewReader(src)
				r := textproto.NewReader(br)
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					src.Reset(c.Encoded)
					br.Reset(src)
					d := r.DotReaderWith(textproto.DotOptions{Mode: dot.Strict, Bare: rules.bare, MaxLineBytes: 998})
					if _, err := d.WriteTo(io.Discard); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("corpus="+c.Name+"/bare="+rules.name+"/impl=chunks", func(b *testing.B) {
				src := bytes.NewReader(wire)
				br := bufio.NewReader(src)
				r := textproto.NewReader(br)
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					src.Reset(wire)
					br.Reset(src)
					r.ReadLine()
					c := r.Chunks(textproto.ChunkOptions{Bare: rules.bare, MaxLineBytes: 998})
					if _, err := c.Next(int64(len(data)), true).WriteTo(io.Discard); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

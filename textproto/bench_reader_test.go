package textproto_test

import (
	"bufio"
	"bytes"
	"io"
	stdtp "net/textproto"
	"testing"

	"github.com/wirespeed/wirespeed/internal/corpus"
	"github.com/wirespeed/wirespeed/textproto"
)

// Compare the implementations with
//
//	go test -run '^$' -bench 'ReadLine|ReadMIMEHeader' -count 6 ./textproto | benchstat -col /impl -
//
// Each op reads a whole corpus through a Reader that is reused across ops,
// its bufio.Reader (default size) reset onto the corpus, the same way for
// both implementations.
//
// Besides wall time, each benchmark reports cpu-ns/op: the CPU time the
// process used (GC included), which a busy shared machine disturbs much
// less than wall time.

// headerSize is the size of the header corpus: a large mail header.
const headerSize = 4 << 10

// lineReader is the part of both Readers the ReadLine benchmark uses.
type lineReader interface {
	ReadLine() (string, error)
}

func benchReadLine(b *testing.B, data []byte, newReader func(*bufio.Reader) lineReader) {
	br := bufio.NewReader(nil)
	r := newReader(br)
	src := bytes.NewReader(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		src.Reset(data)
		br.Reset(src)
		for {
			if _, err := r.ReadLine(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

// reportCPU starts measuring CPU time; the function it returns reports it
// per op.
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() {
		if used := processCPU() - start; used > 0 && b.N > 0 {
			b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

func BenchmarkReadLine(b *testing.B) {
	corpora := []struct {
		name string
		data []byte
	}{
		{"mail", corpus.Mail(corpus.Size)},
		{"longline", corpus.LongLine(corpus.Size)},
		{"tiny", corpus.Tiny(corpus.Size)},
	}
	for _, c := range corpora {
		b.Run("corpus="+c.name+"/impl=stdlib", func(b *testing.B) {
			benchReadLine(b, c.data, func(br *bufio.Reader) lineReader { return stdtp.NewReader(br) })
		})
		b.Run("corpus="+c.name+"/impl=wirespeed", func(b *testing.B) {
			benchReadLine(b, c.data, func(br *bufio.Reader) lineReader { return textproto.NewReader(br) })
		})
	}
}

func BenchmarkReadMIMEHeader(b *testing.B) {
	data := corpus.Header(headerSize)
	src := bytes.NewReader(data)
	b.Run("corpus=header/impl=stdlib", func(b *testing.B) {
		br := bufio.NewReader(nil)
		r := stdtp.NewReader(br)
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			src.Reset(data)
			br.Reset(src)
			if _, err := r.ReadMIMEHeader(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("corpus=header/impl=wirespeed", func(b *testing.B) {
		br := bufio.NewReader(nil)
		r := textproto.NewReader(br)
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			src.Reset(data)
			br.Reset(src)
			if _, err := r.ReadMIMEHeader(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

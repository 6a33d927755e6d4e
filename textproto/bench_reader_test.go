package textproto_test

import (
	"testing"

	"github.com/wirespeed/wirespeed/internal/benchcase"
	"github.com/wirespeed/wirespeed/internal/corpus"
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
		for _, impl := range []string{"stdlib", "wirespeed"} {
			b.Run("corpus="+c.name+"/impl="+impl, func(b *testing.B) {
				b.SetBytes(int64(len(c.data)))
				b.ReportAllocs()
				defer reportCPU(b)()
				benchcase.ReadLines(b, impl, c.data)
			})
		}
	}
}

func BenchmarkReadMIMEHeader(b *testing.B) {
	data := corpus.Header(benchcase.HeaderSize)
	for _, impl := range []string{"stdlib", "wirespeed"} {
		b.Run("corpus=header/impl="+impl, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			defer reportCPU(b)()
			benchcase.ReadHeader(b, impl, data)
		})
	}
}

package textproto_test

import (
	"sync"
	"testing"

	"github.com/wirespeed/wirespeed/internal/benchcase"
)

// The benchmarks below share their bodies with `wirespeed bench`. Compare
// implementations with
//
//	go test -run '^$' -bench 'Seed|DotReader|DotWriter' -count 6 ./textproto | benchstat -col /impl -

func BenchmarkSeed(b *testing.B) {
	seed := []struct {
		name string
		fn   func(*testing.B)
	}{
		{"IONull", benchcase.IONull},
		{"BufioWrite", benchcase.BufioWrite},
		{"BufioRead", benchcase.BufioRead},
		{"BufioWriteByte", benchcase.BufioWriteByte},
		{"BufioReadByte", benchcase.BufioReadByte},
	}
	for _, s := range seed {
		b.Run("op="+s.name+"/impl=bufio", func(b *testing.B) {
			b.SetBytes(benchcase.SeedSize)
			b.ReportAllocs()
			s.fn(b)
		})
	}
	for _, impl := range []string{"stdlib", "wirespeed"} {
		b.Run("op=DotWriter/impl="+impl, func(b *testing.B) {
			b.SetBytes(benchcase.SeedSize)
			b.ReportAllocs()
			benchcase.SeedDotWriter(impl)(b)
		})
	}
	for _, impl := range []string{"stdlib", "wirespeed"} {
		b.Run("op=DotReader/impl="+impl, func(b *testing.B) {
			b.SetBytes(benchcase.SeedSize)
			b.ReportAllocs()
			benchcase.SeedDotReader(impl)(b)
		})
	}
}

var corpora = sync.OnceValue(benchcase.Corpora)

func BenchmarkDotReader(b *testing.B) {
	for _, c := range corpora() {
		b.Run("corpus="+c.Name+"/impl=copy", func(b *testing.B) {
			b.SetBytes(int64(len(c.Encoded)))
			b.ReportAllocs()
			benchcase.CorpusCopy(c)(b)
		})
		for _, impl := range []string{"stdlib", "wirespeed"} {
			b.Run("corpus="+c.Name+"/impl="+impl, func(b *testing.B) {
				b.SetBytes(int64(len(c.Encoded)))
				b.ReportAllocs()
				benchcase.CorpusDotReader(c, impl)(b)
			})
		}
	}
}

func BenchmarkDotWriter(b *testing.B) {
	for _, c := range corpora() {
		for _, impl := range []string{"stdlib", "wirespeed"} {
			b.Run("corpus="+c.Name+"/impl="+impl, func(b *testing.B) {
				b.SetBytes(int64(len(c.Plain)))
				b.ReportAllocs()
				benchcase.CorpusDotWriter(c, impl)(b)
			})
		}
	}
}

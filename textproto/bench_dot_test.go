package textproto_test

import (
	"bufio"
	"bytes"
	"io"
	"sync"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/benchcase"
	"github.com/wirespeed/wirespeed/textproto"
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

// BenchmarkDotReaderLimits measures what MaxLineBytes costs a server's
// DotReader (every mode, io.Copy to io.Discard) on the corpora
// whose lines are short. Compare with
//
//	go test -run '^$' -bench DotReaderLimits -count 6 ./textproto | benchstat -col /cfg -
func BenchmarkDotReaderLimits(b *testing.B) {
	for _, c := range corpora() {
		if c.Name != "mail" && c.Name != "base64" {
			continue
		}
		for _, mode := range []dot.Mode{dot.Compat, dot.Strict, dot.Raw} {
			for _, cfg := range []struct {
				name    string
				maxLine int
			}{{"none", 0}, {"maxline=998", 998}} {
				b.Run("corpus="+c.Name+"/mode="+mode.String()+"/cfg="+cfg.name, func(b *testing.B) {
					src := bytes.NewReader(c.Encoded)
					br := bufio.NewReader(src)
					r := textproto.NewReader(br)
					b.SetBytes(int64(len(c.Encoded)))
					b.ReportAllocs()
					for b.Loop() {
						src.Reset(c.Encoded)
						br.Reset(src)
						d := r.DotReaderWith(textproto.DotOptions{Mode: mode, MaxLineBytes: cfg.maxLine})
						if _, err := io.Copy(io.Discard, d); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

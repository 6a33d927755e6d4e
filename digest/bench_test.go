package digest

import (
	"bufio"
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"
)

// The classic comparison of ways to MD5 a file, on a generated file in
// the page cache, plus this package. Run with
//
//	go test ./digest -run '^$' -bench 'MD5File|ManyFiles' -count 6 | benchstat -col /impl -
const benchFileSize = 16 << 20

func benchFile(b *testing.B, size int) string {
	b.Helper()
	paths, _ := writeFiles(b, []int{size})
	return paths[0]
}

func BenchmarkMD5File(b *testing.B) {
	path := benchFile(b, benchFileSize)
	impls := []struct {
		name string
		fn   func(path string) ([]byte, error)
	}{
		{"ReadFile+Sum", func(path string) ([]byte, error) {
			data, err := os.ReadFile(path)
			s := md5.Sum(data)
			return s[:], err
		}},
		{"io.Copy", func(path string) ([]byte, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			h := md5.New()
			_, err = io.Copy(h, f)
			return h.Sum(nil), err
		}},
		{"bufio+io.Copy", func(path string) ([]byte, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			h := md5.New()
			_, err = io.Copy(h, bufio.NewReader(f))
			return h.Sum(nil), err
		}},
		{"CopyBuffer4K", func(path string) ([]byte, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			h := md5.New()
			_, err = io.CopyBuffer(h, f, make([]byte, 4096))
			return h.Sum(nil), err
		}},
		{"digest", func(path string) ([]byte, error) {
			_, err := File(MD5, path)
			return nil, err
		}},
	}
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.SetBytes(benchFileSize)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := impl.fn(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkManyFiles hashes 64 files of 1 MiB: one at a time with
// io.CopyBuffer, then through Files with crypto/md5 workers, then with
// multi-buffer SIMD (where the CPU has it).
func BenchmarkManyFiles(b *testing.B) {
	const n, size = 64, 1 << 20
	paths, _ := writeFiles(b, slices.Repeat([]int{size}, n))
	b.Run("files=64x1MiB/impl=sequential-CopyBuffer", func(b *testing.B) {
		b.SetBytes(n * size)
		b.ReportAllocs()
		buf := make([]byte, bufferSize)
		for b.Loop() {
			for _, p := range paths {
				f, err := os.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				h := md5.New()
				io.CopyBuffer(h, f, buf)
				h.Sum(nil)
				f.Close()
			}
		}
	})
	for _, c := range []struct {
		name string
		opts *Options
	}{
		{"digest-crypto-md5", &Options{NoMultiBuffer: true}},
		{"digest", nil},
	} {
		b.Run("files=64x1MiB/impl="+c.name, func(b *testing.B) {
			b.SetBytes(n * size)
			b.ReportAllocs()
			for b.Loop() {
				res, err := Files(context.Background(), MD5, paths, c.opts)
				if err != nil || res[n-1].Err != nil {
					b.Fatal(err, res[n-1].Err)
				}
			}
			b.ReportMetric(float64(testing.AllocsPerRun(1, func() { Files(context.Background(), MD5, paths, c.opts) }))/n, "allocs/file")
		})
	}
}

// BenchmarkReadSize is the measurement behind bufferSize: hashing a
// 16 MiB file from the page cache with each read size, and the read size
// of the multi-buffer path over 64 files of 1 MiB.
func BenchmarkReadSize(b *testing.B) {
	path := benchFile(b, benchFileSize)
	for _, a := range []Algorithm{MD5, SHA256} {
		for _, kib := range []int{4, 16, 32, 64, 128, 256, 1024, 4096} {
			b.Run(fmt.Sprintf("alg=%s/size=%dKiB", a, kib), func(b *testing.B) {
				buf := make([]byte, kib<<10)
				h := a.New()
				var s Sum
				b.SetBytes(benchFileSize)
				b.ReportAllocs()
				for b.Loop() {
					h.Reset()
					if _, err := hashFile(a, h, path, buf, nil, nil, nil, &s); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	if MultiBuffer() == "" {
		return
	}
	const n, size = 64, 1 << 20
	paths, _ := writeFiles(b, slices.Repeat([]int{size}, n))
	for _, kib := range []int{32, 64, 128} {
		b.Run(fmt.Sprintf("alg=md5-multibuffer/size=%dKiB", kib), func(b *testing.B) {
			b.SetBytes(n * size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := FilesTuned(context.Background(), MD5, paths, nil, 0, kib<<10); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

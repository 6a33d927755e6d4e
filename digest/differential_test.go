package digest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

// reviewSizes: every length 0..300 and lengths around multiples of 64
// and 128 up to a few KiB.
func reviewSizes() []int {
	var s []int
	for n := 0; n <= 300; n++ {
		s = append(s, n)
	}
	for m := 320; m <= 4096; m += 64 {
		s = append(s, m-1, m, m+1)
	}
	return s
}

func TestDifferentialSmallLengths(t *testing.T) {
	sizes := reviewSizes()
	paths, data := writeFiles(t, sizes)
	for _, a := range Algorithms() {
		for i, p := range paths {
			w := want(a, data[i])
			s, err := File(a, p)
			if err != nil || !bytes.Equal(s.Bytes(), w) {
				t.Fatalf("File %s %d: %x %v", a, sizes[i], s.Bytes(), err)
			}
			r, err := Reader(a, bytes.NewReader(data[i]))
			if err != nil || !bytes.Equal(r.Bytes(), w) {
				t.Fatalf("Reader %s %d: %x %v", a, sizes[i], r.Bytes(), err)
			}
			if !s.MatchHex([]byte(s.String())) {
				t.Fatal("MatchHex")
			}
			ps, err := ParseSum(a, s.String())
			if err != nil || !ps.Equal(s) {
				t.Fatal("ParseSum")
			}
		}
		res, err := FilesTuned(context.Background(), a, paths, &Options{Workers: 2}, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Err != nil || r.Index != i || r.Size != int64(sizes[i]) || !bytes.Equal(r.Sum.Bytes(), want(a, data[i])) {
				t.Fatalf("Files %s %d: %+v", a, sizes[i], r)
			}
		}
	}
}

// The multi-buffer path: files over one buffer, of lengths around block
// boundaries, mixed with small and empty ones, more files than lanes, and
// odd read sizes so that md5-simd sees unaligned writes.
func TestDifferentialMultiLengths(t *testing.T) {
	var sizes []int
	for k := 0; k <= 130; k++ {
		sizes = append(sizes, bufferSize+k)
	}
	for _, k := range []int{191, 192, 193, 255, 256, 257, 4095, 4096, 4097, 32<<10 - 1, 32 << 10, 32<<10 + 1, 100000} {
		sizes = append(sizes, bufferSize+k, 2*bufferSize+k)
	}
	sizes = append(sizes, 0, 1, 63, 64, 65, 0, bufferSize-1, 5*bufferSize+17)
	paths, data := writeFiles(t, sizes)
	for _, rs := range []int{0, 1 << 10, 63, 65, 100, 4097, 32<<10 + 1} {
		for _, w := range []int{1, 2, 5} {
			res, err := FilesTuned(context.Background(), MD5, paths, &Options{Workers: w}, 1, rs)
			if err != nil {
				t.Fatal(err)
			}
			multi := 0
			for i, r := range res {
				if r.MultiBuffer {
					multi++
				}
				if r.Err != nil || r.Index != i || r.Size != int64(sizes[i]) || !bytes.Equal(r.Sum.Bytes(), want(MD5, data[i])) {
					t.Fatalf("rs=%d w=%d size %d: %+v", rs, w, sizes[i], r)
				}
			}
			if MultiBuffer() != "" && multi == 0 {
				t.Errorf("rs=%d: multi-buffer never used", rs)
			}
		}
	}
}

// Concurrent Files/Each/File on shared pools and SIMD servers.
func TestDifferentialConcurrent(t *testing.T) {
	sizes := []int{0, 1, 100, bufferSize, bufferSize + 1, 3*bufferSize + 5, 200000}
	sizes = slices.Concat(sizes, sizes, sizes)
	paths, data := writeFiles(t, sizes)
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for _, a := range []Algorithm{MD5, Algorithms()[g%6]} {
				res, err := FilesTuned(context.Background(), a, paths, &Options{Workers: 1 + g%3}, 1, 0)
				if err != nil {
					t.Error(err)
					return
				}
				for i, r := range res {
					if r.Err != nil || !bytes.Equal(r.Sum.Bytes(), want(a, data[i])) {
						t.Errorf("%s %d: %+v", a, sizes[i], r)
					}
				}
				for i, p := range paths {
					s, err := File(a, p)
					if err != nil || !bytes.Equal(s.Bytes(), want(a, data[i])) {
						t.Errorf("File %s: %v", a, err)
					}
				}
			}
		})
	}
	wg.Wait()
}

// midReader yields data, then err together with the last bytes.
type midReader struct {
	data []byte
	err  error
}

func (r *midReader) Read(p []byte) (int, error) {
	n := copy(p, r.data)
	r.data = r.data[n:]
	if len(r.data) == 0 {
		return n, r.err
	}
	return n, nil
}

func TestDifferentialReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	data := randomBytes(3, 300000)
	s, err := Reader(SHA256, &midReader{data: data, err: boom})
	if err != boom || s.Len() != 0 || s.Algorithm() != 0 {
		t.Errorf("mid-stream error: %v %v", s, err)
	}
	// Data together with io.EOF is hashed.
	s, err = Reader(SHA256, &midReader{data: data, err: io.EOF})
	if err != nil || !bytes.Equal(s.Bytes(), want(SHA256, data)) {
		t.Errorf("data with EOF: %v %v", s, err)
	}
	// A reused pooled hasher is reset after a failed Reader.
	s, err = Reader(SHA256, bytes.NewReader(data[:10]))
	if err != nil || !bytes.Equal(s.Bytes(), want(SHA256, data[:10])) {
		t.Errorf("after error: %v %v", s, err)
	}
}

// Cancellation: no goroutine left behind, in-flight files report ctx's
// error with no digest, unreached ones too; DeadlineExceeded is kept.
func TestDifferentialCancelNoLeak(t *testing.T) {
	paths, _ := writeFiles(t, slices.Repeat([]int{2*bufferSize + 3}, 80))
	warmServers()
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	before := runtime.NumGoroutine()
	for _, a := range []Algorithm{MD5, SHA512} {
		for _, w := range []int{1, 3} {
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			res, err := FilesTuned(ctx, a, paths, &Options{Workers: w}, 1, 0)
			cancel()
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: %v", a, err)
			}
			for i, r := range res {
				if r.Index != i || r.Path != paths[i] {
					t.Fatalf("result %d: %+v", i, r)
				}
				if r.Err != nil {
					var pe *fs.PathError
					if !errors.Is(r.Err, context.DeadlineExceeded) || !errors.As(r.Err, &pe) || r.Sum.Len() != 0 {
						t.Errorf("%s %d: %+v", a, i, r)
					}
				}
			}
			// fn error stops.
			stop := errors.New("stop")
			n := 0
			err = EachTuned(context.Background(), a, slices.Values(paths), &Options{Workers: w}, func(r Result) error {
				n++
				if n == 2 {
					return stop
				}
				return nil
			}, 1, 0)
			if err != stop || n != 2 {
				t.Errorf("fn stop: %v %d", err, n)
			}
		}
	}
	// Lanes left mid-file by the cancellations hash the next batch right.
	sizes := []int{bufferSize + 1, 3*bufferSize + 5, 0, 77, 2 * bufferSize}
	sizes = slices.Concat(sizes, sizes, sizes, sizes, sizes, sizes, sizes)
	ps, data := writeFiles(t, sizes)
	res, err := FilesTuned(context.Background(), MD5, ps, &Options{Workers: 2}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil || !bytes.Equal(r.Sum.Bytes(), want(MD5, data[i])) {
			t.Errorf("after cancellations, %d bytes: %+v", sizes[i], r)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines %d -> %d\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

// A file that grows while hashed: the digest is that of the Size bytes
// read, which are a prefix of the final contents.
func TestDifferentialGrowingFile(t *testing.T) {
	base := 3*bufferSize + 11
	sizes := slices.Repeat([]int{base}, 20)
	paths, data := writeFiles(t, sizes)
	extra := randomBytes(99, 64<<10)
	var wg sync.WaitGroup
	stopc := make(chan struct{})
	for i := range paths {
		wg.Go(func() {
			f, err := osOpenAppend(paths[i])
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			for k := 0; k < 50; k++ {
				select {
				case <-stopc:
					return
				default:
				}
				f.Write(extra[:1000+k*7])
			}
		})
	}
	res, err := FilesTuned(context.Background(), MD5, paths, &Options{Workers: 2}, 1, 0)
	close(stopc)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		final, _ := osReadFile(paths[i])
		if r.Err != nil || r.Size < int64(len(data[i])) || r.Size > int64(len(final)) || !bytes.Equal(r.Sum.Bytes(), want(MD5, final[:r.Size])) {
			t.Errorf("%d: %+v (final %d)", i, r, len(final))
		}
	}
}

func osOpenAppend(p string) (*os.File, error) { return os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0) }
func osReadFile(p string) ([]byte, error)     { return os.ReadFile(p) }

// Only io.EOF itself ends the data (the io.Reader contract): an error
// that wraps it is an error, returned as is with a zero Sum, as io.Copy
// into a crypto hash returns it (io.Copy compares err == io.EOF). With
// the last bytes, or alone after them.
func TestDifferentialReaderWrappedEOF(t *testing.T) {
	wrapped := fmt.Errorf("source: %w", io.EOF)
	data := randomBytes(4, 300000)
	for _, r := range []func() io.Reader{
		func() io.Reader { return &midReader{data: data, err: wrapped} },
		func() io.Reader { return io.MultiReader(bytes.NewReader(data), iotest.ErrReader(wrapped)) },
	} {
		_, cerr := io.Copy(sha256.New(), r())
		s, err := Reader(SHA256, r())
		if err != wrapped || cerr != wrapped || s.Len() != 0 || s.Algorithm() != 0 {
			t.Errorf("wrapped io.EOF: Reader = %v, %v; io.Copy into sha256: %v; want %v from both and a zero Sum", s, err, cerr, wrapped)
		}
	}
}

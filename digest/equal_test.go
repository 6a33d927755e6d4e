package digest

import (
	"bytes"
	"context"
	"testing"
	"testing/iotest"
)

// want computes the oracle digest with the standard library directly.
func want(a Algorithm, data []byte) []byte {
	h := a.New()
	h.Write(data)
	return h.Sum(nil)
}

func TestFileAndReaderMatchStdlib(t *testing.T) {
	paths, data := writeFiles(t, edgeSizes)
	for _, a := range Algorithms() {
		for i, p := range paths {
			w := want(a, data[i])
			s, err := File(a, p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(s.Bytes(), w) || s.Algorithm() != a {
				t.Errorf("File(%s, %d bytes) = %x, want %x", a, len(data[i]), s.Bytes(), w)
			}
			// A reader that returns one byte at a time exercises partial reads.
			r := bytes.NewReader(data[i])
			if len(data[i]) < 1<<16 {
				r2, err := Reader(a, iotest.OneByteReader(r))
				if err != nil || !bytes.Equal(r2.Bytes(), w) {
					t.Errorf("Reader(%s, one byte at a time, %d bytes) = %x, %v", a, len(data[i]), r2.Bytes(), err)
				}
			} else {
				r2, err := Reader(a, iotest.HalfReader(r))
				if err != nil || !bytes.Equal(r2.Bytes(), w) {
					t.Errorf("Reader(%s, %d bytes) = %x, %v", a, len(data[i]), r2.Bytes(), err)
				}
			}
		}
	}
}

// TestFilesMatchStdlib runs every batch path (plain workers, and for MD5
// multi-buffer SIMD where available) against the standard library.
func TestFilesMatchStdlib(t *testing.T) {
	paths, data := writeFiles(t, edgeSizes)
	for _, a := range Algorithms() {
		for _, opts := range []*Options{nil, {Workers: 1}, {Workers: 3}, {Workers: 2, NoMultiBuffer: true}} {
			res, err := FilesTuned(context.Background(), a, paths, opts, 1, 0)
			if err != nil {
				t.Fatal(err)
			}
			multi := 0
			for i, r := range res {
				if r.Err != nil || r.Index != i || r.Path != paths[i] || r.Size != int64(len(data[i])) {
					t.Fatalf("%s %+v: result %d = %+v", a, opts, i, r)
				}
				if w := want(a, data[i]); !bytes.Equal(r.Sum.Bytes(), w) {
					t.Errorf("%s %+v: %d bytes: got %x, want %x (multi-buffer %v)", a, opts, len(data[i]), r.Sum.Bytes(), w, r.MultiBuffer)
				}
				if r.MultiBuffer {
					multi++
					if len(data[i]) < bufferSize || a != MD5 || (opts != nil && opts.NoMultiBuffer) {
						t.Errorf("%s %+v: %d-byte file went through multi-buffer MD5", a, opts, len(data[i]))
					}
				}
			}
			if a == MD5 && MultiBuffer() != "" && (opts == nil || !opts.NoMultiBuffer) && multi == 0 {
				t.Errorf("%+v: multi-buffer MD5 (%s) was never used", opts, MultiBuffer())
			}
		}
	}
}

package textproto

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// readChunk reads k to its end, by WriteTo (rs 0) or Reads of rs bytes,
// and returns the error it ended with (nil for io.EOF).
func readChunk(k *Chunk, rs int) error {
	if rs == 0 {
		_, err := k.WriteTo(io.Discard)
		return err
	}
	b := make([]byte, rs)
	for {
		_, err := k.Read(b)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// TestChunkAfterLastReadError: a chunk after the LAST one that a read
// error cuts short (or that an earlier read error ends) fails with an
// error matching ErrChunkAfterLast, then the problems found in the
// message, then the read error (io.ErrUnexpectedEOF for the end of the
// input), in that order, text included; Chunks.Err returns it too. It
// used to match the read error and the problems only.
func TestChunkAfterLastReadError(t *testing.T) {
	type tcase struct {
		name string
		src  func() io.Reader
		opt  ChunkOptions
		run  func(r *Reader, c *Chunks, rs int) error // returns the after-LAST chunk's error
		want []error
	}
	// last reads the LAST chunk "abc", then the chunk after it.
	last := func(r *Reader, c *Chunks, rs int) error {
		readChunk(c.Next(3, true), rs)
		return readChunk(c.Next(5, false), rs)
	}
	cases := []tcase{
		{"end of input", func() io.Reader { return strings.NewReader("abc" + "12") }, ChunkOptions{}, last,
			[]error{ErrChunkAfterLast, io.ErrUnexpectedEOF}},
		{"end of input, too large", func() io.Reader { return strings.NewReader("abc" + "12") }, ChunkOptions{MaxBytes: 2}, last,
			[]error{ErrChunkAfterLast, dot.ErrTooLarge, io.ErrUnexpectedEOF}},
		{"read error", func() io.Reader { return &errAtReader{data: []byte("abc" + "12345"), at: 5} }, ChunkOptions{}, last,
			[]error{ErrChunkAfterLast, errInjected}},
		{"read error, too large and bare LF", func() io.Reader {
			return &errAtReader{data: []byte("a\nc" + "12345"), at: 5, withData: true}
		}, ChunkOptions{MaxBytes: 2}, last,
			[]error{ErrChunkAfterLast, dot.ErrTooLarge, dot.ErrBareLF, errInjected}},
		// The error is owed from the command line read before Next.
		{"read error before Next", func() io.Reader {
			return &errAtReader{data: []byte("abc" + "BDAT 5\r\n12345"), at: 3 + 7, withData: true}
		}, ChunkOptions{}, func(r *Reader, c *Chunks, rs int) error {
			readChunk(c.Next(3, true), rs)
			r.SetLimits(Limits{MaxLineBytes: 4})
			if _, err := r.ReadLine(); !errors.Is(err, ErrLineTooLong) {
				return fmt.Errorf("ReadLine: %v, want a line too long", err)
			}
			return readChunk(c.Next(5, false), rs)
		}, []error{ErrChunkAfterLast, errInjected}},
		// A read error cut the first chunk short; the LAST chunk is read,
		// then one after it.
		{"earlier read error", func() io.Reader { return &errAtReader{data: []byte("ab" + "cd" + "ef"), at: 1} }, ChunkOptions{},
			func(r *Reader, c *Chunks, rs int) error {
				if err := readChunk(c.Next(2, false), rs); err != errInjected {
					return fmt.Errorf("first chunk: %v, want the read error", err)
				}
				readChunk(c.Next(3, true), rs)
				return readChunk(c.Next(2, false), rs)
			}, []error{ErrChunkAfterLast, errInjected}},
	}
	for _, tc := range cases {
		for _, rs := range []int{0, 1, 64} {
			where := fmt.Sprintf("%s, reads of %d", tc.name, rs)
			r := NewReader(bufio.NewReaderSize(tc.src(), 16))
			c := r.Chunks(tc.opt)
			err := tc.run(r, c, rs)
			m, ok := err.(interface{ Unwrap() []error })
			if !ok {
				t.Errorf("%s: %v does not unwrap to several errors", where, err)
				continue
			}
			got := m.Unwrap()
			var texts []string
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("%s: %v does not match %v", where, err, w)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("%s: %v unwraps to %q, want errors matching %q", where, err, got, tc.want)
				continue
			}
			for i, w := range tc.want {
				if !errors.Is(got[i], w) {
					t.Errorf("%s: %v: error %d is %v, want one matching %v", where, err, i, got[i], w)
				}
				texts = append(texts, got[i].Error())
			}
			if want := strings.Join(texts, "; "); err.Error() != want {
				t.Errorf("%s: text %q, want %q", where, err.Error(), want)
			}
			if c.Err() != err {
				t.Errorf("%s: Chunks.Err() = %v, want %v", where, c.Err(), err)
			}
		}
	}
}

// TestChunkAfterLastErr: once a chunk after the LAST one has been read to
// its end, Chunks.Err returns what it ended with, ErrChunkAfterLast, as
// for every chunk; it used to return the LAST chunk's ending (nil for a
// good message). Before that chunk ends, Err is still the LAST one's.
func TestChunkAfterLastErr(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		opt        ChunkOptions
		last       error // what the LAST chunk, "ab\nc", ends with
	}{
		{"good", "ab\r\nc", ChunkOptions{}, nil},
		{"bare LF", "ab\nc", ChunkOptions{Bare: dot.BareReject}, dot.ErrBareLF},
	} {
		for _, rs := range []int{0, 1, 64} {
			where := fmt.Sprintf("%s, reads of %d", tc.name, rs)
			src := tc.data[:4] + "12345" + "6"
			c := NewReader(bufio.NewReaderSize(strings.NewReader(src), 16)).Chunks(tc.opt)
			if err := readChunk(c.Next(4, true), rs); !errors.Is(err, tc.last) || (tc.last == nil) != (err == nil) {
				t.Fatalf("%s: the LAST chunk ended with %v, want %v", where, err, tc.last)
			}
			for i, size := range []int64{5, 1, 0} {
				k := c.Next(size, false)
				if err := c.Err(); !errors.Is(err, tc.last) || (tc.last == nil) != (err == nil) {
					t.Errorf("%s: chunk %d after LAST open: Chunks.Err() = %v, want the LAST chunk's %v", where, i, err, tc.last)
				}
				if err := readChunk(k, rs); err != ErrChunkAfterLast {
					t.Errorf("%s: chunk %d after LAST ended with %v", where, i, err)
				}
				if err := c.Err(); err != ErrChunkAfterLast {
					t.Errorf("%s: chunk %d after LAST read: Chunks.Err() = %v, want %v", where, i, err, ErrChunkAfterLast)
				}
			}
		}
	}
}

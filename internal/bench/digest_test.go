package bench

import (
	"bytes"
	"crypto/md5"
	"io"
	"os"
	"slices"
	"testing"
)

// file stands in for *os.File: Read counts the sizes asked for, and
// WriteTo, which *os.File has since Go 1.22, counts its use and copies the
// way File.WriteTo does for a hash (io.Copy's 32 KiB buffer).
type file struct {
	r       io.Reader
	reads   []int
	writeTo int
}

func (f *file) Read(p []byte) (int, error) {
	f.reads = append(f.reads, len(p))
	return f.r.Read(p)
}

func (f *file) WriteTo(w io.Writer) (int64, error) {
	f.writeTo++
	return io.Copy(w, onlyReader{f})
}

// Each MD5File copy row reads the file the way its name says, and hashes
// every byte: io.Copy in 32 KiB reads through File.WriteTo, bufio+io.Copy
// into bufio's default 4096-byte buffer, CopyBuffer4K into its 4 KiB one.
func TestFileCopiesReadSizes(t *testing.T) {
	if _, ok := any((*os.File)(nil)).(io.WriterTo); !ok {
		t.Error("*os.File has no WriteTo: the MD5File note and onlyReader are out of date")
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 100<<10/16) // 100 KiB
	sum := md5.Sum(data)
	want := map[string]struct {
		readSize int
		writeTo  int
	}{
		"io.Copy":       {32 << 10, 1},
		"bufio+io.Copy": {4096, 0},
		"CopyBuffer4K":  {4096, 0},
	}
	for _, c := range fileCopies() {
		w, ok := want[c.impl]
		if !ok {
			t.Errorf("no expectation for row %s", c.impl)
			continue
		}
		f := &file{r: bytes.NewReader(data)}
		h := md5.New()
		if err := c.copy(h, f); err != nil {
			t.Fatal(err)
		}
		if got := h.Sum(nil); !bytes.Equal(got, sum[:]) {
			t.Errorf("%s: wrong digest", c.impl)
		}
		if f.writeTo != w.writeTo {
			t.Errorf("%s: WriteTo used %d times, want %d", c.impl, f.writeTo, w.writeTo)
		}
		if slices.ContainsFunc(f.reads, func(n int) bool { return n != w.readSize }) {
			t.Errorf("%s: reads of %v bytes, want all %d", c.impl, f.reads, w.readSize)
		}
		// The last read is the one that finds the end.
		if n := len(data)/w.readSize + 2; len(f.reads) > n {
			t.Errorf("%s: %d reads, want at most %d", c.impl, len(f.reads), n)
		}
	}
}

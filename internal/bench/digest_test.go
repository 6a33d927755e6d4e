package bench

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/digest"
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

// The note under MD5ManyFiles says multi-buffer MD5 hashed the wirespeed
// row's files only where it did: digest.Files takes it only with enough
// files per core, so with GOMAXPROCS 16 its 64 files go to crypto/md5, as
// in the wirespeed-crypto-md5 row. The note said "wirespeed adds
// multi-buffer SIMD MD5" whatever the run did. The oracle is digest.Files
// itself on the same files, with the same GOMAXPROCS.
func TestManyFilesNoteSaysWhatRan(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 128 MiB of files")
	}
	t.Setenv("TMPDIR", t.TempDir())
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 16} {
		runtime.GOMAXPROCS(procs)
		out, errs, err := runBench("-benchtime", "1ns", "-run", "MD5ManyFiles", "-json", "digest")
		if err != nil {
			t.Fatalf("GOMAXPROCS %d: %v: %s", procs, err, errs)
		}
		var rep struct {
			Results []struct {
				Impl    string
				Metrics map[string]float64
			}
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		files, err := digestFiles()
		if err != nil {
			t.Fatal(err)
		}
		res, err := digest.Files(context.Background(), digest.MD5, files[1:], nil)
		if err != nil {
			t.Fatal(err)
		}
		multi := 0
		for _, r := range res {
			if r.MultiBuffer {
				multi++
			}
		}
		for _, r := range rep.Results {
			// The JSON's metric, per row of digest.Files.
			got, ok := r.Metrics["multibuffer-files/op"]
			switch r.Impl {
			case "io.Copy":
				if ok {
					t.Errorf("GOMAXPROCS %d: io.Copy row reports multi-buffer files: %v", procs, r.Metrics)
				}
			case "wirespeed-crypto-md5":
				if !ok || got != 0 {
					t.Errorf("GOMAXPROCS %d: %s: multi-buffer files %v (%v), want 0", procs, r.Impl, got, ok)
				}
			case "wirespeed":
				if !ok || got != float64(multi) {
					t.Errorf("GOMAXPROCS %d: %s: multi-buffer files %v (%v), digest.Files hashed %d so", procs, r.Impl, got, ok, multi)
				}
			}
		}

		out, errs, err = runBench("-benchtime", "1ns", "-run", "MD5ManyFiles", "digest")
		if err != nil {
			t.Fatalf("GOMAXPROCS %d: %v: %s", procs, err, errs)
		}
		want := "wirespeed hashed them with crypto/md5 too"
		if multi > 0 {
			want = fmt.Sprintf("wirespeed hashed %d of the %d files with multi-buffer SIMD MD5 (%s)", multi, digestMany, digest.MultiBuffer())
		}
		if !strings.Contains(out, want) {
			t.Errorf("GOMAXPROCS %d, digest.Files hashed %d files multi-buffer: the note lacks %q:\n%s", procs, multi, want, out)
		}
	}
}

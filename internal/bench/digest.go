package bench

import (
	"bufio"
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/internal/benchcase"
)

// The digest suite: the classic comparison of ways to MD5 a file
// (ReadFile+Sum, io.Copy, bufio+io.Copy, io.CopyBuffer with 4 KiB) against
// digest.File on one generated 64 MiB file, and many files hashed one at a
// time against digest.Files. The files live in the page cache, so this
// measures hashing and copying, not the disk. They are generated once into
// $TMPDIR/wirespeed-bench-digest (128 MiB) and reused by later runs.

const (
	digestFileSize = 64 << 20
	digestMany     = 64
	digestManySize = 1 << 20
)

// digestNote explains the rows of MD5File where the table is shown.
const digestNote = "MD5File: since Go 1.22 *os.File implements io.WriterTo, so io.Copy and bufio.Reader hand a file to File.WriteTo (a 32 KiB copy) and skip their own buffers; " +
	"the bufio+io.Copy and CopyBuffer4K rows hide WriteTo, so that they read 4 KiB at a time as their names say."

// multiBufferMetric is the metric the wirespeed rows of MD5ManyFiles
// report: the files of an op that digest.Files hashed with multi-buffer
// SIMD MD5. It takes that path only where the CPU has it and for a batch
// with enough files per core, so on many cores the wirespeed row hashes
// with crypto/md5 as wirespeed-crypto-md5 does.
const multiBufferMetric = "multibuffer-files/op"

// digestManyNote explains the rows of MD5ManyFiles among rs: their
// speed-ups are not one core's, and the wirespeed row's multi-buffer MD5
// is said only where the run used it.
func digestManyNote(rs []Result) string {
	n := fmt.Sprintf("MD5ManyFiles: the io.Copy row hashes the files one after another in one goroutine; digest.Files, in the wirespeed rows, works with GOMAXPROCS (here %d), "+
		"so their speed-up includes the other cores: wirespeed-crypto-md5 hashes %[1]d files at once with crypto/md5 as io.Copy does", runtime.GOMAXPROCS(0))
	i := slices.IndexFunc(rs, func(r Result) bool { return strings.HasPrefix(r.Group, "MD5ManyFiles/") && r.Impl == "wirespeed" })
	if i < 0 {
		return n + "."
	}
	if files := rs[i].Metrics[multiBufferMetric]; files > 0 {
		return n + fmt.Sprintf("; wirespeed hashed %.0f of the %d files with multi-buffer SIMD MD5 (%s), reading up to 16 files at once per core.", files, digestMany, digest.MultiBuffer())
	}
	isa := digest.MultiBuffer()
	if isa == "" {
		isa = "none on this CPU or build"
	}
	return n + fmt.Sprintf("; wirespeed hashed them with crypto/md5 too: digest.Files takes multi-buffer SIMD MD5 only with AVX2 or AVX-512 (here: %s) and for a batch of enough files per core, so here the two rows measure the same path.", isa)
}

// digestFiles generates (or finds) the files and returns their paths, the
// big one first.
func digestFiles() ([]string, error) {
	dir := filepath.Join(os.TempDir(), "wirespeed-bench-digest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(5, 5))
	make1 := func(name string, size int) (string, error) {
		path := filepath.Join(dir, name)
		if fi, err := os.Stat(path); err == nil && fi.Size() == int64(size) {
			return path, nil
		}
		b := make([]byte, size)
		for i := 0; i+8 <= len(b); i += 8 {
			v := r.Uint64()
			for j := range 8 {
				b[i+j] = byte(v >> (8 * j))
			}
		}
		tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return "", err
		}
		return path, os.Rename(tmp, path)
	}
	big, err := make1("big", digestFileSize)
	if err != nil {
		return nil, err
	}
	files := []string{big}
	for i := range digestMany {
		p, err := make1(fmt.Sprintf("f%02d", i), digestManySize)
		if err != nil {
			return nil, err
		}
		files = append(files, p)
	}
	return files, nil
}

// onlyReader hides every method of a reader but Read, here *os.File's
// WriteTo.
type onlyReader struct{ io.Reader }

// A fileCopy is one way of feeding an open file f to the hash h.
type fileCopy struct {
	impl string
	copy func(h io.Writer, f io.Reader) error
}

// fileCopies are the io.Copy-style rows of MD5File.
func fileCopies() []fileCopy {
	return []fileCopy{
		// io.Copy calls File.WriteTo, which copies with io.Copy's own
		// 32 KiB buffer: what io.Copy does with a file.
		{"io.Copy", func(h io.Writer, f io.Reader) error { _, err := io.Copy(h, f); return err }},
		// bufio's default 4096-byte buffer, filled by Read.
		{"bufio+io.Copy", func(h io.Writer, f io.Reader) error {
			_, err := io.Copy(h, bufio.NewReader(onlyReader{f}))
			return err
		}},
		// 4 KiB reads into the caller's buffer.
		{"CopyBuffer4K", func(h io.Writer, f io.Reader) error {
			_, err := io.CopyBuffer(h, onlyReader{f}, make([]byte, 4096))
			return err
		}},
	}
}

// hashFile hashes the file at path with copy.
func hashFile(path string, copy func(h io.Writer, f io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := md5.New()
	err = copy(h, f)
	h.Sum(nil)
	return err
}

func digestCases() []Case {
	files := sync.OnceValues(digestFiles)
	// setup returns the files, warmed into the page cache; the body's
	// first Loop call starts the timer after it.
	setup := func(b benchcase.B) (big string, many []string) {
		fs, err := files()
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range fs {
			if _, err := digest.File(digest.SHA1, f); err != nil {
				b.Fatal(err)
			}
		}
		return fs[0], fs[1:]
	}
	oneFile := func(impl string, fn func(path string) error) Case {
		return Case{Suite: "digest", Group: "MD5File/size=64MiB", Impl: impl, Bytes: digestFileSize,
			Fn: func(b benchcase.B) {
				big, _ := setup(b)
				for b.Loop() {
					if err := fn(big); err != nil {
						b.Fatal(err)
					}
				}
			}}
	}
	cs := []Case{oneFile("ReadFile+Sum", func(path string) error {
		data, err := os.ReadFile(path)
		md5.Sum(data)
		return err
	})}
	for _, c := range fileCopies() {
		cs = append(cs, oneFile(c.impl, func(path string) error { return hashFile(path, c.copy) }))
	}
	cs = append(cs, oneFile("wirespeed", func(path string) error {
		_, err := digest.File(digest.MD5, path)
		return err
	}))

	ioCopy := fileCopies()[0].copy
	many := func(impl string, opts *digest.Options) Case {
		return Case{Suite: "digest", Group: "MD5ManyFiles/files=64x1MiB", Impl: impl, Bytes: digestMany * digestManySize,
			Fn: func(b benchcase.B) {
				_, paths := setup(b)
				multi := 0 // files of the last op hashed with multi-buffer MD5
				for b.Loop() {
					if opts == nil {
						for _, p := range paths {
							if err := hashFile(p, ioCopy); err != nil {
								b.Fatal(err)
							}
						}
						continue
					}
					res, err := digest.Files(context.Background(), digest.MD5, paths, opts)
					if err != nil {
						b.Fatal(err)
					}
					multi = 0
					for _, r := range res {
						if r.Err != nil {
							b.Fatal(r.Err)
						}
						if r.MultiBuffer {
							multi++
						}
					}
				}
				if m, ok := b.(interface{ ReportMetric(float64, string) }); ok && opts != nil {
					m.ReportMetric(float64(multi), multiBufferMetric)
				}
			}}
	}
	return append(cs,
		many("io.Copy", nil),
		many("wirespeed-crypto-md5", &digest.Options{NoMultiBuffer: true}),
		many("wirespeed", &digest.Options{}),
	)
}

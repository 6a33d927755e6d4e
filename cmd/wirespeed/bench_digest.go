package main

import (
	"bufio"
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wirespeed/wirespeed/digest"
)

// The digest suite: the classic comparison of ways to MD5 a file
// (ReadFile+Sum, io.Copy, bufio+io.Copy, io.CopyBuffer with 4 KiB) against
// digest.File on one generated 64 MiB file, and many files hashed one at a
// time against digest.Files. The files live in the page cache, so this
// measures hashing and copying, not the disk. They are generated once into
// $TMPDIR/wirespeed-bench-digest (128 MiB) and reused by later runs.

const (
	benchDigestFileSize = 64 << 20
	benchDigestMany     = 64
	benchDigestManySize = 1 << 20
)

var benchDigestFiles = sync.OnceValues(func() (files []string, err error) {
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
	big, err := make1("big", benchDigestFileSize)
	if err != nil {
		return nil, err
	}
	files = append(files, big)
	for i := range benchDigestMany {
		p, err := make1(fmt.Sprintf("f%02d", i), benchDigestManySize)
		if err != nil {
			return nil, err
		}
		files = append(files, p)
	}
	return files, nil
})

func benchDigestSetup(b *testing.B) (big string, many []string) {
	files, err := benchDigestFiles()
	if err != nil {
		b.Fatal(err)
	}
	// Warm the page cache outside the timed region.
	for _, f := range files {
		if _, err := digest.File(digest.SHA1, f); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	return files[0], files[1:]
}

func init() {
	oneFile := func(impl string, fn func(path string) error) benchCase {
		return benchCase{suite: "digest", group: "MD5File/size=64MiB", impl: impl, bytes: benchDigestFileSize,
			fn: func(b *testing.B) {
				big, _ := benchDigestSetup(b)
				for range b.N {
					if err := fn(big); err != nil {
						b.Fatal(err)
					}
				}
			}}
	}
	withFile := func(path string, do func(h io.Writer, f *os.File) error) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		h := md5.New()
		err = do(h, f)
		h.Sum(nil)
		return err
	}
	registerBench(
		oneFile("ReadFile+Sum", func(path string) error {
			data, err := os.ReadFile(path)
			md5.Sum(data)
			return err
		}),
		oneFile("io.Copy", func(path string) error {
			return withFile(path, func(h io.Writer, f *os.File) error { _, err := io.Copy(h, f); return err })
		}),
		oneFile("bufio+io.Copy", func(path string) error {
			return withFile(path, func(h io.Writer, f *os.File) error { _, err := io.Copy(h, bufio.NewReader(f)); return err })
		}),
		oneFile("CopyBuffer4K", func(path string) error {
			return withFile(path, func(h io.Writer, f *os.File) error {
				_, err := io.CopyBuffer(h, f, make([]byte, 4096))
				return err
			})
		}),
		oneFile("wirespeed", func(path string) error {
			_, err := digest.File(digest.MD5, path)
			return err
		}),
	)
	many := func(impl string, opts *digest.Options) benchCase {
		return benchCase{suite: "digest", group: "MD5ManyFiles/files=64x1MiB", impl: impl, bytes: benchDigestMany * benchDigestManySize,
			fn: func(b *testing.B) {
				_, files := benchDigestSetup(b)
				for range b.N {
					if opts == nil {
						for _, p := range files {
							if err := withFile(p, func(h io.Writer, f *os.File) error { _, err := io.Copy(h, f); return err }); err != nil {
								b.Fatal(err)
							}
						}
						continue
					}
					res, err := digest.Files(context.Background(), digest.MD5, files, opts)
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range res {
						if r.Err != nil {
							b.Fatal(r.Err)
						}
					}
				}
			}}
	}
	registerBench(
		many("io.Copy", nil),
		many("wirespeed-crypto-md5", &digest.Options{NoMultiBuffer: true}),
		many("wirespeed", &digest.Options{}),
	)
}

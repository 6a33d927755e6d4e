package digest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wirespeed/wirespeed/digest"
)

func ExampleReader() {
	sum, err := digest.Reader(digest.SHA256, strings.NewReader("abc"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum)
	// Output: ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
}

func ExampleFile() {
	dir, _ := os.MkdirTemp("", "digest-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "hello.txt")
	os.WriteFile(path, []byte("hello\n"), 0o644)

	sum, err := digest.File(digest.MD5, path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s  %s\n", sum, filepath.Base(path))
	// Output: b1946ac92492d2347c6235b4d2611184  hello.txt
}

func ExampleFiles() {
	dir, _ := os.MkdirTemp("", "digest-example")
	defer os.RemoveAll(dir)
	var paths []string
	for _, name := range []string{"a", "b", "missing", "c"} {
		p := filepath.Join(dir, name)
		if name != "missing" {
			os.WriteFile(p, []byte(name), 0o644)
		}
		paths = append(paths, p)
	}

	results, err := digest.Files(context.Background(), digest.SHA1, paths, nil)
	if err != nil {
		log.Fatal(err) // only for a cancelled context
	}
	for _, r := range results {
		if r.Err != nil {
			fmt.Println(filepath.Base(r.Path), "error:", os.IsNotExist(r.Err))
			continue
		}
		fmt.Println(filepath.Base(r.Path), r.Sum)
	}
	// Output:
	// a 86f7e437faa5a7fce15d1ddcb9eaeaea377667b8
	// b e9d71f5ee7c92d6dc9e92ffdad17b8bd49418f98
	// missing error: true
	// c 84a516841ba77a5b4648de2cd0dfcb30ea46dbb4
}

func ExampleEach() {
	dir, _ := os.MkdirTemp("", "digest-example")
	defer os.RemoveAll(dir)
	// Any iterator of paths will do; Each reads it a bounded window ahead.
	names := slices.Values([]string{"x", "y"})
	paths := func(yield func(string) bool) {
		for n := range names {
			p := filepath.Join(dir, n)
			os.WriteFile(p, []byte(n+"\n"), 0o644)
			if !yield(p) {
				return
			}
		}
	}
	err := digest.Each(context.Background(), digest.MD5, paths, &digest.Options{Workers: 2}, func(r digest.Result) error {
		fmt.Println(r.Index, filepath.Base(r.Path), r.Sum, r.Err)
		return nil
	})
	fmt.Println(err)
	// Output:
	// 0 x 401b30e3b8b5d629635a5c613cdb7919 <nil>
	// 1 y 009520053b00386d1173f3988c55d192 <nil>
	// <nil>
}

func ExampleParseSum() {
	want, err := digest.ParseSum(digest.MD5, "900150983CD24FB0D6963F7D28E17F72")
	if err != nil {
		log.Fatal(err)
	}
	got, _ := digest.Reader(digest.MD5, strings.NewReader("abc"))
	fmt.Println(got.Equal(want))
	// Output: true
}

func ExampleParseAlgorithm() {
	for _, name := range []string{"sha256sum", "SHA1", "md5", "crc32"} {
		a, err := digest.ParseAlgorithm(name)
		fmt.Println(a, a.Size(), errors.Is(err, digest.ErrUnknownAlgorithm))
	}
	// Output:
	// sha256 32 false
	// sha1 20 false
	// md5 16 false
	// Algorithm(0) 0 true
}

func ExampleAlgorithms() {
	for _, a := range digest.Algorithms() {
		fmt.Println(a.Tag(), a.Size())
	}
	// Output:
	// MD5 16
	// SHA1 20
	// SHA224 28
	// SHA256 32
	// SHA384 48
	// SHA512 64
}

// MatchHex checks a digest from a checksum list without parsing it.
func ExampleSum_MatchHex() {
	sum, _ := digest.Reader(digest.MD5, strings.NewReader("abc"))
	fmt.Println(sum.MatchHex([]byte("900150983CD24FB0D6963F7D28E17F72")))
	fmt.Println(sum.MatchHex([]byte("d41d8cd98f00b204e9800998ecf8427e")))
	// Output:
	// true
	// false
}

// AppendHex formats into a caller's buffer, as md5sum lines are built.
func ExampleSum_AppendHex() {
	sum, _ := digest.Reader(digest.SHA1, strings.NewReader("abc"))
	line := sum.AppendHex(nil)
	line = append(line, "  -\n"...)
	fmt.Print(string(line))
	// Output: a9993e364706816aba3e25717850c26c9cd0d89d  -
}

// MultiBuffer tells whether MD5 batches can use multi-buffer SIMD here.
func ExampleMultiBuffer() {
	if isa := digest.MultiBuffer(); isa != "" {
		fmt.Println("multi-buffer MD5 with", isa)
	} else {
		fmt.Println("crypto/md5 only")
	}
}

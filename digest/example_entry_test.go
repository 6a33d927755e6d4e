package digest_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wirespeed/wirespeed/digest"
)

// Hashing data on its way somewhere else: the algorithm comes from the
// user (a flag), New gives its hash.Hash, and io.MultiWriter feeds it
// while the data is stored, so the data is read once.
func ExampleAlgorithm_New() {
	a, err := digest.ParseAlgorithm("SHA256") // as a user may spell it: sha256, sha256sum
	if err != nil {
		log.Fatal(err) // wraps digest.ErrUnknownAlgorithm
	}
	dir, err := os.MkdirTemp("", "digest-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	f, err := os.Create(filepath.Join(dir, "download"))
	if err != nil {
		log.Fatal(err)
	}
	h := a.New()
	body := strings.NewReader("abc") // a response body, say
	if _, err := io.Copy(io.MultiWriter(f, h), body); err != nil {
		f.Close()
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(a, hex.EncodeToString(h.Sum(nil)))
	// Output: sha256 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
}

// A batch bounded in workers and in time, with progress read from
// another goroutine (here, once at the end).
func ExampleOptions() {
	dir, err := os.MkdirTemp("", "digest-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var paths []string
	for i := range 4 {
		p := filepath.Join(dir, fmt.Sprintf("part%d", i))
		if err := os.WriteFile(p, make([]byte, 1000*(i+1)), 0o644); err != nil {
			log.Fatal(err)
		}
		paths = append(paths, p)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var done atomic.Int64 // bytes read so far
	results, err := digest.Files(ctx, digest.SHA1, paths, &digest.Options{Workers: 2, Progress: &done})
	if err != nil {
		log.Fatal(err) // ctx's error: the batch did not finish
	}
	for _, r := range results {
		if r.Err != nil {
			fmt.Println(r.Err) // a *fs.PathError; the others go on
			continue
		}
		fmt.Println(filepath.Base(r.Path), r.Sum)
	}
	fmt.Println(done.Load(), "bytes")
	// Output:
	// part0 c577f7a37657053275f3e3ecc06ec22e6b909366
	// part1 c66bf56ddabc2021b84d3ae2755d0ab05ff0c99e
	// part2 790fecb4d723abefd9f4e167f19eb7e583aafe04
	// part3 8d82693c897d1b9dd38ffebed9a9d040799d6734
	// 10000 bytes
}

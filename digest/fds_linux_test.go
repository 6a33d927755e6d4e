package digest

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"os"
	"syscall"
	"testing"
)

// Files with few file descriptors left: a worker out of them waits for
// another file of the run to close, so every file is hashed, as md5sum,
// which opens one at a time, hashes them all. Up to 16 files a core were
// open at once on the multi-buffer path, and the rest failed with EMFILE.
func TestFilesFewDescriptors(t *testing.T) {
	var sizes []int
	for i := range 64 {
		sizes = append(sizes, i*7, bufferSize+i*1000)
	}
	paths, data := writeFiles(t, sizes)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = uint64(len(ents) + 2) // the directory's descriptor is closed again
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	for _, c := range []struct {
		multi   bool
		workers int
	}{{true, 0}, {false, 0}, {false, 8}} { // 8 workers on about one descriptor
		multi := c.multi
		res, err := Files(context.Background(), MD5, paths, &Options{NoMultiBuffer: !multi, Workers: c.workers})
		if err != nil {
			t.Fatal(err)
		}
		failed := 0
		for i, r := range res {
			want := md5.Sum(data[i])
			if r.Err != nil || r.Sum.String() != hex.EncodeToString(want[:]) {
				if failed++; failed <= 3 {
					t.Errorf("multi-buffer %v: %s: %v, sum %s", multi, r.Path, r.Err, r.Sum)
				}
			}
		}
		if failed > 3 {
			t.Errorf("multi-buffer %v: %d of %d files failed", multi, failed, len(res))
		}
	}
}

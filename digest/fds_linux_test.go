package digest

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"os"
	"runtime"
	"sync"
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

// Workers of one run taking turns at the last free descriptors: one out of
// descriptors waits for another's file to close and tries again, so none
// ever fails. A worker could see a file closing as neither open nor closed
// yet, between two counts, and give up. More threads than CPUs, so that
// workers stop anywhere; under -race about 2 runs in 5 failed so, and
// TestFilesFewDescriptors once in CI.
func TestDescriptorsTakingTurns(t *testing.T) {
	paths, _ := writeFiles(t, []int{1})
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	// The two lowest free descriptors are left: one for the run, one for
	// anything else the process opens for a moment (under -race, the C
	// library's malloc reads /sys/devices/system/cpu/online once, in the
	// first thread that needs an arena of its own).
	var fds [2]int
	for i := range fds {
		fd, err := syscall.Open(paths[0], syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		fds[i] = fd
	}
	syscall.Close(fds[0])
	syscall.Close(fds[1])
	lim := old
	lim.Cur = uint64(max(fds[0], fds[1]) + 1)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(16))
	var d descriptors
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			for range 3000 {
				f, err := d.openFile(paths[0])
				if err != nil {
					errs <- err
					return
				}
				d.close(f)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

package digest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// How many files Each hashes at once: Workers with plain hashing, 16 per
// SIMD server with multi-buffer MD5, min(Workers, NumCPU) servers. The
// docs said at most Workers cores were busy, but with multi-buffer MD5
// the server's 16 goroutines each hash a file shorter than 128 KiB with
// crypto/md5, so Workers: 1 hashed 16 at once. Every worker stops in the
// hook on its first file; synctest.Wait returns once all have, and none
// can be left out or counted twice. Files of one buffer, so that
// md5-simd, whose server answers on channels made inside the bubble, is
// not used in it.
func TestWorkersBound(t *testing.T) {
	paths, _ := writeFiles(t, slices.Repeat([]int{100}, 200))
	warmServers()
	for _, multi := range []bool{false, true} {
		for _, workers := range []int{1, 2, 3} {
			want := workers
			if multi && MultiBuffer() != "" {
				want = simdLanes * min(workers, runtime.NumCPU())
			}
			t.Run(fmt.Sprintf("multi=%v/workers=%d", multi, workers), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var started atomic.Int64
					release := make(chan struct{})
					hook := func() {
						started.Add(1)
						<-release
					}
					n := 0
					done := make(chan error)
					go func() {
						opts := &Options{Workers: workers, NoMultiBuffer: !multi}
						done <- EachMultiHook(context.Background(), slices.Values(paths), opts, func(r Result) error {
							n++
							return r.Err
						}, hook)
					}()
					synctest.Wait()
					if got := started.Load(); got != int64(want) {
						t.Errorf("%d files hashed at once, want %d", got, want)
					}
					close(release)
					if err := <-done; err != nil || n != len(paths) {
						t.Errorf("Each = %v after %d of %d results", err, n, len(paths))
					}
				})
			})
		}
	}
}

// A batch starts no more workers than it has paths: Workers 256 with 8
// files started all 256 (each a goroutine with a pooled buffer and hash
// state, about 295 allocations for the batch), on the plain path and, with
// 16 lanes per server, on the multi-buffer one.
func TestWorkersCappedByPaths(t *testing.T) {
	paths, _ := writeFiles(t, slices.Repeat([]int{100}, 8))
	warmServers()
	ctx := context.Background()
	for _, c := range []struct {
		alg     Algorithm
		workers int
		want    int
	}{
		{SHA256, 256, 8},
		{MD5, 256, 8},
		{SHA1, 3, 3},
		{SHA512, 1, 1},
	} {
		res, n, err := FilesCountWorkers(ctx, c.alg, paths, &Options{Workers: c.workers})
		if err != nil || len(res) != len(paths) {
			t.Fatalf("Files = %d results, %v", len(res), err)
		}
		if n != c.want {
			t.Errorf("%v, Workers %d, %d files: %d workers started, want %d", c.alg, c.workers, len(paths), n, c.want)
		}
	}
	// The multi-buffer path (where the CPU has it): one server, 16 lanes,
	// 8 files.
	n, err := EachCountWorkers(ctx, slices.Values(paths), &Options{Workers: 1}, nil)
	want := 1
	if MultiBuffer() != "" {
		want = len(paths)
	}
	if err != nil || n != want {
		t.Errorf("multi-buffer Each of %d files: %d workers started (%v), want %d", len(paths), n, err, want)
	}
	// Each with no paths starts none.
	if n, err := EachCountWorkers(ctx, nil, &Options{Workers: 4}, nil); err != nil || n != 0 {
		t.Errorf("Each of no paths: %d workers started (%v), want 0", n, err)
	}
	if testing.Short() || raceEnabled {
		return
	}
	// And the allocations: a few dozen for the batch, not one per worker
	// of Options.Workers.
	opts := &Options{Workers: 256}
	run := func() {
		if _, err := Files(ctx, SHA256, paths, opts); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if a, _ := allocsPerRun(5, run); a > 100 {
		t.Errorf("Files of %d files with Workers 256: %.0f allocations, want at most 100", len(paths), a)
	}
}

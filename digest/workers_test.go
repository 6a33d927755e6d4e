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

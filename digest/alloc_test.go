package digest

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestAllocsPerFile is the allocation budget of the many-files path: at
// most 2 allocations per file, whole batch setup included, on both the
// plain and the multi-buffer path. (The per-file cost is the path's
// NUL-terminated copy for open(2); buffers and hash states are pooled.)
// The budget is this package's: md5-simd, on a host with AVX2 and not
// AVX-512, starts two goroutines for every 16-lane round (its design, one
// closure each), which the test counts apart and logs.
func TestAllocsPerFile(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts need a warm pool (and sync.Pool drops items under -race)")
	}
	for _, c := range []struct {
		name  string
		alg   Algorithm
		size  int
		count int
	}{
		{"small-md5", MD5, 100, 256},
		{"large-md5", MD5, bufferSize + 1000, 128},
		{"small-sha256", SHA256, 5000, 256},
		{"large-sha1", SHA1, bufferSize + 1000, 128},
	} {
		t.Run(c.name, func(t *testing.T) {
			paths, _ := writeFiles(t, slices.Repeat([]int{c.size}, c.count))
			ctx := context.Background()
			opts := &Options{Workers: 2}
			multi := 0
			run := func() {
				multi = 0
				err := Each(ctx, c.alg, slices.Values(paths), opts, func(r Result) error {
					if r.Err != nil {
						t.Fatal(r.Err)
					}
					if r.MultiBuffer {
						multi++
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			run() // warm the pools and the SIMD servers
			perBatch, dep := allocsPerRun(5, run)
			perFile := perBatch / float64(c.count)
			// The marginal cost: the same batch with every file twice.
			all := paths
			paths = append(slices.Clone(paths), paths...)
			perDouble, _ := allocsPerRun(3, run)
			marginal := (perDouble - perBatch) / float64(c.count)
			paths = all
			t.Logf("%.1f allocations per batch of %d, %.2f per file, %.2f per additional file (multi-buffer: %d files); md5-simd's own: %.1f per batch", perBatch, c.count, perFile, marginal, multi, dep)
			if perFile > 2 || marginal > 2 {
				t.Errorf("%.2f allocations per file (%.2f marginal), budget is 2", perFile, marginal)
			}
			if c.alg == MD5 && c.size > bufferSize && MultiBuffer() != "" && multi == 0 {
				t.Error("the multi-buffer path was not exercised")
			}
		})
	}
	// Single files: one allocation (the path) at most.
	paths, _ := writeFiles(t, []int{3 * bufferSize})
	if n := testing.AllocsPerRun(20, func() { File(SHA256, paths[0]) }); n > 1 {
		t.Errorf("File: %.1f allocations, want <= 1", n)
	}
}

// Formatting and matching a Sum allocate nothing.
func TestSumAllocs(t *testing.T) {
	s, _ := ParseSum(SHA512, "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e")
	text := s.AppendHex(nil)
	bad := slices.Clone(text)
	bad[7] = 'x'
	buf := make([]byte, 0, 2*MaxSize)
	if n := testing.AllocsPerRun(100, func() {
		if !s.MatchHex(text) || s.MatchHex(bad) || len(s.AppendHex(buf[:0])) != len(text) {
			t.Fatal("MatchHex or AppendHex wrong")
		}
	}); n != 0 {
		t.Errorf("%.1f allocations, want 0", n)
	}
}

// allocsPerRun is testing.AllocsPerRun split by who allocates: the average
// number of heap allocations per call of f made outside md5-simd (ours),
// and those made inside it (dep), read from a memory profile that records
// every allocation while it runs.
func allocsPerRun(runs int, f func()) (ours, dep float64) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	runtime.MemProfileRate = 1
	f() // the first call after the rate change: not counted
	_, d0 := profiledAllocs()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	m0 := m.Mallocs
	for range runs {
		f()
	}
	runtime.ReadMemStats(&m)
	total := m.Mallocs - m0
	_, d1 := profiledAllocs()
	dep = float64(d1-d0) / float64(runs)
	return float64(total)/float64(runs) - dep, dep
}

// profiledAllocs sums the memory profile's allocation counts, split by
// whether the allocating stack passes through md5-simd. The profile is
// published at the end of a garbage collection cycle, so it collects first.
func profiledAllocs() (ours, dep int64) {
	runtime.GC()
	runtime.GC()
	var recs []runtime.MemProfileRecord
	for {
		n, ok := runtime.MemProfile(recs, true)
		if ok {
			recs = recs[:n]
			break
		}
		recs = make([]runtime.MemProfileRecord, n+64)
	}
	for _, r := range recs {
		inDep := false
		frames := runtime.CallersFrames(r.Stack())
		for {
			fr, more := frames.Next()
			if strings.HasPrefix(fr.Function, "github.com/minio/md5-simd.") {
				inDep = true
				break
			}
			if !more {
				break
			}
		}
		if inDep {
			dep += r.AllocObjects
		} else {
			ours += r.AllocObjects
		}
	}
	return ours, dep
}

package digest

import (
	"context"
	"slices"
	"testing"
)

// TestAllocsPerFile is the allocation budget of the many-files path: at
// most 2 allocations per file, whole batch setup included, on both the
// plain and the multi-buffer path. (The per-file cost is the path's
// NUL-terminated copy for open(2); buffers and hash states are pooled.)
func TestAllocsPerFile(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts need a warm pool")
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
			perBatch := testing.AllocsPerRun(5, run)
			perFile := perBatch / float64(c.count)
			// The marginal cost: the same batch with every file twice.
			all := paths
			paths = append(slices.Clone(paths), paths...)
			marginal := (testing.AllocsPerRun(3, run) - perBatch) / float64(c.count)
			paths = all
			t.Logf("%.1f allocations per batch of %d, %.2f per file, %.2f per additional file (multi-buffer: %d files)", perBatch, c.count, perFile, marginal, multi)
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

package digest

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestParallelEqualsSequential hashes a mixed batch (small and large
// files, missing files, a directory) in parallel and checks every result
// against File, called one at a time.
func TestParallelEqualsSequential(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	sizes := make([]int, 120)
	for i := range sizes {
		switch i % 4 {
		case 0:
			sizes[i] = r.IntN(1000)
		case 1:
			sizes[i] = r.IntN(3 * bufferSize)
		default:
			sizes[i] = bufferSize + r.IntN(600<<10)
		}
	}
	paths, _ := writeFiles(t, sizes)
	dir := filepath.Dir(paths[0])
	sub := filepath.Join(dir, "subdir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	paths = slices.Insert(paths, 10, filepath.Join(dir, "missing"))
	paths = slices.Insert(paths, 50, sub)
	paths = append(paths, paths[3]) // the same file twice

	for _, a := range []Algorithm{MD5, SHA256} {
		seq := make([]Result, len(paths))
		for i, p := range paths {
			s, err := File(a, p)
			seq[i] = Result{Index: i, Path: p, Sum: s, Err: err}
		}
		for _, opts := range []*Options{{Workers: 1}, {Workers: 2}, {Workers: 5}, {Workers: 2, NoMultiBuffer: true}} {
			var prog atomic.Int64
			opts.Progress = &prog
			var total int64
			next := 0
			err := EachTuned(context.Background(), a, slices.Values(paths), opts, func(r Result) error {
				if r.Index != next {
					t.Fatalf("result %d delivered at position %d", r.Index, next)
				}
				next++
				s := seq[r.Index]
				if r.Path != s.Path || !r.Sum.Equal(s.Sum) || (r.Err == nil) != (s.Err == nil) {
					t.Errorf("%s workers=%d %s: parallel %v %v, sequential %v %v", a, opts.Workers, r.Path, r.Sum, r.Err, s.Sum, s.Err)
				}
				total += r.Size
				return nil
			}, 2, 0)
			if err != nil || next != len(paths) {
				t.Fatalf("Each: %v after %d of %d results", err, next, len(paths))
			}
			if prog.Load() != total {
				t.Errorf("Progress counted %d bytes, results sum to %d", prog.Load(), total)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	if _, err := File(MD5, missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	var pe *fs.PathError
	if _, err := File(MD5, dir); !errors.Is(err, syscall.EISDIR) || !errors.As(err, &pe) || pe.Path != dir {
		t.Errorf("directory: %v, want *fs.PathError wrapping EISDIR", err)
	}
	locked := filepath.Join(dir, "locked")
	if err := os.WriteFile(locked, []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Open(locked); err == nil {
		f.Close()
		t.Log("mode-000 files are readable here (root): skipping the permission case")
	} else if _, err := File(MD5, locked); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("unreadable file: %v, want fs.ErrPermission", err)
	}
	if _, err := File(0, missing); !errors.Is(err, ErrUnknownAlgorithm) {
		t.Errorf("File(0): %v", err)
	}
	if _, err := Reader(Algorithm(99), nil); !errors.Is(err, ErrUnknownAlgorithm) {
		t.Errorf("Reader(99): %v", err)
	}
	if err := Each(context.Background(), 0, slices.Values([]string{missing}), nil, nil); !errors.Is(err, ErrUnknownAlgorithm) {
		t.Errorf("Each(0): %v", err)
	}
	boom := errors.New("boom")
	if _, err := Reader(SHA1, errReader{boom}); !errors.Is(err, boom) {
		t.Errorf("Reader error: %v, want boom", err)
	}
	// Errors are per file: the batch goes on.
	paths, _ := writeFiles(t, []int{10, 20})
	res, err := Files(context.Background(), SHA512, []string{paths[0], missing, dir, paths[1]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || !errors.Is(res[1].Err, fs.ErrNotExist) || !errors.Is(res[2].Err, syscall.EISDIR) || res[3].Err != nil {
		t.Errorf("per-file errors wrong: %v / %v / %v / %v", res[0].Err, res[1].Err, res[2].Err, res[3].Err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestCallbackErrorStops(t *testing.T) {
	paths, _ := writeFiles(t, make([]int, 200))
	stop := errors.New("stop")
	calls := 0
	err := Each(context.Background(), SHA256, slices.Values(paths), &Options{Workers: 2}, func(r Result) error {
		calls++
		if r.Index == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 6 {
		t.Errorf("Each = %v after %d calls, want stop after 6", err, calls)
	}
}

func TestCancel(t *testing.T) {
	paths, _ := writeFiles(t, slices.Repeat([]int{3 * bufferSize}, 100))
	for _, a := range []Algorithm{MD5, SHA1} {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		err := EachTuned(ctx, a, slices.Values(paths), &Options{Workers: 2}, func(r Result) error {
			if n++; n == 3 {
				cancel()
			}
			if n > 3 && r.Err == nil {
				// Files finished before the cancellation was seen are fine;
				// the point is that the batch ends early.
				return nil
			}
			if n > 3 && !errors.Is(r.Err, context.Canceled) {
				t.Errorf("result after cancel: %v, want context.Canceled", r.Err)
			}
			return nil
		}, 1, 0)
		if !errors.Is(err, context.Canceled) || n >= len(paths) {
			t.Errorf("%s: Each = %v after %d results, want Canceled well before %d", a, err, n, len(paths))
		}
		// Files reports every path, the unreached ones with the error.
		ctx, cancel = context.WithCancel(context.Background())
		cancel()
		res, err := FilesTuned(ctx, a, paths, nil, 1, 0)
		if !errors.Is(err, context.Canceled) || len(res) != len(paths) || !errors.Is(res[len(res)-1].Err, context.Canceled) || res[len(res)-1].Path != paths[len(paths)-1] {
			t.Errorf("%s: Files on a cancelled context = %v, last %+v", a, err, res[len(res)-1])
		}
	}
}

// TestStreamingInput feeds Each from an iterator far longer than its
// window: memory must not depend on the input length, and order holds.
func TestStreamingInput(t *testing.T) {
	paths, _ := writeFiles(t, []int{1, 2, 3})
	const n = 5000
	seq := func(yield func(string) bool) {
		for i := range n {
			if !yield(paths[i%3]) {
				return
			}
		}
	}
	want := make([]Sum, 3)
	for i, p := range paths {
		want[i], _ = File(SHA1, p)
	}
	got := 0
	err := Each(context.Background(), SHA1, seq, &Options{Workers: 3}, func(r Result) error {
		if r.Index != got || !r.Sum.Equal(want[got%3]) {
			t.Fatalf("result %d: %+v", got, r)
		}
		got++
		return nil
	})
	if err != nil || got != n {
		t.Fatalf("Each = %v, %d results", err, got)
	}
}

// TestLockstepIterator feeds Each from an iterator that waits for each
// result before yielding the next path, as a checker reading its list
// lazily may: the look-ahead for multi-buffer MD5 must not hold the first
// path hostage.
func TestLockstepIterator(t *testing.T) {
	paths, _ := writeFiles(t, slices.Repeat([]int{bufferSize + 10}, 20))
	seen := make(chan int, len(paths))
	seq := func(yield func(string) bool) {
		for i, p := range paths {
			if i > 0 {
				<-seen
			}
			if !yield(p) {
				return
			}
		}
	}
	err := Each(context.Background(), MD5, seq, nil, func(r Result) error {
		seen <- r.Index
		return r.Err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Nil arguments are no files and no reader: no panic, in the caller's
// goroutine or in Each's.
func TestNilArguments(t *testing.T) {
	if err := Each(t.Context(), MD5, nil, nil, nil); err != nil {
		t.Errorf("Each with nil paths: %v", err)
	}
	if _, err := Reader(MD5, nil); !errors.Is(err, os.ErrInvalid) {
		t.Errorf("Reader(nil): %v, want os.ErrInvalid", err)
	}
}

// A Reader whose Read breaks io.Reader's contract on the count: more than
// len(p) panicked (slice bounds out of range), a negative count looped
// for ever. Both are errors matching os.ErrInvalid, as bufio and io
// refuse such counts.
func TestReaderInvalidCount(t *testing.T) {
	for _, n := range []int{bufferSize + 1, 1 << 30, -1} {
		s, err := Reader(SHA256, countReader{n})
		if !errors.Is(err, os.ErrInvalid) || s.Len() != 0 {
			t.Errorf("Read returning %d: %v, %v; want an error matching os.ErrInvalid", n, s, err)
		}
	}
}

// countReader's Read returns n, with no error.
type countReader struct{ n int }

func (r countReader) Read(p []byte) (int, error) { return r.n, nil }

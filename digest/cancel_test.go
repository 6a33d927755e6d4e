package digest

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// A context cancelled before the call: no file is hashed successfully
// after it, and Files reports every path with ctx's error.
func TestPreCancelled(t *testing.T) {
	paths, _ := writeFiles(t, slices.Repeat([]int{10}, 64))
	for range 50 {
		for _, opts := range []*Options{{Workers: 2, NoMultiBuffer: true}, {Workers: 1}} {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			res, err := FilesTuned(ctx, MD5, paths, opts, 1, 0)
			if !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
			for i, r := range res {
				if !errors.Is(r.Err, context.Canceled) {
					t.Fatalf("%+v: result %d of a cancelled batch: %+v", opts, i, r)
				}
			}
		}
		// Each stops taking paths: the plain path takes the first one
		// the iterator yields, and no more.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		yielded := 0
		seq := func(yield func(string) bool) {
			for _, p := range paths {
				yielded++
				if !yield(p) {
					return
				}
			}
		}
		err := Each(ctx, SHA256, seq, &Options{Workers: 4}, func(r Result) error {
			t.Errorf("fn called on a cancelled batch: %+v", r)
			return nil
		})
		if !errors.Is(err, context.Canceled) || yielded > 1 {
			t.Fatalf("Each on a cancelled context = %v, took %d paths", err, yielded)
		}
	}
}

// Cancelled from fn: a file the worker had not started when cancel
// returned is not hashed. The hook holds the worker at its second file
// until the cancellation; every later file must then fail.
func TestCancelSeenBeforeOpen(t *testing.T) {
	paths, _ := writeFiles(t, slices.Repeat([]int{10}, 16))
	for range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		cancelled := make(chan struct{})
		started := 0
		tun := defaultTuning()
		tun.startFile = func() {
			if started++; started == 2 {
				<-cancelled
			}
		}
		var res []Result
		err := each(ctx, SHA1, slices.Values(paths), &Options{Workers: 1}, func(r Result) error {
			if r.Index == 0 {
				cancel()
				close(cancelled)
			}
			res = append(res, r)
			return nil
		}, tun)
		if !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		for _, r := range res[min(2, len(res)):] {
			if !errors.Is(r.Err, context.Canceled) {
				t.Fatalf("result %d, started after the cancellation: %+v", r.Index, r)
			}
		}
	}
}

// A cancellation that comes once the last result is delivered leaves no
// work undone: Each and Files return nil, as their doc says, and every
// result stands. The cancel is made from fn (Each) or as Files takes the
// last result, so it is ordered after every file was taken and hashed.
func TestCancelAfterLastResult(t *testing.T) {
	sizes := slices.Repeat([]int{10, bufferSize + 5}, 12)
	paths, _ := writeFiles(t, sizes)
	last := len(paths) - 1
	check := func(what string, res []Result, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: cancelled after the last result: %v, want nil", what, err)
		}
		if len(res) != len(paths) {
			t.Fatalf("%s: %d results, want %d", what, len(res), len(paths))
		}
		for i, r := range res {
			if r.Err != nil || r.Index != i || r.Size != int64(sizes[i]) {
				t.Fatalf("%s: result %d: %+v", what, i, r)
			}
		}
	}
	for range 20 {
		for _, opts := range []*Options{{Workers: 2, NoMultiBuffer: true}, {Workers: 1}} {
			ctx, cancel := context.WithCancel(context.Background())
			var res []Result
			err := Each(ctx, SHA256, slices.Values(paths), opts, func(r Result) error {
				res = append(res, r)
				if r.Index == last {
					cancel()
				}
				return nil
			})
			check("Each", res, err)

			ctx, cancel = context.WithCancel(context.Background())
			res = nil
			err = EachMulti(ctx, slices.Values(paths), opts, func(r Result) error {
				res = append(res, r)
				if r.Index == last {
					cancel()
				}
				return nil
			})
			check("EachMulti", res, err)

			ctx, cancel = context.WithCancel(context.Background())
			res, err = FilesHook(ctx, MD5, paths, opts, 1, func(r Result) {
				if r.Index == last {
					cancel()
				}
			})
			check("Files", res, err)
		}
	}
}

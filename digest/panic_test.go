package digest

import (
	"context"
	"errors"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
)

// A paths iterator that panics or calls runtime.Goexit: it ran on a
// goroutine of Each's, so its panic killed the process. Each now raises
// it on the caller's goroutine, with the same value, once its workers
// have stopped, so that a deferred recover sees it; nothing is left
// behind, and a later Each works.
func TestEachIteratorPanic(t *testing.T) {
	paths, _ := writeFiles(t, slices.Repeat([]int{10, 3*bufferSize + 1}, 20))
	warmServers()
	for _, multi := range []bool{false, true} {
		for _, after := range []int{0, 3, len(paths)} {
			for _, exit := range []bool{false, true} {
				name := "multi=" + strconv.FormatBool(multi) + "/after=" + strconv.Itoa(after) + "/goexit=" + strconv.FormatBool(exit)
				t.Run(name, func(t *testing.T) {
					boom := errors.New("boom")
					seq := func(yield func(string) bool) {
						for _, p := range paths[:after] {
							if !yield(p) {
								return
							}
						}
						if exit {
							runtime.Goexit()
						}
						panic(boom)
					}
					checkNoLeaks(t, !multi, func() {
						calls := 0
						v, returned := run(func() {
							opts := &Options{Workers: 2, NoMultiBuffer: !multi}
							EachMulti(context.Background(), seq, opts, func(r Result) error {
								calls++
								return nil
							})
						})
						switch {
						case returned:
							t.Errorf("Each returned after %d results", calls)
						case exit && v != nil:
							t.Errorf("Each panicked with %v, want runtime.Goexit", v)
						case !exit && v != boom:
							t.Errorf("Each panicked with %v, want %v", v, boom)
						}
					})
				})
			}
		}
	}
}

// A panic in fn, which runs on the caller's goroutine, went on up while
// the batch's workers still held files and lanes. It now goes on once
// they have stopped.
func TestEachCallbackPanic(t *testing.T) {
	paths, _ := writeFiles(t, append([]int{10}, slices.Repeat([]int{1 << 20}, 40)...))
	warmServers()
	for _, multi := range []bool{false, true} {
		t.Run("multi="+strconv.FormatBool(multi), func(t *testing.T) {
			boom := errors.New("boom")
			checkNoLeaks(t, !multi, func() {
				v, returned := run(func() {
					opts := &Options{Workers: 2, NoMultiBuffer: !multi}
					EachMulti(context.Background(), slices.Values(paths), opts, func(r Result) error {
						panic(boom)
					})
				})
				if returned || v != boom {
					t.Errorf("Each: returned %v, panicked with %v; want a panic with %v", returned, v, boom)
				}
			})
		})
	}
}

// run calls f on a goroutine of its own and reports what f panicked with
// and whether it returned; neither means runtime.Goexit.
func run(f func()) (panicked any, returned bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { panicked = recover() }()
		f()
		returned = true
	}()
	<-done
	return panicked, returned
}

// warmServers starts the SIMD servers, which live for the process,
// outside any synctest bubble.
func warmServers() {
	if MultiBuffer() != "" {
		simdServers(runtime.NumCPU())
	}
}

// checkNoLeaks runs f, which runs an Each that does not return, and checks
// that it left no descriptor open and no lane taken when it ended, and
// that a later Each works. With goroutines, f runs in a synctest bubble
// and no goroutine may be left behind; md5-simd's Sum cannot run in one
// (its server, outside, answers on a channel made inside).
func checkNoLeaks(t *testing.T, goroutines bool, f func()) {
	fds := openDescriptors(t)
	check := func(t *testing.T) {
		f()
		if n := openDescriptors(t); n != fds {
			t.Errorf("%d descriptors open after Each, %d before", n, fds)
		}
		if MultiBuffer() != "" {
			for i, srv := range simdServers(runtime.NumCPU()) {
				if n := len(srv.free); n != simdLanes {
					t.Errorf("server %d: %d of %d lanes free after Each", i, n, simdLanes)
				}
			}
		}
	}
	if goroutines {
		synctest.Test(t, func(t *testing.T) {
			// Every goroutine Each starts inherits the label; the
			// process's others (a finalizer running, say) do not.
			pprof.Do(context.Background(), pprof.Labels(leakLabel, t.Name()), func(context.Context) {
				check(t)
			})
			synctest.Wait()
			if n := labelledGoroutines(t, t.Name()); n != 0 {
				t.Errorf("%d goroutines of Each's left after it", n)
			}
		})
	} else {
		check(t)
	}
	paths, _ := writeFiles(t, []int{1, bufferSize + 1})
	err := EachMulti(context.Background(), slices.Values(slices.Repeat(paths, 20)), &Options{Workers: 2}, func(r Result) error {
		return r.Err
	})
	if err != nil {
		t.Errorf("a later Each: %v", err)
	}
}

const leakLabel = "digest-leak-check"

// labelledGoroutines counts the goroutines whose leakLabel is value, from
// the goroutine profile's text form: a record opens with "N @ " for its N
// goroutines, and a line of its labels follows.
func labelledGoroutines(t *testing.T, value string) int {
	var b strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	want := strconv.Quote(leakLabel) + ":" + strconv.Quote(value)
	n, count := 0, 0
	for line := range strings.Lines(b.String()) {
		if c, _, ok := strings.Cut(line, " @ "); ok {
			count, _ = strconv.Atoi(c)
		} else if strings.HasPrefix(line, "# labels: ") && strings.Contains(line, want) {
			n += count
		}
	}
	return n
}

// openDescriptors counts the process's open descriptors where /proc tells,
// and returns -1 elsewhere.
func openDescriptors(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if errors.Is(err, os.ErrNotExist) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

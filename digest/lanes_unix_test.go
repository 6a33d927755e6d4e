//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package digest

import (
	"context"
	"crypto/md5"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
)

// An Each whose fn runs another Each (or Files) of MD5 on the multi-buffer
// path: the lanes are shared by the process, and the outer Each's workers held
// theirs across files, fn included, so the inner one waited for them for
// ever. The outer batch is longer than its window, so that its workers
// wait for more while fn runs.
func TestEachNested(t *testing.T) {
	if MultiBuffer() == "" {
		t.Skip("no multi-buffer MD5 here")
	}
	paths, data := writeFiles(t, slices.Repeat([]int{bufferSize + 100}, 20))
	all := slices.Repeat(paths, 5)
	outer := 0
	err := EachMulti(context.Background(), slices.Values(all), &Options{Workers: 1}, func(r Result) error {
		outer++
		if r.Index%30 != 0 {
			return r.Err
		}
		multi := 0
		err := EachMulti(context.Background(), slices.Values(paths), &Options{Workers: 1}, func(r Result) error {
			i := r.Index
			if want := md5.Sum(data[i]); r.Err != nil || !slices.Equal(r.Sum.Bytes(), want[:]) {
				t.Errorf("inner %s: %x, %v, want %x", r.Path, r.Sum.Bytes(), r.Err, want)
			}
			if r.MultiBuffer {
				multi++
			}
			return nil
		})
		if err != nil {
			return err
		}
		if multi == 0 {
			t.Error("the inner Each did not use multi-buffer MD5")
		}
		return r.Err
	})
	if err != nil || outer != len(all) {
		t.Fatalf("Each = %v after %d of %d results", err, outer, len(all))
	}
}

// An Each waiting for a multi-buffer lane, all of them taken by another
// Each's files blocked in read (FIFOs fed one buffer and a byte), returns
// when its context is cancelled: its workers waited for the lanes without
// looking at it.
func TestEachCancelWaitingForLane(t *testing.T) {
	if MultiBuffer() == "" {
		t.Skip("no multi-buffer MD5 here")
	}
	if n := len(simdServers(1)[0].free); n != simdLanes {
		t.Skipf("%d of %d lanes free: another test holds some", n, simdLanes)
	}
	dir := t.TempDir()
	fifos := make([]string, simdLanes)
	writers := make(chan *os.File, simdLanes)
	for i := range fifos {
		fifos[i] = filepath.Join(dir, "fifo"+strconv.Itoa(i))
		if err := syscall.Mkfifo(fifos[i], 0o600); err != nil {
			t.Fatal(err)
		}
		go func() {
			w, err := os.OpenFile(fifos[i], os.O_WRONLY, 0) // waits for the reader
			if err != nil {
				panic(err)
			}
			writers <- w
			w.Write(make([]byte, bufferSize+1)) // then the reader waits for more
		}()
	}
	var read atomic.Int64
	held := make(chan error, 1)
	go func() {
		held <- EachMulti(context.Background(), slices.Values(fifos), &Options{Workers: 1, Progress: &read}, nil)
	}()
	// A FIFO's byte after its first buffer is read through a lane.
	for read.Load() < int64(simdLanes*(bufferSize+1)) {
		runtime.Gosched()
	}

	paths, _ := writeFiles(t, slices.Repeat([]int{bufferSize + 100}, 20))
	ctx, cancel := context.WithCancel(context.Background())
	seq := func(yield func(string) bool) {
		for _, p := range paths {
			if !yield(p) {
				return
			}
		}
		cancel() // the workers have started, on the first path
	}
	n := 0
	err := EachMulti(ctx, seq, &Options{Workers: 1}, func(r Result) error {
		n++
		if !errors.Is(r.Err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled (no lane was free)", r.Path, r.Err)
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Each = %v after %d results, want context.Canceled", err, n)
	}
	for range fifos {
		(<-writers).Close()
	}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
}

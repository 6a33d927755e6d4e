package digest

import (
	"context"
	"iter"
	"sync/atomic"
	"time"
)

// Exported for testing only.

// EachTuned and FilesTuned are Each and Files with multi-buffer MD5 used
// from minPerCore files per core on, and reads of readSize bytes after its
// first buffer (0 for either: the default).
func EachTuned(ctx context.Context, a Algorithm, paths iter.Seq[string], opts *Options, fn func(Result) error, minPerCore, readSize int) error {
	return each(ctx, a, paths, opts, fn, testTuning(minPerCore, readSize))
}

func FilesTuned(ctx context.Context, a Algorithm, paths []string, opts *Options, minPerCore, readSize int) ([]Result, error) {
	return files(ctx, a, paths, opts, testTuning(minPerCore, readSize))
}

func testTuning(minPerCore, readSize int) tuning {
	t := defaultTuning()
	if minPerCore > 0 {
		t.multiMinPerCore = minPerCore
	}
	if readSize > 0 {
		t.multiReadSize = readSize
	}
	return t
}

// EachMulti is Each with multi-buffer MD5 (where the CPU has it) from one
// file per core on, decided on the first path with no time limit, so
// that a loaded machine cannot send the batch down the plain path.
func EachMulti(ctx context.Context, paths iter.Seq[string], opts *Options, fn func(Result) error) error {
	t := testTuning(1, 0)
	t.lookahead = time.Duration(1<<63 - 1)
	return each(ctx, MD5, paths, opts, fn, t)
}

// EachMultiHook is EachMulti with startFile called by a worker before it
// hashes each file.
func EachMultiHook(ctx context.Context, paths iter.Seq[string], opts *Options, fn func(Result) error, startFile func()) error {
	t := testTuning(1, 0)
	t.lookahead = time.Duration(1<<63 - 1)
	t.startFile = startFile
	return each(ctx, MD5, paths, opts, fn, t)
}

// FilesHook is FilesTuned (with the default read size) with delivered
// called with each result as Files takes it.
func FilesHook(ctx context.Context, a Algorithm, paths []string, opts *Options, minPerCore int, delivered func(Result)) ([]Result, error) {
	t := testTuning(minPerCore, 0)
	t.delivered = delivered
	return files(ctx, a, paths, opts, t)
}

// FilesCountWorkers is Files that also reports how many workers the batch
// started.
func FilesCountWorkers(ctx context.Context, a Algorithm, paths []string, opts *Options) ([]Result, int, error) {
	t := defaultTuning()
	var n atomic.Int64
	t.workerStarted = func() { n.Add(1) }
	res, err := files(ctx, a, paths, opts, t)
	return res, int(n.Load()), err
}

// EachCountWorkers is EachMulti (multi-buffer MD5 from one file per core,
// where the CPU has it) that also reports how many workers it started.
func EachCountWorkers(ctx context.Context, paths iter.Seq[string], opts *Options, fn func(Result) error) (int, error) {
	t := testTuning(1, 0)
	t.lookahead = time.Duration(1<<63 - 1)
	var n atomic.Int64
	t.workerStarted = func() { n.Add(1) }
	err := each(ctx, MD5, paths, opts, fn, t)
	return int(n.Load()), err
}

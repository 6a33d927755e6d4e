package digest

import (
	"context"
	"fmt"
	"hash"
	"io/fs"
	"iter"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Options tune Files and Each. The zero value (or nil) is ready to use.
type Options struct {
	// Workers bounds the files hashed at once; <= 0 means
	// runtime.GOMAXPROCS(0), and at most 256 are used. With plain hashing,
	// Workers goroutines each read and hash one file at a time, with a
	// 128 KiB buffer, so at most Workers cores are busy. With multi-buffer
	// MD5 it is the number of SIMD servers (at most runtime.NumCPU), each
	// with 16 goroutines that read one file at a time: the server hashes
	// the files of 128 KiB or more, up to 16 at once, and each goroutine
	// hashes the shorter ones itself with crypto/md5. So up to 16 files
	// per server are read or hashed at once, and more than Workers cores
	// can be busy (up to GOMAXPROCS, and reads in the kernel);
	// NoMultiBuffer keeps to Workers. A batch of fewer paths starts
	// fewer workers: one per path.
	Workers int
	// NoMultiBuffer disables multi-buffer SIMD MD5 (md5-simd): every file
	// is hashed by crypto/md5. Results are identical either way.
	NoMultiBuffer bool
	// Progress, if non-nil, has the size of every read added to it as
	// hashing proceeds, for progress reports from another goroutine.
	Progress *atomic.Int64
}

// maxWorkers caps Options.Workers: each worker holds a 128 KiB buffer.
const maxWorkers = 256

func (o *Options) workers() int {
	if o != nil && o.Workers > 0 {
		return min(o.Workers, maxWorkers)
	}
	return runtime.GOMAXPROCS(0)
}

// A Result is the outcome of hashing one file.
type Result struct {
	Index int    // position of Path in the input, from 0
	Path  string // the path as given
	Sum   Sum    // the digest, valid when Err is nil
	Size  int64  // bytes hashed
	// MultiBuffer reports that the digest was computed by multi-buffer
	// SIMD MD5 rather than crypto/md5 (the result is the same).
	MultiBuffer bool
	// Err is nil or the file's error: an *fs.PathError from open(2) or
	// read(2), or one wrapping the context's error if hashing was
	// cancelled. An error affects only its own file.
	Err error
}

// Files hashes the named files with bounded parallelism (see Each) and
// returns one Result per path, in the order of paths. Files that were not
// reached because ctx was cancelled carry ctx's error; the returned error
// is then ctx.Err(), and otherwise nil (a cancellation that came after
// every file was done is no error): per-file errors are only in the
// results.
func Files(ctx context.Context, a Algorithm, paths []string, opts *Options) ([]Result, error) {
	return files(ctx, a, paths, opts, defaultTuning())
}

func files(ctx context.Context, a Algorithm, paths []string, opts *Options, tun tuning) ([]Result, error) {
	results := make([]Result, len(paths))
	seen := 0
	err := each(ctx, a, slices.Values(paths), opts, func(r Result) error {
		results[r.Index] = r
		seen++
		if tun.delivered != nil {
			tun.delivered(r)
		}
		return nil
	}, tun)
	if err != nil {
		for i := seen; i < len(paths); i++ {
			results[i] = Result{Index: i, Path: paths[i], Err: &fs.PathError{Op: "open", Path: paths[i], Err: err}}
		}
	}
	return results, err
}

// Each hashes every path that paths yields, at most opts.Workers files
// at once (16 per SIMD server with multi-buffer MD5: see Options.Workers),
// and calls fn with each Result in the order of paths, from the goroutine
// that called Each, as soon as that result and all before it are ready.
// paths is consumed from another goroutine, a bounded window ahead of fn;
// memory stays bounded however many paths there are.
//
// MD5 over many files uses multi-buffer SIMD hashing where the CPU has it
// (see MultiBuffer); files smaller than 128 KiB and short batches
// (fewer than 8 files per worker) use crypto/md5, which is faster there.
// To tell, Each looks ahead up to 8 paths per worker, waiting at most
// 100 ms for them, so a slow or lazy iterator delays nothing for long.
//
// A nil paths has no files, and a nil fn takes the results and drops them.
// A file's error does not stop the others. If fn returns an error, Each
// stops and returns it. If ctx is cancelled, Each stops taking paths,
// reports the files in flight with errors wrapping ctx's error, and
// returns ctx.Err(); a cancellation that left nothing undone (it came
// once every path was taken and every file hashed) is no error, and Each
// then returns nil. A read blocked on a FIFO or slow device is not
// interrupted; cancellation is seen between reads.
//
// If paths panics or calls runtime.Goexit, Each stops the batch, waits
// for its goroutines, and does the same on the caller's goroutine (panic
// with the same value); fn is not called again. A panic in fn goes on up
// likewise once the batch has stopped.
//
// Calls of Each and Files may run at once, and fn may call them: they
// share the multi-buffer lanes file by file, and a file waiting for a
// lane stops waiting when ctx is cancelled.
func Each(ctx context.Context, a Algorithm, paths iter.Seq[string], opts *Options, fn func(Result) error) error {
	return each(ctx, a, paths, opts, fn, defaultTuning())
}

// tuning holds the thresholds of the many-files path. Files and Each use
// defaultTuning; tests and benchmarks construct others (export_test.go).
type tuning struct {
	// multiMinPerCore is how many files per core a batch needs before
	// multi-buffer MD5 is used: with fewer lanes filled, one SIMD core does
	// no better than crypto/md5 on one core.
	multiMinPerCore int
	// multiReadSize is the read size after the first buffer in the
	// multi-buffer path (BenchmarkReadSize varies it).
	multiReadSize int
	// lookahead bounds the wait for multiMinPerCore files per core.
	lookahead time.Duration
	// startFile, if non-nil, is called by a worker before it hashes a
	// file (tests count the files hashed at once).
	startFile func()
	// workerStarted, if non-nil, is called as each worker starts (tests
	// count them).
	workerStarted func()
	// delivered, if non-nil, is called by Files with each result once
	// it has it (tests cancel after the last).
	delivered func(Result)
}

func defaultTuning() tuning {
	return tuning{multiMinPerCore: 8, multiReadSize: bufferSize, lookahead: lookaheadWait}
}

func each(ctx context.Context, a Algorithm, paths iter.Seq[string], opts *Options, fn func(Result) error, tun tuning) error {
	if !a.Valid() {
		return fmt.Errorf("%w %d", ErrUnknownAlgorithm, uint8(a))
	}
	if fn == nil {
		fn = func(Result) error { return nil }
	}
	if paths == nil {
		paths = func(func(string) bool) {} // none
	}
	e := &engine{alg: a, cores: opts.workers(), readSize: tun.multiReadSize, lookahead: tun.lookahead, startFile: tun.startFile, workerStarted: tun.workerStarted}
	if opts != nil && opts.Progress != nil {
		e.progress = opts.Progress
	}
	useMulti := a == MD5 && simdISA != "" && (opts == nil || !opts.NoMultiBuffer)
	window := 4 * e.cores
	if useMulti {
		window = 2 * simdLanes * e.cores
		e.multiMin = tun.multiMinPerCore * e.cores
	}
	e.slots = make([]slot, window)
	e.jobs = make(chan int, window)
	e.order = make(chan int, window)
	e.window = make(chan struct{}, window)
	e.cond.L = &e.mu

	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	e.cancel.ctx = inner
	e.stop = cancel
	e.wg.Add(1) // the AfterFunc, waited for like the workers
	stop := context.AfterFunc(inner, func() {
		e.cancel.flag.Store(true)
		e.wg.Done()
	})

	go e.feed(inner, paths, useMulti)
	// If fn panics or calls runtime.Goexit, the batch stops before that
	// goes on up the caller's stack.
	returned := false
	defer func() {
		if !returned {
			cancel()
			for range e.order {
			}
			e.wait(stop)
		}
	}()
	var ferr error
	for idx := range e.order {
		s := &e.slots[idx]
		e.mu.Lock()
		for !s.ready {
			e.cond.Wait()
		}
		s.ready = false
		quit := e.iterPanicked || e.iterExited
		e.mu.Unlock()
		if ferr == nil && !quit {
			if err := fn(s.res); err != nil {
				ferr = err
				cancel()
			}
		}
		s.res = Result{}
		<-e.window
	}
	returned = true
	e.wait(stop)
	// order is closed: the iterator has returned and e.iter* are set.
	if e.iterPanicked {
		panic(e.iterPanic)
	}
	if e.iterExited {
		runtime.Goexit()
	}
	if ferr != nil {
		return ferr
	}
	if e.cancel.cut.Load() {
		// fn returned no error and paths did not panic: inner was
		// cancelled by ctx.
		return ctx.Err()
	}
	return nil
}

// wait waits for the workers and for the AfterFunc that stop stops, or
// that has run.
func (e *engine) wait(stop func() bool) {
	if stop() {
		e.wg.Done()
	}
	e.wg.Wait()
}

// canceller lets the hashing loops poll for cancellation cheaply.
type canceller struct {
	flag atomic.Bool
	ctx  context.Context
	// cut is set when the cancellation left work undone: a path not
	// taken, or a file that failed with the context's error. Each
	// returns ctx.Err() only then.
	cut atomic.Bool
}

func (c *canceller) check(op, path string) error {
	if c == nil || !c.flag.Load() {
		return nil
	}
	c.cut.Store(true)
	return &fs.PathError{Op: op, Path: path, Err: c.ctx.Err()}
}

// checkNow is check before a file is opened, once per file: it asks the
// context itself, since the flag is set by an AfterFunc, on a goroutine of
// its own, some time after the cancellation.
func (c *canceller) checkNow(op, path string) error {
	if err := c.ctx.Err(); err != nil {
		c.cut.Store(true)
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	return nil
}

type slot struct {
	res   Result
	ready bool // guarded by engine.mu
}

type engine struct {
	alg       Algorithm
	cores     int
	multiMin  int // files needed before multi-buffer hashing starts
	readSize  int // reads after the first buffer on the multi-buffer path
	lookahead time.Duration
	startFile func()
	// workerStarted, if non-nil, is called as each worker starts.
	workerStarted func()
	progress      progress
	cancel        canceller
	fds           descriptors // the run's files open

	// The workers: started so far, at most maxStarted (set by start), and
	// the SIMD servers of the multi-buffer ones. Only feed uses them.
	started, maxStarted int
	servers             []*simdServer

	slots  []slot
	jobs   chan int      // slot indices to hash
	order  chan int      // slot indices in input order
	window chan struct{} // one token per slot in use

	mu   sync.Mutex
	cond sync.Cond // signalled when a slot becomes ready
	wg   sync.WaitGroup
	stop context.CancelFunc

	// A panic or runtime.Goexit of paths, for Each to raise on its
	// caller's goroutine; guarded by mu.
	iterPanic    any
	iterPanicked bool
	iterExited   bool
}

// walk yields paths to dispatch until it returns false. A panic or
// runtime.Goexit of paths is recorded and stops the batch.
func (e *engine) walk(paths iter.Seq[string], dispatch func(string) bool) {
	returned := false
	defer func() {
		if returned {
			return
		}
		v := recover()
		e.mu.Lock()
		if v != nil {
			e.iterPanic, e.iterPanicked = v, true
		} else {
			e.iterExited = true // runtime.Goexit, which goes on
		}
		e.mu.Unlock()
		e.stop()
	}()
	for p := range paths {
		if !dispatch(p) {
			break
		}
	}
	returned = true
}

// feed dispatches paths to the workers, starting a worker with each of
// the first paths (up to the batch's number of workers) once it knows
// whether the batch is long enough for multi-buffer hashing.
func (e *engine) feed(ctx context.Context, paths iter.Seq[string], useMulti bool) {
	defer close(e.order)
	defer close(e.jobs)
	i := 0
	dispatch := func(p string) bool {
		// A select with both cases ready picks one at random: without
		// this check, a cancelled batch would go on taking paths.
		if ctx.Err() != nil {
			e.cancel.cut.Store(true) // p is not taken
			return false
		}
		select {
		case e.window <- struct{}{}:
		case <-ctx.Done():
			e.cancel.cut.Store(true)
			return false
		}
		idx := i % len(e.slots)
		e.slots[idx].res = Result{Index: i, Path: p}
		i++
		e.startWorker()
		e.jobs <- idx
		e.order <- idx
		return true
	}
	if !useMulti {
		e.start(false)
		e.walk(paths, dispatch)
		return
	}
	// Look ahead for enough paths to make multi-buffer hashing worth it,
	// but never hold paths back for long: the iterator runs on its own
	// goroutine, and after lookaheadWait whatever has arrived starts.
	// (A caller's iterator may itself wait for results, as a checker
	// reading a checksum list does.)
	pathCh := make(chan string)
	iterDone := make(chan struct{})
	go func() {
		defer close(iterDone)
		defer close(pathCh)
		e.walk(paths, func(p string) bool {
			select {
			case pathCh <- p:
				return true
			case <-ctx.Done():
				e.cancel.cut.Store(true) // p is not taken
				return false
			}
		})
	}()
	defer func() { <-iterDone }() // the iterator has returned when Each does
	timer := time.NewTimer(e.lookahead)
	defer timer.Stop()
	var head []string
collect:
	for len(head) < e.multiMin {
		select {
		case p, ok := <-pathCh:
			if !ok {
				break collect
			}
			head = append(head, p)
		case <-timer.C:
			break collect
		case <-ctx.Done():
			// The paths in head are not taken; the iterator's next
			// yield, if any, sees the cancellation itself.
			if len(head) > 0 {
				e.cancel.cut.Store(true)
			}
			return
		}
	}
	e.start(len(head) >= e.multiMin)
	for _, p := range head {
		if !dispatch(p) {
			return
		}
	}
	for p := range pathCh {
		if !dispatch(p) {
			return
		}
	}
}

// lookaheadWait bounds how long paths wait while Each decides whether a
// batch is long enough for multi-buffer MD5.
const lookaheadWait = 100 * time.Millisecond

// start decides how the batch is hashed, plain or multi-buffer, and how
// many workers it may have; the workers themselves start one per path as
// dispatch hands out the first ones (startWorker), so a batch of fewer
// paths than workers starts only as many as it has paths.
func (e *engine) start(multi bool) {
	if !multi {
		e.maxStarted = e.cores
		return
	}
	// More SIMD servers than CPUs would only compete for them.
	e.servers = simdServers(min(e.cores, runtime.NumCPU()))
	e.maxStarted = len(e.servers) * simdLanes
}

// startWorker starts one more worker, if the batch may have more; the
// multi-buffer ones go to the SIMD servers in turn. It runs on the
// feeding goroutine, before the path it was started for is dispatched.
func (e *engine) startWorker() {
	if e.started >= e.maxStarted {
		return
	}
	e.wg.Add(1)
	if e.servers == nil {
		go e.scalarWorker()
	} else {
		go e.multiWorker(e.servers[e.started%len(e.servers)])
	}
	e.started++
	if e.workerStarted != nil {
		e.workerStarted()
	}
}

func (e *engine) done(s *slot) {
	e.mu.Lock()
	s.ready = true
	e.mu.Unlock()
	e.cond.Signal()
}

func (e *engine) scalarWorker() {
	defer e.wg.Done()
	buf := getBuffer()
	defer putBuffer(buf)
	h := getHash(e.alg)
	defer putHash(e.alg, h)
	for idx := range e.jobs {
		s := &e.slots[idx]
		r := &s.res
		if err := e.cancel.checkNow("open", r.Path); err != nil {
			r.Err = err
		} else {
			if e.startFile != nil {
				e.startFile()
			}
			h.Reset()
			r.Size, r.Err = hashFile(e.alg, h, r.Path, buf[:], e.progress, &e.cancel, &e.fds, &r.Sum)
		}
		e.done(s)
	}
}

// multiWorker hashes files through a lane of a SIMD server. Files shorter
// than one buffer go to crypto/md5 instead: for them the round trip
// through the server costs more than it saves. (A file of exactly one
// buffer goes to the server: its end is seen only by the next read.)
func (e *engine) multiWorker(srv *simdServer) {
	defer e.wg.Done()
	buf := getBuffer()
	defer putBuffer(buf)
	h := getHash(MD5)
	defer putHash(MD5, h)
	for idx := range e.jobs {
		s := &e.slots[idx]
		r := &s.res
		if err := e.cancel.checkNow("open", r.Path); err != nil {
			r.Err = err
		} else {
			if e.startFile != nil {
				e.startFile()
			}
			r.Size, r.MultiBuffer, r.Err = e.hashFileMulti(r.Path, buf, h, srv, &r.Sum)
		}
		e.done(s)
	}
}

// hashFileMulti takes a lane of srv (its hashers are shared by every
// Each of the process) only for a file longer than its first buffer, and
// only while hashing it: a lane held across files would be held while
// the caller's fn runs, and an Each inside fn, or beside it, would wait
// for it for ever.
func (e *engine) hashFileMulti(path string, buf *buffer, h hash.Hash, srv *simdServer, s *Sum) (size int64, multi bool, err error) {
	f, err := e.fds.openFile(path)
	if err != nil {
		return 0, false, err
	}
	defer e.fds.close(f)
	// Fill the first buffer: a file that ends within it is hashed by h.
	n := 0
	eof := false
	for n < len(buf) {
		if err := e.cancel.check("read", path); err != nil {
			return int64(n), false, err
		}
		m, err := f.read(path, buf[n:])
		if err != nil {
			return int64(n), false, err
		}
		if m == 0 {
			eof = true
			break
		}
		n += m
		e.addProgress(m)
	}
	size = int64(n)
	if eof {
		h.Reset()
		h.Write(buf[:n])
		*s = finish(MD5, h, buf[:])
		return size, false, nil
	}
	var mh hash.Hash
	select {
	case mh = <-srv.free:
	case <-e.cancel.ctx.Done():
		e.cancel.cut.Store(true)
		return size, false, &fs.PathError{Op: "read", Path: path, Err: e.cancel.ctx.Err()}
	}
	defer func() { srv.free <- mh }()
	mh.Reset()
	mh.Write(buf[:n])
	for {
		if err := e.cancel.check("read", path); err != nil {
			return size, true, err
		}
		m, err := f.read(path, buf[:e.readSize])
		if err != nil {
			return size, true, err
		}
		if m == 0 {
			break
		}
		mh.Write(buf[:m])
		size += int64(m)
		e.addProgress(m)
	}
	*s = finish(MD5, mh, buf[:])
	return size, true, nil
}

func (e *engine) addProgress(n int) {
	if e.progress != nil {
		e.progress.Add(int64(n))
	}
}

// A simdServer is one md5-simd server with a free list of its hashers,
// which are reused (Reset) rather than created per file.
type simdServer struct {
	free chan hash.Hash
}

var simdPool struct {
	sync.Mutex
	servers []*simdServer
}

// simdServers returns n servers, starting any that do not exist yet. The
// servers live for the rest of the process and are shared by all calls.
func simdServers(n int) []*simdServer {
	simdPool.Lock()
	defer simdPool.Unlock()
	for len(simdPool.servers) < n {
		simdPool.servers = append(simdPool.servers, newSIMDServer())
	}
	return simdPool.servers[:n]
}

// MultiBuffer returns the instruction set multi-buffer MD5 uses on this
// machine: "avx512" (16 lanes per core), "avx2" (8 lanes per core) or ""
// when it is unavailable or the purego build tag is set.
func MultiBuffer() string { return simdISA }

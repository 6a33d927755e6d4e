package digest

import (
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
)

// descriptors counts the files a run has open, so that a worker out of
// file descriptors (EMFILE, ENFILE) waits for another of the run's files
// to close and tries again, instead of failing a file that md5sum, one
// file at a time, would have read. Only when none of the run's files is
// open does the error stand. A nil *descriptors opens and closes plainly.
type descriptors struct {
	open    atomic.Int64  // files open
	closed  atomic.Uint64 // files closed so far
	waiters atomic.Int64
	mu      sync.Mutex
	cond    sync.Cond // on mu: a file closed
}

func (d *descriptors) openFile(path string) (fileHandle, error) {
	if d == nil {
		return openFile(path)
	}
	for {
		seen := d.closed.Load()
		// Counted before it is opened, so that a worker out of
		// descriptors meanwhile sees a file open to wait for.
		d.open.Add(1)
		f, err := openFile(path)
		if err == nil {
			return f, nil
		}
		d.release(false) // not opened after all
		if !errors.Is(err, syscall.EMFILE) && !errors.Is(err, syscall.ENFILE) || !d.wait(seen) {
			return f, err
		}
	}
}

// wait waits until a file closes after seen closes; it returns false at
// once if none of the run's files is open.
func (d *descriptors) wait(seen uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cond.L == nil {
		d.cond.L = &d.mu
	}
	d.waiters.Add(1)
	defer d.waiters.Add(-1)
	for d.closed.Load() == seen {
		if d.open.Load() == 0 {
			return false
		}
		d.cond.Wait()
	}
	return true
}

func (d *descriptors) close(f fileHandle) {
	f.close()
	if d != nil {
		d.release(true)
	}
}

// release counts a file of the run closed, or not opened after all (then
// no descriptor was freed: closed says false), and wakes the workers
// waiting, which try again or, with none of the run's files open, give
// up.
func (d *descriptors) release(closed bool) {
	d.open.Add(-1)
	if closed {
		d.closed.Add(1)
	}
	if d.waiters.Load() > 0 {
		d.mu.Lock()
		d.cond.Broadcast()
		d.mu.Unlock()
	}
}

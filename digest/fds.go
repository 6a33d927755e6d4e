package digest

import "sync"

// descriptors counts the files a run has open, so that a worker out of
// file descriptors (EMFILE, ENFILE) waits for another of the run's files
// to close and tries again, instead of failing a file that md5sum, one
// file at a time, would have read. Only when none of the run's files is
// open does the error stand. A nil *descriptors opens and closes plainly.
//
// Both counts change together, under mu, so that a worker out of
// descriptors never sees a file that is closing as neither open nor
// closed, and gives up though a descriptor was just freed.
type descriptors struct {
	mu     sync.Mutex
	cond   sync.Cond // on mu: a file closed, or one was not opened after all
	open   int       // files open or being opened
	closed uint64    // files closed so far
}

func (d *descriptors) openFile(path string) (fileHandle, error) {
	if d == nil {
		return openFile(path)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cond.L == nil {
		d.cond.L = &d.mu
	}
	for {
		// Counted before it is opened, so that a worker out of
		// descriptors meanwhile sees a file open to wait for.
		seen := d.closed
		d.open++
		d.mu.Unlock()
		f, err := openFile(path)
		d.mu.Lock()
		if err == nil {
			return f, nil
		}
		d.open-- // not opened after all
		d.cond.Broadcast()
		if !outOfDescriptors(err) {
			return f, err
		}
		for d.closed == seen && d.open > 0 {
			d.cond.Wait()
		}
		if d.closed == seen {
			return f, err // none of the run's files is open
		}
	}
}

func (d *descriptors) close(f fileHandle) {
	f.close()
	if d == nil {
		return
	}
	d.mu.Lock()
	d.open--
	d.closed++
	d.cond.Broadcast()
	d.mu.Unlock()
}

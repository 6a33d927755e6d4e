package tooltest

import (
	"bytes"
	"errors"
	"sync"
)

// A Buffer is a bytes.Buffer that a process, a server or a command's
// goroutine writes while a test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what has been written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A FailingWriter takes its first N bytes, then fails with ErrFull: a
// full disk, a closed pipe. It keeps what it took in Got and counts in
// After the writes tried after the one that failed.
type FailingWriter struct {
	N      int
	Got    bytes.Buffer
	Failed bool
	After  int
}

// ErrFull is a FailingWriter's error.
var ErrFull = errors.New("log device full")

func (w *FailingWriter) Write(p []byte) (int, error) {
	if w.Failed {
		w.After++
		return 0, ErrFull
	}
	if room := w.N - w.Got.Len(); len(p) > room {
		w.Failed = true
		w.Got.Write(p[:room])
		return room, ErrFull
	}
	return w.Got.Write(p)
}

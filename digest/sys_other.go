//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package digest

import (
	"errors"
	"io"
	"os"
)

type fileHandle struct{ f *os.File }

func openFile(path string) (fileHandle, error) {
	f, err := os.Open(path)
	return fileHandle{f}, err
}

// read reads into p; it returns 0, nil at end of file.
func (h fileHandle) read(path string, p []byte) (int, error) {
	n, err := h.f.Read(p)
	if errors.Is(err, io.EOF) {
		return n, nil
	}
	return n, err
}

func (h fileHandle) close() { h.f.Close() }

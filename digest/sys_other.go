//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package digest

import (
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
	if err == io.EOF { // os.File returns io.EOF itself at the end
		return n, nil
	}
	return n, err
}

func (h fileHandle) close() { h.f.Close() }

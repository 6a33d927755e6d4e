//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package digest

import (
	"io/fs"
	"syscall"
)

// On these systems files are read through raw file descriptors: os.Open
// allocates three objects per file (File, its inner state and the path
// bytes) where syscall.Open allocates only the NUL-terminated path, and
// the read loop needs nothing else from os.File. Regular files never
// block in the netpoller, so nothing is lost.

type fileHandle int

func openFile(path string) (fileHandle, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return fileHandle(fd), nil
	}
}

// read reads into p; it returns 0, nil at end of file.
func (f fileHandle) read(path string, p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(f), p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		return n, nil
	}
}

func (f fileHandle) close() { syscall.Close(int(f)) }

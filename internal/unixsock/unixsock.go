//go:build !plan9

// Package unixsock listens on Unix domain sockets as Postfix's servers
// do: a socket file left by a server that is gone is taken over.
package unixsock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"syscall"
)

// Listen listens on the Unix socket path with lc. A socket file there
// that nobody listens on (a connection to it is refused: its server died
// without removing it) is removed and listened on anew; a live socket,
// or a file that is not a socket, is left alone, and its error returned,
// saying which. So is a path too long for a socket's address.
//
// The listener (a *net.UnixListener) does not remove its file when it
// closes, as net's would whether or not the file is still its own; remove
// removes it only if it is: a server that started at path after this
// one's file was deleted keeps its socket. remove may be called more than
// once, before or after the listener closes.
func Listen(ctx context.Context, lc *net.ListenConfig, path string) (ln net.Listener, remove func(), err error) {
	ln, err = lc.Listen(ctx, "unix", path)
	if err != nil && errors.Is(err, syscall.EADDRINUSE) {
		// One look at what holds the path: a live server sees one
		// connection, opened and closed at once, and no more.
		switch what, fi := probe(path); what {
		case notSocket:
			err = fmt.Errorf("%w (%s is a %s, not a socket)", err, path, kind(fi.Mode()))
		case live:
			err = fmt.Errorf("%w (a server is listening on it)", err)
		case stale:
			os.Remove(path)
			ln, err = lc.Listen(ctx, "unix", path)
		}
	}
	if err != nil && errors.Is(err, syscall.EINVAL) && sunPath > 0 && len(path) >= sunPath {
		err = fmt.Errorf("%w (the path is %d bytes; a socket's is at most %d)", err, len(path), sunPath-1)
	}
	if err != nil {
		return nil, nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	// An abstract socket (@name) has no file: a file of that name in
	// the working directory is another's, not to be removed.
	made, serr := lstat(path)
	remove = func() {
		if fi, err := lstat(path); serr == nil && err == nil && os.SameFile(made, fi) {
			os.Remove(path)
		}
	}
	return ln, remove, nil
}

// abstract reports whether path names an abstract socket (Linux's
// @NAME), which net listens on and dials without a file.
func abstract(path string) bool {
	return strings.HasPrefix(path, "@") && (runtime.GOOS == "linux" || runtime.GOOS == "android")
}

// lstat is os.Lstat of path's file, or an error matching os.ErrNotExist
// for an abstract socket, which has none (a file of its name in the
// working directory is not its).
func lstat(path string) (os.FileInfo, error) {
	if abstract(path) {
		return nil, &os.PathError{Op: "lstat", Path: path, Err: os.ErrNotExist}
	}
	return os.Lstat(path)
}

// kind names the type of file of mode.
func kind(mode os.FileMode) string {
	switch {
	case mode.IsDir():
		return "directory"
	case mode.IsRegular():
		return "regular file"
	}
	return "file of mode " + mode.Type().String()
}

// What a probe found at a path.
const (
	unknown   = iota // nothing, or nothing known: left alone
	notSocket        // a file that is not a socket
	live             // a socket a server listens on
	stale            // a socket nobody listens on: a connection is refused
)

// probe looks at path: its file, and if that is a socket (or path names
// an abstract one, @NAME, which has no file), what one connection to it,
// the only one, finds. fi is the file's, if any.
func probe(path string) (what int, fi os.FileInfo) {
	fi, err := lstat(path)
	switch {
	case err != nil && !abstract(path):
		return unknown, nil
	case err == nil && fi.Mode().Type() != os.ModeSocket:
		return notSocket, fi
	}
	c, err := net.Dial("unix", path)
	switch {
	case err == nil:
		c.Close()
		return live, fi
	case fi != nil && errors.Is(err, syscall.ECONNREFUSED):
		return stale, fi
	}
	return unknown, fi
}

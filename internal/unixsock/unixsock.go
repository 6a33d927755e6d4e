// Package unixsock listens on Unix domain sockets as Postfix's servers
// do: a socket file left by a server that is gone is taken over.
package unixsock

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
)

// Listen listens on the Unix socket path with lc. A socket file there
// that nobody listens on (a connection to it is refused: its server died
// without removing it) is removed and listened on anew; a live socket,
// or a file that is not a socket, is left alone, and its error returned.
func Listen(ctx context.Context, lc *net.ListenConfig, path string) (net.Listener, error) {
	ln, err := lc.Listen(ctx, "unix", path)
	if err != nil && errors.Is(err, syscall.EADDRINUSE) && stale(path) {
		os.Remove(path)
		ln, err = lc.Listen(ctx, "unix", path)
	}
	return ln, err
}

// stale reports whether path is a Unix socket that nobody listens on.
func stale(path string) bool {
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != os.ModeSocket {
		return false
	}
	c, err := net.Dial("unix", path)
	if err == nil {
		c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// Package unixsock listens on Unix domain sockets as Postfix's servers
// do: a socket file left by a server that is gone is taken over.
package unixsock

import (
	"context"
	"errors"
	"net"
)

// Listen fails: Plan 9 has no Unix domain sockets.
func Listen(ctx context.Context, lc *net.ListenConfig, path string) (ln net.Listener, remove func(), err error) {
	return nil, nil, &net.OpError{Op: "listen", Net: "unix", Addr: &net.UnixAddr{Name: path, Net: "unix"}, Err: errors.ErrUnsupported}
}

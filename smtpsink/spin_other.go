//go:build !unix

package smtpsink

import (
	"io"
	"net"
)

// newSpinner returns nil: Config.Spin needs non-blocking reads (Unix).
func newSpinner(net.Conn, *Server) io.Reader { return nil }

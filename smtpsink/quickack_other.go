//go:build !linux

package smtpsink

import (
	"net"
	"syscall"
)

// ackNow does nothing: TCP_QUICKACK is Linux's.
func ackNow(syscall.RawConn) error { return nil }

// rawConn returns nil: ackNow needs no socket here.
func rawConn(net.Conn) syscall.RawConn { return nil }

//go:build unix

package smtpsource

import (
	"context"
	"net"
	"syscall"
	"testing"
)

// WindowSize (smtp-source -T): the socket's buffers are set before the
// connect (Linux reports twice the size set, for its bookkeeping).
func TestWindowSize(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	cfg := Config{WindowSize: 8192}
	c, err := Dialer(&cfg)(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var rcv, snd int
	var gerr error
	rc.Control(func(fd uintptr) {
		rcv, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
		if gerr == nil {
			snd, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF)
		}
	})
	if gerr != nil || (rcv != 8192 && rcv != 16384) || (snd != 8192 && snd != 16384) {
		t.Errorf("SO_RCVBUF %d, SO_SNDBUF %d, %v; want 8192 (or twice that)", rcv, snd, gerr)
	}
}

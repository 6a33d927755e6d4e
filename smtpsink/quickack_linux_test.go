package smtpsink

import (
	"net"
	"testing"
)

// ackNow works on a real TCP connection, and rawConn finds none in a
// connection that is not TCP.
func TestAckNowTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sc, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer sc.Close()
	rc := rawConn(sc)
	if rc == nil {
		t.Fatal("rawConn: nil for a TCP connection")
	}
	if err := ackNow(rc); err != nil {
		t.Errorf("ackNow: %v", err)
	}
	p, q := net.Pipe()
	defer p.Close()
	defer q.Close()
	if rawConn(p) != nil {
		t.Error("rawConn: not nil for net.Pipe")
	}
}

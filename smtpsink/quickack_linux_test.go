package smtpsink

import (
	"net"
	"testing"
)

// A quickAck works on a real TCP connection without allocating, and there
// is none for a connection that is not TCP.
func TestQuickAckTCP(t *testing.T) {
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
	q := newQuickAck(sc)
	if q == nil {
		t.Fatal("newQuickAck: nil for a TCP connection")
	}
	if err := q.ack(); err != nil {
		t.Errorf("ack: %v", err)
	}
	if n := testing.AllocsPerRun(100, func() { q.ack() }); n != 0 {
		t.Errorf("ack: %v allocations", n)
	}
	sc.Close()
	if err := q.ack(); err == nil {
		t.Error("ack on a closed connection: no error")
	}
	p, r := net.Pipe()
	defer p.Close()
	defer r.Close()
	if newQuickAck(p) != nil {
		t.Error("newQuickAck: not nil for net.Pipe")
	}
}

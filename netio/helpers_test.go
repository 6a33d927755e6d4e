package netio

import (
	"math/rand/v2"
	"net"
	"testing"
)

// tcpPair returns the two ends of a loopback TCP connection, closed at the
// end of the test.
func tcpPair(t testing.TB) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() { c, err := ln.Accept(); ch <- res{c, err} }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { c.Close(); r.c.Close() })
	return c.(*net.TCPConn), r.c.(*net.TCPConn)
}

// messages returns n messages of sizes in [1, maxSize] with recognisable
// content, and their concatenation.
func messages(seed uint64, n, maxSize int) (msgs [][]byte, all []byte) {
	r := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i < n; i++ {
		m := make([]byte, 1+r.IntN(maxSize))
		for j := range m {
			m[j] = byte(r.Uint32())
		}
		msgs = append(msgs, m)
		all = append(all, m...)
	}
	return msgs, all
}

// readAll reads from c until EOF in a goroutine; the result arrives on the
// returned channel.
func readAll(c net.Conn) <-chan []byte {
	ch := make(chan []byte, 1)
	go func() {
		var buf []byte
		b := make([]byte, 64<<10)
		for {
			n, err := c.Read(b)
			buf = append(buf, b[:n]...)
			if err != nil {
				ch <- buf
				return
			}
		}
	}()
	return ch
}

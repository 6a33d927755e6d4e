package netio_test

import (
	"bufio"
	"bytes"
	"fmt"
	"log"
	"net"
	"strings"

	"github.com/wirespeed/wirespeed/netio"
)

// A line server on event loops: each complete line is answered with its
// length, and the answers to the lines of one read leave in one write.
func ExampleServe() {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		log.Fatal(err)
	}
	handler := func(c *netio.LoopConn, in []byte) (used int) {
		for {
			i := bytes.IndexByte(in[used:], '\n')
			if i < 0 {
				return used // a partial line comes back with the next bytes
			}
			fmt.Fprintf(c, "%d\n", i)
			used += i + 1
		}
	}
	srv, err := netio.Serve(ln, handler, &netio.LoopOptions{
		OnOpen: func(c *netio.LoopConn) { c.WriteString("hello\n") },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	c, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("one\nthree\npar"))
	c.Write([]byte("tial\n"))
	r := bufio.NewReader(c)
	for range 4 {
		line, _ := r.ReadString('\n')
		fmt.Print(line)
	}
	// Output:
	// hello
	// 3
	// 5
	// 7
}

// A Handler that hands each request to a worker goroutine, which answers
// through Do on the connection's loop.
func ExampleLoopConn_Do() {
	type request struct {
		c    *netio.LoopConn
		line string
	}
	work := make(chan request, 64) // a queue, so that the Handler does not wait for the worker
	go func() {
		for req := range work {
			resp := strings.ToUpper(req.line) // the slow part, off the loop
			req.c.Do(func(c *netio.LoopConn) { c.WriteString(resp) })
		}
	}()
	defer close(work)

	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := netio.Serve(ln, func(c *netio.LoopConn, in []byte) int {
		k := bytes.LastIndexByte(in, '\n') + 1
		if k > 0 {
			work <- request{c, string(in[:k])}
		}
		return k
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	c, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("hello, loop\n"))
	line, _ := bufio.NewReader(c).ReadString('\n')
	fmt.Print(line)
	// Output:
	// HELLO, LOOP
}

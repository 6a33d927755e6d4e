package netio_test

import (
	"bufio"
	"bytes"
	"fmt"
	"log"
	"net"

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

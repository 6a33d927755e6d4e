//go:build unix

package netio_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"time"

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

// A server that delays each reply, as a tarpit or a test sink does: a
// timer on the loop answers each line 10 ms after it came, with no
// goroutine and no sleep.
func ExampleLoopConn_AfterFunc() {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := netio.Serve(ln, func(c *netio.LoopConn, in []byte) (used int) {
		for {
			k := bytes.IndexByte(in[used:], '\n') + 1
			if k == 0 {
				return used
			}
			reply := "250 " + string(in[used:used+k])
			c.AfterFunc(10*time.Millisecond, func(c *netio.LoopConn) { c.WriteString(reply) })
			used += k
		}
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
	c.Write([]byte("one\ntwo\n"))
	r := bufio.NewReader(c)
	for range 2 {
		line, _ := r.ReadString('\n')
		fmt.Print(line)
	}
	// Output:
	// 250 one
	// 250 two
}

// A command must arrive whole within a minute of the last answer, however
// slowly its bytes come; a client that takes longer is told so and
// closed.
func ExampleLoopConn_SetDeadline() {
	handler := func(c *netio.LoopConn, in []byte) int {
		k := bytes.LastIndexByte(in, '\n') + 1
		if k > 0 {
			c.Write(in[:k])
			c.SetDeadline(time.Now().Add(time.Minute))
		}
		return k
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := netio.Serve(ln, handler, &netio.LoopOptions{
		OnOpen:    func(c *netio.LoopConn) { c.SetDeadline(time.Now().Add(time.Minute)) },
		OnTimeout: func(c *netio.LoopConn, err error) { c.WriteString("421 timeout\r\n") },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	fmt.Println("serving")
	// Output:
	// serving
}

// A Handler gives a connection to a goroutine that blocks: here one that
// copies its input back, as crypto/tls or a blocking backend would take it
// after a STARTTLS or an upgrade. The bytes after the command line were
// read by the loop and go with the connection.
func ExampleLoopConn_Detach() {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := netio.Serve(ln, func(c *netio.LoopConn, in []byte) int {
		k := bytes.IndexByte(in, '\n') + 1
		if k == 0 {
			return 0
		}
		c.WriteString("detached\n")
		nc, err := c.Detach()
		if err != nil {
			c.Close()
			return len(in)
		}
		go func() {
			defer nc.Close()
			io.Copy(nc, nc)
		}()
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
	c.Write([]byte("UPGRADE\nhello\n"))
	c.(*net.TCPConn).CloseWrite()
	all, _ := io.ReadAll(c)
	fmt.Print(string(all))
	// Output:
	// detached
	// hello
}

// Shutdown stops accepting and closes each connection once its output is
// sent; a context bounds the wait.
func ExampleLoops_Shutdown() {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := netio.Serve(ln, func(c *netio.LoopConn, in []byte) int {
		c.Write(in)
		return len(in)
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	c, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("last words\n"))
	line, _ := bufio.NewReader(c).ReadString('\n')
	fmt.Print(line)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fmt.Println(srv.Shutdown(ctx))
	// Output:
	// last words
	// <nil>
}

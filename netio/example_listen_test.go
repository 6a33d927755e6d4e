//go:build unix

package netio_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"

	"github.com/wirespeed/wirespeed/netio"
)

func echoLoop(c *netio.LoopConn, in []byte) int {
	c.Write(in)
	if c.EOF() {
		c.Close()
	}
	return len(in)
}

// One server on a TCP port and a Unix domain socket: AddListener adds
// listeners to loops that NewLoops started.
func ExampleLoops_AddListener() {
	srv, err := netio.NewLoops(echoLoop, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "netio")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ul, err := net.Listen("unix", filepath.Join(dir, "echo.sock"))
	if err != nil {
		log.Fatal(err)
	}
	for _, ln := range []net.Listener{tl, ul} {
		if err := srv.AddListener(ln); err != nil {
			log.Fatal(err)
		}
	}
	for _, a := range srv.Addrs() {
		c, err := net.Dial(a.Network(), a.String())
		if err != nil {
			log.Fatal(err)
		}
		fmt.Fprintf(c, "over %s\n", a.Network())
		line, _ := bufio.NewReader(c).ReadString('\n')
		fmt.Print(line)
		c.Close()
	}
	// Output:
	// over tcp
	// over unix
}

// A client connection on the loops: Dial connects without blocking a
// loop, OnOpen greets the peer before Dial returns, and the Handler
// gets the peer's answers; the caller writes to it through Do.
func ExampleLoops_Dial() {
	peer, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer peer.Close()
	peerDone := make(chan struct{})
	go func() { // an echo server of the standard library
		defer close(peerDone)
		c, err := peer.Accept()
		if err != nil {
			return
		}
		b := make([]byte, 512)
		for {
			n, err := c.Read(b)
			if _, werr := c.Write(b[:n]); err != nil || werr != nil {
				break
			}
		}
		c.Close()
	}()

	got := make(chan string, 1)
	var buf []byte
	srv, err := netio.NewLoops(func(c *netio.LoopConn, in []byte) int {
		buf = append(buf, in...)
		if len(buf) == len("hello\nworld\n") {
			got <- string(buf)
			c.Close()
		}
		return len(in)
	}, &netio.LoopOptions{OnOpen: func(c *netio.LoopConn) { c.WriteString("hello\n") }})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c, err := srv.Dial(context.Background(), "tcp", peer.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	c.Do(func(c *netio.LoopConn) { c.WriteString("world\n") })
	fmt.Print(<-got)
	<-peerDone // the Handler's Close ended the peer's stream
	// Output:
	// hello
	// world
}

// The counts of a server, read while it serves.
func ExampleLoops_Stats() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv, err := netio.Serve(ln, echoLoop, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	c.Write([]byte("ping\n"))
	bufio.NewReader(c).ReadString('\n')
	st := srv.Stats()
	fmt.Println("open", st.Open, "accepted", st.Accepted)
	c.(*net.TCPConn).CloseWrite() // the echo closes at the end of the stream
	io.ReadAll(c)
	c.Close()
	srv.Close() // the counts are final once Close returns
	st = srv.Stats()
	fmt.Println("open", st.Open, "closed after the peer's end", st.Closed.Peer)
	// Output:
	// open 1 accepted 1
	// open 0 closed after the peer's end 1
}

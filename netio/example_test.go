package netio_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/wirespeed/wirespeed/netio"
	"github.com/wirespeed/wirespeed/textproto"
)

// serveLines answers each "\n"-terminated request on c with "OK " and the
// request. The responses to pipelined requests go out together: the
// Conn's Read writes them with one writev when it finds nothing more to
// read, in this goroutine.
func serveLines(c net.Conn) {
	conn := netio.NewConn(c, nil)
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		conn.WriteString("OK " + line) // no Flush needed
	}
}

func Example() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			serveLines(c)
		}
	}()

	c, _ := net.Dial("tcp", ln.Addr().String())
	defer c.Close()
	c.Write([]byte("one\ntwo\nthree\n")) // three pipelined requests
	r := bufio.NewReader(c)
	for i := 0; i < 3; i++ {
		resp, _ := r.ReadString('\n')
		fmt.Print(resp)
	}
	// Output:
	// OK one
	// OK two
	// OK three
}

// A text protocol server (SMTP, NNTP, ...) built on textproto.NewConn gets
// coalesced writes by handing it a netio.Conn: textproto flushes its
// bufio.Writer after every line, which costs a copy instead of a system call.
// wirespeed's textproto (a drop-in net/textproto) is shown; the standard
// library's composes the same way.
func ExampleNewConn_textproto() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		tc := textproto.NewConn(netio.NewConn(c, nil))
		defer tc.Close()
		tc.PrintfLine("200 ready")
		for {
			line, err := tc.ReadLine()
			if err != nil {
				return
			}
			tc.PrintfLine("250 %s accepted", line)
		}
	}()

	c, _ := net.Dial("tcp", ln.Addr().String())
	client := textproto.NewConn(c)
	defer client.Close()
	c.Write([]byte("a\r\nb\r\nc\r\n")) // pipelined commands
	for i := 0; i < 4; i++ {
		line, _ := client.ReadLine()
		fmt.Println(line)
	}
	// Output:
	// 200 ready
	// 250 a accepted
	// 250 b accepted
	// 250 c accepted
}

// A Writer with a bounded queue that fails instead of blocking: a server can
// shed load for a client that does not read.
func ExampleWriter_nonBlocking() {
	w := netio.NewWriter(io.Discard, &netio.Options{MaxQueued: 64 << 10, NonBlocking: true})
	defer w.Close()
	if _, err := w.Write(make([]byte, 100<<10)); errors.Is(err, netio.ErrTooLarge) {
		fmt.Println(err)
	}
	// Output: netio: message larger than the send queue bound
}

// Sending a file: io.Copy to a Conn flushes queued writes, then the file goes
// out with sendfile.
func ExampleCopy() {
	dir, _ := os.MkdirTemp("", "netio")
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "body.txt")
	os.WriteFile(name, []byte("file body\n"), 0o600)

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		conn := netio.NewConn(c, nil)
		conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		conn.WriteString("header\n")
		f, _ := os.Open(name)
		netio.Copy(conn, f)
		f.Close()
		conn.Close()
	}()
	c, _ := net.Dial("tcp", ln.Addr().String())
	defer c.Close()
	b, _ := io.ReadAll(c)
	fmt.Print(string(b))
	// Output:
	// header
	// file body
}

// TCP_NOTSENT_LOWAT keeps unsent data in the Writer, where backpressure
// sees it; the net package sets the other options.
func ExampleSetNotSentLowat() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	c, _ := net.Dial("tcp", ln.Addr().String())
	defer c.Close()
	err := netio.SetNotSentLowat(c, 16<<10) // Linux only
	if errors.Is(err, errors.ErrUnsupported) {
		fmt.Println("16384") // elsewhere
		return
	}
	o, _ := netio.GetSockOpts(c)
	fmt.Println(o.NotSentLowat)
	// Output: 16384
}

// GetSockOpts reads back what the kernel made of the options set through
// the net package.
func ExampleGetSockOpts() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	c, _ := net.Dial("tcp", ln.Addr().String())
	defer c.Close()
	tc := c.(*net.TCPConn)
	tc.SetNoDelay(true)
	tc.SetWriteBuffer(256 << 10)
	o, err := netio.GetSockOpts(netio.NewConn(c, nil)) // a Conn is seen through
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.NoDelay, o.SendBuffer >= 256<<10) // Linux reports twice the size set
	// Output: true true
}

// A Writer works on any io.Writer. Write copies and returns; Flush waits
// until everything reached the destination.
func ExampleNewWriter() {
	var out bytes.Buffer
	w := netio.NewWriter(&out, nil)
	for i := range 3 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	fmt.Print(out.String())
	s := w.Stats()
	fmt.Println(s.Writes, s.Accepted, s.Written)
	w.Close()
	// Output:
	// line 0
	// line 1
	// line 2
	// 3 21 21
}

// Close gives a peer that does not read Options.Linger to take the queue,
// then closes the connection anyway and says data was left.
func ExampleConn_Close() {
	c, peer := net.Pipe() // buffers nothing: data waits until the peer reads
	defer peer.Close()
	conn := netio.NewConn(c, &netio.Options{Linger: 10 * time.Millisecond})
	conn.WriteString("never read\n")
	err := conn.Close()
	s := conn.Stats()
	fmt.Println(err, s.Accepted-s.Written)
	// Output: netio: connection closed with queued data unsent 11
}

// A client that ends its request with a half-close, as a proxy passes on
// its source's end: the server reads the request to its end, then
// answers on the same connection.
func ExampleConn_CloseWrite() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		req, _ := io.ReadAll(c) // to the client's end of stream
		fmt.Fprintf(c, "got %d bytes", len(req))
	}()

	c, _ := net.Dial("tcp", ln.Addr().String())
	conn := netio.NewConn(c, nil)
	defer conn.Close()
	conn.WriteString("the whole request")
	if err := conn.CloseWrite(); err != nil { // sends it, then the end of stream
		fmt.Println(err)
		return
	}
	resp, _ := io.ReadAll(conn)
	_, err := conn.WriteString("more")
	fmt.Printf("%s; %v\n", resp, err)
	// Output: got 17 bytes; netio: write after CloseWrite
}

// An echo server whose idle connections hold no read buffer: ReadPooled
// takes one from a pool once the socket has data, and the echo written
// back is sent by the next ReadPooled, in this goroutine, before it waits.
func ExampleConn_ReadPooled() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		conn := netio.NewConn(c, nil)
		defer conn.Close()
		for {
			b, err := conn.ReadPooled() // valid until the next call
			conn.Write(b)               // a copy, sent when the loop reads again
			if err != nil {
				return
			}
		}
	}()

	c, _ := net.Dial("tcp", ln.Addr().String())
	defer c.Close()
	for _, msg := range []string{"ping\n", "pong\n"} {
		c.Write([]byte(msg))
		resp := make([]byte, len(msg))
		io.ReadFull(c, resp)
		fmt.Print(string(resp))
	}
	// Output:
	// ping
	// pong
}

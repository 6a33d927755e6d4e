//go:build unix

package netio_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/selfsigned"
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
// closed. (c.Now is the loop's time at its wake-up, read once for all
// its connections.)
func ExampleLoopConn_SetDeadline() {
	handler := func(c *netio.LoopConn, in []byte) int {
		k := bytes.LastIndexByte(in, '\n') + 1
		if k > 0 {
			c.Write(in[:k])
			c.SetDeadline(c.Now().Add(time.Minute))
		}
		return k
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := netio.Serve(ln, handler, &netio.LoopOptions{
		OnOpen:    func(c *netio.LoopConn) { c.SetDeadline(c.Now().Add(time.Minute)) },
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

// An SMTP-like upgrade on event loops: STARTTLS is answered in the clear,
// then StartTLS runs the handshake; from then on the Handler reads and
// writes plaintext, and the loop seals and opens the records.
func ExampleLoopConn_StartTLS() {
	cert, err := selfsigned.Server("localhost")
	if err != nil {
		log.Fatal(err)
	}
	srvCfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		log.Fatal(err)
	}
	handler := func(c *netio.LoopConn, in []byte) (used int) {
		for {
			i := bytes.IndexByte(in[used:], '\n')
			if i < 0 {
				return used
			}
			line := in[used : used+i]
			used += i + 1
			if string(line) == "STARTTLS" {
				c.WriteString("220 go ahead\n")
				c.StartTLS(srvCfg) // what follows in the clear is dropped
				return used
			}
			_, tlsOn := c.ConnectionState()
			fmt.Fprintf(c, "%s (TLS %v)\n", line, tlsOn)
		}
	}
	srv, err := netio.Serve(ln, handler, &netio.LoopOptions{
		OnHandshake: func(c *netio.LoopConn, err error) {
			if err != nil {
				log.Print(err) // the connection is closed
			}
		},
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
	r := bufio.NewReader(c)
	c.Write([]byte("hello\nSTARTTLS\n"))
	for range 2 {
		line, _ := r.ReadString('\n')
		fmt.Print(line)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	tc := tls.Client(c, &tls.Config{RootCAs: pool, ServerName: "localhost"})
	tc.Write([]byte("hello again\n"))
	line, _ := bufio.NewReader(tc).ReadString('\n')
	fmt.Print(line)
	// Output:
	// hello (TLS false)
	// 220 go ahead
	// hello again (TLS true)
}

// Implicit TLS on event loops: every connection's handshake runs first,
// then OnOpen greets it, sealed.
func ExampleLoopOptions_tLSConfig() {
	cert, err := selfsigned.Server("localhost")
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := netio.Serve(ln, func(c *netio.LoopConn, in []byte) int {
		c.Write(in) // plaintext in, plaintext out
		return len(in)
	}, &netio.LoopOptions{
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"echo"}},
		OnOpen: func(c *netio.LoopConn) {
			st, _ := c.ConnectionState()
			fmt.Fprintf(c, "hello over %s, %s\n", tls.VersionName(st.Version), st.NegotiatedProtocol)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	c, err := tls.Dial("tcp", srv.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{"echo"}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	line, _ := r.ReadString('\n')
	fmt.Print(line)
	c.Write([]byte("echo me\n"))
	line, _ = r.ReadString('\n')
	fmt.Print(line)
	// Output:
	// hello over TLS 1.3, echo
	// echo me
}

package netio_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/netio"
)

// A line server on loops started before their listener, with its limits
// set: a client that sends a line longer than MaxInput is cut off, and
// OnClose learns why.
func ExampleNewLoops() {
	closed := make(chan error, 1)
	srv, err := netio.NewLoops(func(c *netio.LoopConn, in []byte) int {
		used := 0
		for {
			i := bytes.IndexByte(in[used:], '\n')
			if i < 0 {
				break
			}
			line := in[used : used+i]
			used += i + 1
			if _, err := c.Write(append(bytes.ToUpper(line), '\n')); err != nil {
				c.Close() // ErrQueueFull: the client does not read its replies
				return len(in)
			}
		}
		if c.EOF() {
			c.Close()
		}
		return used // a partial line waits for its end, up to MaxInput
	}, &netio.LoopOptions{
		MaxInput:     1024,
		MaxQueued:    64 << 10,
		IdleTimeout:  time.Minute,
		WriteTimeout: 10 * time.Second,
		OnClose:      func(c *netio.LoopConn, err error) { closed <- err },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close() // closes the listener too
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.AddListener(ln); err != nil {
		ln.Close()
		log.Fatal(err)
	}

	c, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "hello\n")
	reply, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(reply)
	c.Write(bytes.Repeat([]byte("x"), 4096)) // no line end in sight
	io.Copy(io.Discard, c)                   // until the server closes
	err = <-closed
	fmt.Println(errors.Is(err, netio.ErrInputTooLarge))
	// Output:
	// HELLO
	// true
}

// Each connection's own state (here, the name it gave) lives in its
// Value, set by OnOpen before the Handler's first call.
func ExampleLoopConn_SetValue() {
	type session struct {
		name     string
		commands int
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv, err := netio.Serve(ln, func(c *netio.LoopConn, in []byte) int {
		s := c.Value().(*session)
		used := 0
		for {
			i := bytes.IndexByte(in[used:], '\n')
			if i < 0 {
				break
			}
			cmd := string(in[used : used+i])
			used += i + 1
			s.commands++
			switch {
			case strings.HasPrefix(cmd, "NAME "):
				s.name = strings.TrimPrefix(cmd, "NAME ")
				fmt.Fprintf(c, "250 hello %s\n", s.name)
			case cmd == "WHO":
				fmt.Fprintf(c, "250 %s, command %d\n", s.name, s.commands)
			default:
				fmt.Fprintf(c, "500 unknown command\n")
			}
		}
		if c.EOF() {
			c.Close()
		}
		return used
	}, &netio.LoopOptions{OnOpen: func(c *netio.LoopConn) { c.SetValue(&session{name: "stranger"}) }})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	for _, script := range []string{"NAME ann\nWHO\n", "WHO\n"} {
		c, err := net.Dial("tcp", srv.Addr().String())
		if err != nil {
			log.Fatal(err)
		}
		c.Write([]byte(script)) // pipelined
		c.(*net.TCPConn).CloseWrite()
		replies, err := io.ReadAll(c)
		c.Close()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(string(replies))
	}
	// Output:
	// 250 hello ann
	// 250 ann, command 2
	// 250 stranger, command 1
}

// A download larger than the connection may queue goes out a part at a
// time: the Handler writes while Queued is under a bound, then stops
// reading and asks to be told (OnWritable) when the socket has taken it.
// Memory stays bounded however slowly the client reads, and the next
// command is answered once the download is done.
func ExampleLoopConn_NotifyWritable() {
	const part = 16 << 10
	block := bytes.Repeat([]byte("x"), part)
	type download struct{ left int }
	// pump writes what is left of c's download, up to 64 KiB queued.
	pump := func(c *netio.LoopConn) {
		d := c.Value().(*download)
		for d.left > 0 && c.Queued() < 64<<10 {
			n := min(d.left, part)
			if _, err := c.Write(block[:n]); err != nil {
				c.Close()
				return
			}
			d.left -= n
		}
		if d.left > 0 {
			c.SetReading(false) // no more commands until this one is done
			c.NotifyWritable()
			return
		}
		c.SetReading(true)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv, err := netio.Serve(ln, func(c *netio.LoopConn, in []byte) int {
		used := 0
		for c.Value().(*download).left == 0 {
			i := bytes.IndexByte(in[used:], '\n')
			if i < 0 {
				break
			}
			cmd := string(in[used : used+i])
			used += i + 1
			if size, ok := strings.CutPrefix(cmd, "GET "); ok {
				n, err := strconv.Atoi(size)
				if err != nil || n < 0 {
					c.WriteString("-ERR bad size\n")
					continue
				}
				c.Value().(*download).left = n
				pump(c)
				continue
			}
			c.WriteString("+OK " + cmd + "\n")
		}
		if c.EOF() {
			c.Close()
		}
		return used
	}, &netio.LoopOptions{
		MaxQueued:  128 << 10,
		OnOpen:     func(c *netio.LoopConn) { c.SetValue(&download{}) },
		OnWritable: pump,
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
	const size = 10 << 20
	fmt.Fprintf(c, "GET %d\n", size)
	r := bufio.NewReader(c)
	n, err := io.CopyN(io.Discard, r, size)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n)
	fmt.Fprintf(c, "NOOP\n")
	line, err := r.ReadString('\n')
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(line)
	// Output:
	// 10485760
	// +OK NOOP
}

// A write bounded by a context: a Conn whose peer does not read blocks
// a Write once MaxQueued bytes wait, and WriteContext gives up when the
// context is done, as a request handler with a deadline needs.
func ExampleConn_WriteContext() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	peer := make(chan net.Conn, 1)
	go func() { // a client that connects and never reads
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			log.Fatal(err)
		}
		peer <- c
	}()
	nc, err := ln.Accept()
	if err != nil {
		log.Fatal(err)
	}
	defer (<-peer).Close()
	conn := netio.NewConn(nc, &netio.Options{
		MaxQueued: 64 << 10,
		Linger:    50 * time.Millisecond, // how long Close waits for the peer
	})

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	part := make([]byte, 32<<10)
	var err2 error
	for err2 == nil { // until the socket's buffers and the queue are full
		_, err2 = conn.WriteContext(ctx, part)
	}
	fmt.Println(errors.Is(err2, context.DeadlineExceeded))
	fmt.Println(errors.Is(conn.Close(), netio.ErrUnsent)) // after Linger
	// Output:
	// true
	// true
}

// A Handler that panics loses only its own connection: OnClose learns a
// *PanicError with the panic's value and stack, for the server's log, and
// the other connections are served on.
func ExamplePanicError() {
	closed := make(chan error, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv, err := netio.Serve(ln, func(c *netio.LoopConn, in []byte) int {
		if bytes.HasPrefix(in, []byte("boom")) {
			var m map[string]int
			m["boom"]++ // a bug: assignment to a nil map
		}
		c.Write(in)
		if c.EOF() {
			c.Close()
		}
		return len(in)
	}, &netio.LoopOptions{OnClose: func(c *netio.LoopConn, err error) {
		if errors.Is(err, netio.ErrPanic) {
			closed <- err
		}
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	bad, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer bad.Close()
	bad.Write([]byte("boom\n"))
	var pe *netio.PanicError
	if errors.As(<-closed, &pe) {
		fmt.Println(pe.Value, len(pe.Stack) > 0)
	}

	good, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer good.Close()
	good.Write([]byte("still served\n"))
	line, err := bufio.NewReader(good).ReadString('\n')
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(line)
	fmt.Println(srv.Stats().Closed.Error)
	// Output:
	// assignment to entry in nil map true
	// still served
	// 1
}

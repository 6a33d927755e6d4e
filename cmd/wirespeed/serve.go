package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/internal/sleep"
	"github.com/wirespeed/wirespeed/netio"
)

// serveConfig selects one service (echo or line) on one engine.
type serveConfig struct {
	engine string
	mode   string
	addr   string
	delay  time.Duration // std and netio: answer each request this long after reading it
	hooks  *serveHooks   // tests only
}

// serveHooks let tests order the steps of the std and netio engines.
type serveHooks struct {
	accepted   func() // after Accept, before the connection is registered
	stopClosed func() // in stop, after closing the registered connections
}

// maxLine bounds a request line in line mode; longer lines close the
// connection.
const maxLine = 64 << 10

// A runningServer is an engine serving on addr until stop is called.
type runningServer struct {
	addr string
	stop func() error // stops accepting, closes connections, waits
}

var engines = map[string]func(serveConfig) (*runningServer, error){
	"std":   func(c serveConfig) (*runningServer, error) { return startStd(c, false) },
	"netio": func(c serveConfig) (*runningServer, error) { return startStd(c, true) },
	"gnet":  startGnet,
	"evio":  startEvio,
}

func runServe(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg serveConfig
	fs.StringVar(&cfg.engine, "engine", "std", "std (goroutine per connection, one Write per response), netio (the same through netio.Conn), gnet or evio")
	fs.StringVar(&cfg.mode, "mode", "echo", "echo (return bytes as read) or line (one response line per \\n-terminated request)")
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:9000", "listen address (port 0 picks one)")
	fs.DurationVar(&cfg.delay, "delay", 0, "write each response this long after its request was read, pipelined requests included (std and netio engines; for checking latency tools)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: wirespeed serve [-engine std|netio|gnet|evio] [-mode echo|line] [-addr HOST:PORT] [-delay D]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	if err := serve(ctx, cfg, stdout); err != nil {
		fmt.Fprintln(stderr, "wirespeed serve:", err)
		return 1
	}
	return 0
}

// serve starts the server, prints "listening on ADDR" and runs until ctx is
// done.
func serve(ctx context.Context, cfg serveConfig, stdout io.Writer) error {
	s, err := startServer(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "listening on %s\n", s.addr)
	<-ctx.Done()
	return s.stop()
}

func startServer(cfg serveConfig) (*runningServer, error) {
	start, ok := engines[cfg.engine]
	if !ok {
		return nil, fmt.Errorf("unknown engine %q (std, netio, gnet, evio)", cfg.engine)
	}
	if cfg.mode != "echo" && cfg.mode != "line" {
		return nil, fmt.Errorf("unknown mode %q (echo, line)", cfg.mode)
	}
	if cfg.delay != 0 && cfg.engine != "std" && cfg.engine != "netio" {
		return nil, errors.New("-delay needs the std or netio engine: an event loop cannot wait per request")
	}
	return start(cfg)
}

// respond appends the response to one request line: the line itself.
func respond(dst, line []byte) []byte { return append(dst, line...) }

// startStd serves with a goroutine per connection, writing each response
// with its own Write, on the connection itself or through netio.
func startStd(cfg serveConfig, coalesce bool) (*runningServer, error) {
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, err
	}
	var (
		mu     sync.Mutex
		conns  = map[net.Conn]bool{}
		closed bool // stop has closed conns: register no more
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if cfg.hooks != nil && cfg.hooks.accepted != nil {
				cfg.hooks.accepted()
			}
			c.(*net.TCPConn).SetNoDelay(true)
			var rw net.Conn = c
			if coalesce {
				rw = netio.NewConn(c, nil)
			}
			mu.Lock()
			if closed { // accepted just before stop closed the listener
				mu.Unlock()
				c.Close()
				continue
			}
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				handleStd(rw, cfg)
				rw.Close()
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
			}()
		}
	}()
	stop := func() error {
		err := ln.Close()
		mu.Lock()
		closed = true
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		if cfg.hooks != nil && cfg.hooks.stopClosed != nil {
			cfg.hooks.stopClosed()
		}
		wg.Wait()
		return err
	}
	return &runningServer{addr: ln.Addr().String(), stop: stop}, nil
}

func handleStd(c net.Conn, cfg serveConfig) {
	if cfg.delay > 0 {
		handleDelayed(c, cfg)
		return
	}
	if cfg.mode == "echo" {
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	r := bufio.NewReaderSize(c, maxLine)
	out := make([]byte, 0, 256)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return // EOF, error, or a line longer than maxLine
		}
		out = respond(out[:0], line)
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// A delayedResponse is due at a fixed time after its request was read.
type delayedResponse struct {
	due time.Time
	b   []byte
}

// maxDelayed bounds the responses waiting per connection in -delay mode;
// past it the reader waits, and later requests are stamped late.
const maxDelayed = 4096

// handleDelayed serves c with every response written cfg.delay after its
// request was read: a goroutine reads and stamps requests (each chunk in
// echo mode, each line in line mode) while this one writes the responses
// when due, so pipelined requests are not delayed by their predecessors'
// waits.
func handleDelayed(c net.Conn, cfg serveConfig) {
	ch := make(chan delayedResponse, maxDelayed)
	go func() {
		defer close(ch)
		if cfg.mode == "echo" {
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					ch <- delayedResponse{time.Now().Add(cfg.delay), append([]byte(nil), buf[:n]...)}
				}
				if err != nil {
					return
				}
			}
		}
		r := bufio.NewReaderSize(c, maxLine)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return // EOF, error, or a line longer than maxLine
			}
			ch <- delayedResponse{time.Now().Add(cfg.delay), respond(nil, line)}
		}
	}()
	sl, _ := sleep.New(30 * time.Microsecond)
	defer sl.Close()
	for d := range ch {
		sl.Until(d.due)
		if _, err := c.Write(d.b); err != nil {
			c.Close() // ends the reader
			for range ch {
			}
			return
		}
	}
}

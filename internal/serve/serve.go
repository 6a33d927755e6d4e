// Package serve is `wirespeed serve`: an echo or line service on one of six
// engines (std, netio, netio-conn, gnet, evio, netpoll), the servers
// `wirespeed bench net` measures with tcpperf.
package serve

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/sleep"
	"github.com/wirespeed/wirespeed/netio"
)

// Summary is the one-line description of the command.
const Summary = "run an echo or line server on the std, netio, netio-conn, gnet, evio or netpoll engine"

// Config selects one service (echo or line) on one engine.
type Config struct {
	Engine string        // one of Engines()
	Mode   string        // "echo" (return bytes as read) or "line" (one response line per request line)
	Addr   string        // listen address; port 0 picks one
	Delay  time.Duration // std and netio-conn: answer each request this long after reading it
	// ErrorLog receives the engines' warnings and errors (gnet's); nil
	// means the log package's standard logger.
	ErrorLog *log.Logger
}

// ErrFatal is wrapped by the error of an engine that failed while serving
// (gnet reports such failures through its logger's Fatalf, which here stops
// the engine instead of the process).
var ErrFatal = errors.New("serve: engine failed")

// Engines returns the names of the engines.
func Engines() []string { return []string{"std", "netio", "netio-conn", "gnet", "evio", "netpoll"} }

// maxLine bounds a request line in line mode; longer lines close the
// connection.
const maxLine = 64 << 10

// A Server is an engine serving on Addr until Stop is called.
type Server struct {
	addr     string
	stop     func() error // stops accepting, closes connections, waits
	failed   chan struct{}
	failOnce sync.Once
	failErr  error
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.addr }

// Stop stops accepting, closes the connections and waits for the engine to
// end. It returns the error of an engine that failed, if one did.
func (s *Server) Stop() error {
	err := s.stop()
	select {
	case <-s.failed:
		return errors.Join(s.failErr, err)
	default:
		return err
	}
}

// Failed is closed when the engine has failed on its own; Stop then returns
// the failure.
func (s *Server) Failed() <-chan struct{} { return s.failed }

// fail records the first failure of the engine and closes Failed.
func (s *Server) fail(err error) {
	s.failOnce.Do(func() {
		s.failErr = err
		close(s.failed)
	})
}

// hooks let tests observe and order the steps of the engines (accept and
// stop races, -delay's clock and waits, gnet's logger); Start passes nil.
type hooks struct {
	accepted   func()              // after Accept, before the connection is registered
	stopClosed func()              // in stop, after closing the registered connections
	now        func() time.Time    // -delay: stamps a request as read
	until      func(due time.Time) // -delay: waits until a response is due
	gnetLogger func(l *gnetLogger) // gnet: the logger handed to the engine
}

// Start starts the server described by cfg.
func Start(cfg Config) (*Server, error) { return start(cfg, nil) }

func start(cfg Config, h *hooks) (*Server, error) {
	if !slices.Contains(Engines(), cfg.Engine) {
		return nil, fmt.Errorf("unknown engine %q (%s)", cfg.Engine, strings.Join(Engines(), ", "))
	}
	if cfg.Mode != "echo" && cfg.Mode != "line" {
		return nil, fmt.Errorf("unknown mode %q (echo, line)", cfg.Mode)
	}
	if cfg.Delay != 0 && cfg.Engine != "std" && cfg.Engine != "netio-conn" {
		return nil, errors.New("-delay needs the std or netio-conn engine: an event loop cannot wait per request")
	}
	if cfg.ErrorLog == nil {
		cfg.ErrorLog = log.Default()
	}
	if h == nil {
		h = &hooks{}
	}
	s := &Server{failed: make(chan struct{})}
	var err error
	switch cfg.Engine {
	case "std", "netio-conn":
		err = startStd(s, cfg, h, cfg.Engine == "netio-conn")
	case "netio":
		err = startLoops(s, cfg)
	case "gnet":
		err = startGnet(s, cfg, h)
	case "evio":
		err = startEvio(s, cfg)
	case "netpoll":
		err = startNetpoll(s, cfg)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Serve starts the server, prints "listening on ADDR" to stdout and runs
// until ctx is done or the engine fails.
func Serve(ctx context.Context, cfg Config, stdout io.Writer) error {
	return serve(ctx, cfg, nil, stdout)
}

func serve(ctx context.Context, cfg Config, h *hooks, stdout io.Writer) error {
	s, err := start(cfg, h)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "listening on %s\n", s.addr)
	select {
	case <-ctx.Done():
	case <-s.Failed():
	}
	return s.Stop()
}

// Run runs `wirespeed serve` with the arguments after "serve" until ctx is
// done.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg Config
	fs.StringVar(&cfg.Engine, "engine", "std", "std (goroutine per connection, one Write per response), netio (netio's event loops, netio.Serve), netio-conn (goroutine per connection through netio.Conn), gnet, evio or netpoll (cloudwego/netpoll)")
	fs.StringVar(&cfg.Mode, "mode", "echo", "echo (return bytes as read) or line (one response line per \\n-terminated request)")
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:9000", "listen address (port 0 picks one)")
	fs.DurationVar(&cfg.Delay, "delay", 0, "write each response this long after its request was read, pipelined requests included (std and netio-conn engines; for checking latency tools)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: wirespeed serve [-engine "+strings.Join(Engines(), "|")+"] [-mode echo|line] [-addr HOST:PORT] [-delay D]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cli.StatusError{Status: 2} // the flag package has said why
	}
	cfg.ErrorLog = log.New(stderr, "", log.LstdFlags)
	if cfg.Engine == "netio" {
		spareProc()
	}
	return Serve(ctx, cfg, stdout)
}

// respond appends the response to one request line: the line itself.
func respond(dst, line []byte) []byte { return append(dst, line...) }

// startStd serves with a goroutine per connection, writing each response
// with its own Write, on the connection itself (std) or through a
// netio.Conn (netio-conn). std reads into a 1 KiB buffer per connection
// (and a pooled 64 KiB one while reads fill it); netio-conn reads with
// Conn.ReadPooled, so a waiting connection holds no buffer, and its
// Writes go out when the loop reads again. (Accepted
// connections have TCP_NODELAY: package net sets it on every TCP
// connection.)
func startStd(s *Server, cfg Config, h *hooks, coalesce bool) error {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
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
			if h.accepted != nil {
				h.accepted()
			}
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
				handleStd(rw, &cfg, h)
				rw.Close()
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
			}()
		}
	}()
	s.addr = ln.Addr().String()
	s.stop = func() error {
		err := ln.Close()
		mu.Lock()
		closed = true
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		if h.stopClosed != nil {
			h.stopClosed()
		}
		wg.Wait()
		return err
	}
	return nil
}

func handleStd(c net.Conn, cfg *Config, h *hooks) {
	if cfg.Delay > 0 {
		handleDelayed(c, cfg, h)
		return
	}
	var r reader
	if nc, ok := c.(*netio.Conn); ok {
		r = pooledReader{nc} // holds no buffer while waiting
	} else {
		cr := &connReader{c: c}
		defer cr.release()
		r = cr
	}
	if cfg.Mode == "echo" {
		serveEcho(c, r)
	} else {
		serveLines(c, r)
	}
}

// A reader returns the bytes of the next read, valid until the one after.
type reader interface{ read() ([]byte, error) }

// serveEcho and serveLines are the std and netio-conn engines' loops, with
// small frames: every connection's goroutine runs them, and the deepest
// call chain decides the size of its stack.
func serveEcho(c net.Conn, r reader) {
	for {
		b, err := r.read()
		if len(b) > 0 {
			if _, werr := c.Write(b); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func serveLines(c net.Conn, r reader) {
	lw := &lineWriter{c: c}
	var s lineSplitter
	for {
		b, err := r.read()
		if !s.lines(b, lw.write) || err != nil {
			return // EOF, error, or a line longer than maxLine
		}
	}
}

// A lineWriter writes the response to each line with its own Write.
type lineWriter struct {
	c   net.Conn
	out []byte
}

func (w *lineWriter) write(line []byte) bool {
	w.out = respond(w.out[:0], line)
	_, err := w.c.Write(w.out)
	return err == nil
}

// A delayedResponse is due at a fixed time after its request was read.
type delayedResponse struct {
	due time.Time
	b   []byte
}

// maxDelayed bounds the responses waiting per connection in -delay mode;
// past it the reader waits, and later requests are stamped late.
const maxDelayed = 4096

// handleDelayed serves c with every response written cfg.Delay after its
// request was read: a goroutine reads and stamps requests (each chunk in
// echo mode, each line in line mode) while this one writes the responses
// when due, so pipelined requests are not delayed by their predecessors'
// waits.
func handleDelayed(c net.Conn, cfg *Config, h *hooks) {
	now, until := time.Now, h.until
	if h.now != nil {
		now = h.now
	}
	if until == nil {
		sl, _ := sleep.New(30 * time.Microsecond)
		defer sl.Close()
		until = sl.Until
	}
	ch := make(chan delayedResponse, maxDelayed)
	go func() {
		defer close(ch)
		if cfg.Mode == "echo" {
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					ch <- delayedResponse{now().Add(cfg.Delay), append([]byte(nil), buf[:n]...)}
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
			ch <- delayedResponse{now().Add(cfg.Delay), respond(nil, line)}
		}
	}()
	for d := range ch {
		until(d.due)
		if _, err := c.Write(d.b); err != nil {
			c.Close() // ends the reader
			for range ch {
			}
			return
		}
	}
}

// Package serve is `wirespeed serve`: an echo or line service on one of six
// engines, the servers `wirespeed bench net` measures with tcpperf. This
// module has three of them (std, netio, netio-conn); the other three
// (gnet, evio, cloudwego/netpoll), which exist only to be compared with,
// live in the module internal/serve/compare, so that the wirespeed module
// requires none of them. That module's binary, wirespeed-compare, serves
// them with RunEngines; `wirespeed serve` and `bench net` build it from
// the checkout they run in (BuildCompare) and run it.
package serve

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wirespeed/wirespeed/internal/cli"
	"github.com/wirespeed/wirespeed/internal/sleep"
	"github.com/wirespeed/wirespeed/internal/unixsock"
	"github.com/wirespeed/wirespeed/netio"
)

// Summary is the one-line description of the command.
const Summary = "run an echo or line server on the std, netio, netio-conn, gnet, evio or netpoll engine"

// Config selects one service (echo or line) on one engine.
type Config struct {
	Engine string        // one of Engines()
	Mode   string        // "echo" (return bytes as read) or "line" (one response line per request line)
	Addr   string        // listen address, HOST:PORT (port 0 picks one) or unix:PATH (std, netio and netio-conn)
	Delay  time.Duration // std and netio-conn: answer each request this long after reading it
	// IdleTimeout closes a connection that has sent nothing for that
	// long while the engine waited for its input: on std and netio-conn
	// between IdleTimeout and 1.25 times it after a read began (the
	// deadline moves only every quarter of it: see slackDiv); on netio it
	// is LoopOptions.IdleTimeout. A TLS handshake (std, netio) gets
	// netio.DefaultHandshakeTimeout, or IdleTimeout if that is shorter.
	// As in LoopOptions, 0 means netio.DefaultIdleTimeout (5 minutes) and
	// a negative value none. The comparison engines have no such bound
	// and refuse any value but 0.
	IdleTimeout time.Duration
	// WriteTimeout closes a connection whose peer does not take the
	// responses: on std and netio-conn, a Write not done between
	// WriteTimeout and 1.25 times it after it began; on netio it is
	// LoopOptions.WriteTimeout (no progress for that long). 0 means
	// netio.DefaultWriteTimeout (1 minute), a negative value none; the
	// comparison engines refuse any value but 0.
	WriteTimeout time.Duration
	// TLS, if set, serves TLS with it (std: tls.Server on each
	// connection's goroutine; netio: LoopOptions.TLSConfig).
	TLS *tls.Config
	// ErrorLog receives the engines' warnings and errors (gnet's); nil
	// means the log package's standard logger.
	ErrorLog *log.Logger
	// Stats, if set, receives the netio engine's counts (netio.LoopStats)
	// when it stops, as one line: "netio stats: " and their JSON.
	Stats io.Writer
}

// An Engine starts the service cfg describes: it listens on cfg.Addr and
// returns the address it listens on and the function that stops it (stops
// accepting, closes the connections and waits for the engine to end).
// fail reports that the running engine has failed on its own; Serve then
// stops it and returns the failure.
type Engine func(cfg Config, fail func(error)) (addr string, stop func() error, err error)

// Engines returns the names of the engines: this module's (Builtin) and
// then the comparison module's (CompareEngines).
func Engines() []string {
	return append([]string{"std", "netio", "netio-conn"}, CompareEngines()...)
}

// CompareEngines returns the names of the engines that the comparison
// module's binary serves.
func CompareEngines() []string { return []string{"gnet", "evio", "netpoll"} }

// Builtin returns this module's engines by name.
func Builtin() map[string]Engine { return builtin(nil) }

func builtin(h *hooks) map[string]Engine {
	if h == nil {
		h = &hooks{}
	}
	return map[string]Engine{
		"std": func(cfg Config, _ func(error)) (string, func() error, error) {
			return startStd(cfg, h, false)
		},
		"netio-conn": func(cfg Config, _ func(error)) (string, func() error, error) {
			return startStd(cfg, h, true)
		},
		"netio": func(cfg Config, _ func(error)) (string, func() error, error) {
			return startLoops(cfg)
		},
	}
}

// MaxLine bounds a request line in line mode; longer lines close the
// connection.
const MaxLine = 64 << 10

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

// hooks let tests observe and order the steps of the std and netio-conn
// engines (accept and stop races, -delay's clock and waits); nil fields
// are not called.
type hooks struct {
	listener   func(net.Listener) net.Listener // wraps the listener
	accepted   func()                          // after Accept, before the connection is registered
	stopClosed func()                          // in stop, after closing the registered connections
	now        func() time.Time                // -delay: stamps a request as read
	until      func(due time.Time)             // -delay: waits until a response is due
	full       func()                          // -delay: the reader waits for the responses queued to leave room
	clock      func() time.Time                // the idle and write timeouts' deadlines
	connDone   func()                          // a connection's goroutines have ended
	tooLong    func()                          // a connection stopped at a line longer than MaxLine, before it closes
}

// check returns the error for a cfg that engines cannot serve.
func check(cfg Config, engines map[string]Engine) error {
	if _, ok := engines[cfg.Engine]; !ok {
		if slices.Contains(Engines(), cfg.Engine) {
			return fmt.Errorf("engine %q is not served here (%s): the comparison module's binary serves it", cfg.Engine, strings.Join(slices.Sorted(maps.Keys(engines)), ", "))
		}
		return fmt.Errorf("unknown engine %q (%s)", cfg.Engine, strings.Join(Engines(), ", "))
	}
	if cfg.Mode != "echo" && cfg.Mode != "line" {
		return fmt.Errorf("unknown mode %q (echo, line)", cfg.Mode)
	}
	if cfg.Addr == "" {
		return errors.New("-addr: empty (HOST:PORT, or unix:PATH)") // not every interface on a random port
	}
	if cfg.TLS != nil && cfg.Engine != "std" && cfg.Engine != "netio" {
		return fmt.Errorf("-tls needs the std or netio engine, not %s", cfg.Engine)
	}
	if cfg.Delay != 0 && cfg.Engine != "std" && cfg.Engine != "netio-conn" {
		return errors.New("-delay needs the std or netio-conn engine: an event loop cannot wait per request")
	}
	if slices.Contains(CompareEngines(), cfg.Engine) {
		// Their timeouts, if any, are their own.
		if cfg.IdleTimeout != 0 {
			return fmt.Errorf("-idle-timeout needs the std, netio or netio-conn engine, not %s", cfg.Engine)
		}
		if cfg.WriteTimeout != 0 {
			return fmt.Errorf("-write-timeout needs the std, netio or netio-conn engine, not %s", cfg.Engine)
		}
	}
	return checkUnix(cfg)
}

// unixPrefix marks an -addr that is a Unix domain socket's path.
const unixPrefix = "unix:"

// checkUnix refuses a Unix socket address on the engines that serve TCP
// only, one without a path, and a TCP address net cannot split.
func checkUnix(cfg Config) error {
	switch {
	case cfg.Addr == unixPrefix:
		return fmt.Errorf("-addr unix: needs a path")
	case !strings.HasPrefix(cfg.Addr, unixPrefix):
		if err := cli.CheckHostPort(cfg.Addr); err != nil {
			return fmt.Errorf("-addr %q: %v", cfg.Addr, err)
		}
	case strings.HasPrefix(cfg.Addr, unixPrefix) && !slices.Contains([]string{"std", "netio", "netio-conn"}, cfg.Engine):
		return fmt.Errorf("-addr %s: the %s engine serves TCP only (unix: needs std, netio or netio-conn)", cfg.Addr, cfg.Engine)
	}
	return nil
}

// listen listens on addr: unix:PATH is a Unix domain socket (one left by
// a server that died is taken over), anything else a TCP address. remove,
// called once the server stops, removes the socket's file if it is still
// this server's; for TCP it does nothing.
func listen(addr string) (ln net.Listener, remove func(), err error) {
	if path, ok := strings.CutPrefix(addr, unixPrefix); ok {
		return unixsock.Listen(context.Background(), &net.ListenConfig{}, path)
	}
	ln, err = net.Listen("tcp", addr)
	return ln, func() {}, err
}

// addrString is how a listener's address is printed: as -addr takes it.
func addrString(a net.Addr) string {
	if a.Network() == "unix" {
		return unixPrefix + a.String()
	}
	return a.String()
}

// Start starts the server described by cfg on its engine from engines.
func Start(cfg Config, engines map[string]Engine) (*Server, error) {
	if err := check(cfg, engines); err != nil {
		return nil, err
	}
	if cfg.ErrorLog == nil {
		cfg.ErrorLog = log.Default()
	}
	s := &Server{failed: make(chan struct{})}
	addr, stop, err := engines[cfg.Engine](cfg, s.fail)
	if err != nil {
		// Every engine's, the comparison engines' too, which listen
		// their own way: a failure to listen names -addr (see
		// cli.ListenError for which are usage errors).
		return nil, cli.ListenError("-addr", cfg.Addr, err)
	}
	s.addr, s.stop = addr, stop
	return s, nil
}

// Serve starts the server, prints "listening on ADDR" to stdout and runs
// until ctx is done or the engine fails.
func Serve(ctx context.Context, cfg Config, engines map[string]Engine, stdout io.Writer) error {
	s, err := Start(cfg, engines)
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

// flags returns the flag set of a serve command named name, which fills
// the returned Config.
func flags(name, engine string, stderr io.Writer) (*flag.FlagSet, *Config) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg Config
	fs.StringVar(&cfg.Engine, "engine", engine, "std (goroutine per connection, one Write per response), netio (netio's event loops, netio.Serve), netio-conn (goroutine per connection through netio.Conn), gnet, evio or netpoll (cloudwego/netpoll)")
	fs.StringVar(&cfg.Mode, "mode", "echo", "echo (return bytes as read) or line (one response line per \\n-terminated request of up to 64 KiB; a longer one closes the connection)")
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:9000", "listen address: HOST:PORT (port 0 picks one), or unix:PATH for a Unix domain socket (std, netio and netio-conn engines; the file is removed at exit unless another server has taken the path)")
	fs.DurationVar(&cfg.Delay, "delay", 0, "write each response this long after its request was read, pipelined requests included (std and netio-conn engines; for checking latency tools; at most 1 MiB of responses wait a connection, then its reads wait; shorter than -idle-timeout, which would close a connection waiting for its response)")
	fs.Var(timeoutFlag{&cfg.IdleTimeout, netio.DefaultIdleTimeout}, "idle-timeout", "close a connection that sends nothing for this `duration` while the server waits for its input (std and netio-conn: within 1.25 times it); a TLS handshake gets at most 10s, or this if shorter; 0 turns it off. The std, netio and netio-conn engines: gnet, evio and netpoll have no such bound and refuse any value but the default")
	fs.Var(timeoutFlag{&cfg.WriteTimeout, netio.DefaultWriteTimeout}, "write-timeout", "close a connection whose peer does not take the responses for this `duration` (netio: no progress for it; std and netio-conn: a Write not done within 1.25 times it); 0 turns it off. The std, netio and netio-conn engines: gnet, evio and netpoll have no such bound and refuse any value but the default")
	return fs, &cfg
}

// Run runs `wirespeed serve` with the arguments after "serve" until ctx is
// done. The comparison engines run in the comparison module's binary:
// -compare-exe, or one built from the checkout (BuildCompare).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfg := flags("serve", "std", stderr)
	compareExe := fs.String("compare-exe", "", "the comparison module's binary, which serves gnet, evio and netpoll (default: build it from the wirespeed checkout the working directory is in)")
	useTLS := fs.Bool("tls", false, "serve TLS, with a self-signed certificate made at start unless -tls-cert and -tls-key are given (std and netio engines)")
	certFile := fs.String("tls-cert", "", "the certificate chain (PEM) to serve TLS with; implies -tls")
	keyFile := fs.String("tls-key", "", "the private key (PEM) of -tls-cert")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wirespeed serve [-engine "+strings.Join(Engines(), "|")+"] [-mode echo|line] [-addr HOST:PORT|unix:PATH] [-delay D] [-idle-timeout D] [-write-timeout D] [-tls] [-tls-cert FILE -tls-key FILE] [-compare-exe PATH]")
		fs.PrintDefaults()
	}
	if err := cli.Parse(fs, args, "wirespeed serve", stdout); err != nil {
		return cli.ParseError(err)
	}
	if fs.NArg() > 0 {
		return cli.Usagef("serve: unexpected argument %q (the address is -addr)", fs.Arg(0))
	}
	if cfg.Delay < 0 {
		return cli.Usagef("serve: -delay %v: negative", cfg.Delay)
	}
	if idle := timeout(cfg.IdleTimeout, netio.DefaultIdleTimeout); idle > 0 && cfg.Delay >= idle {
		// The reader waits for the next request meanwhile, under the
		// idle timeout: a client waiting for its response got it, and
		// then the connection closed.
		return cli.Usagef("serve: -delay %v: not shorter than the idle timeout (-idle-timeout %v), which would close a connection waiting for its response", cfg.Delay, idle)
	}
	withTLS := *useTLS || *certFile != "" || *keyFile != ""
	if withTLS && (*certFile == "") != (*keyFile == "") {
		return cli.Usagef("serve: -tls-cert and -tls-key go together")
	}
	engines := builtin(nil)
	if slices.Contains(CompareEngines(), cfg.Engine) {
		engines = map[string]Engine{cfg.Engine: nil} // served by the comparison module's binary
	}
	// A configuration no engine serves is a usage error, found before the
	// TLS files are read or a comparison binary is built; check looks
	// only at whether TLS is asked for.
	checked := *cfg
	if withTLS {
		checked.TLS = &tls.Config{}
	}
	if err := check(checked, engines); err != nil {
		return cli.Usage(fmt.Errorf("serve: %w", err))
	}
	compare := slices.Contains(CompareEngines(), cfg.Engine)
	switch {
	case !compare && *compareExe != "":
		return cli.Usagef("serve: -compare-exe: engine %s is served here; the comparison binary serves %s", cfg.Engine, strings.Join(CompareEngines(), ", "))
	case compare && *compareExe != "":
		// Else it failed at its start, "fork/exec PATH: ...", with the
		// flag unsaid.
		if err := cli.CheckProgram("-compare-exe", *compareExe); err != nil {
			return cli.Usage(fmt.Errorf("serve: %w", err))
		}
	}
	if withTLS {
		var err error
		if cfg.TLS, err = tlsConfig(cfg.Addr, *certFile, *keyFile); err != nil {
			return err
		}
	}
	if compare {
		return runCompare(ctx, *cfg, *compareExe, stdout, stderr)
	}
	return run(ctx, *cfg, engines, stdout, stderr)
}

// RunEngines runs a serve command named name, with serve's flags, on
// engines until ctx is done: the comparison module's binary.
func RunEngines(ctx context.Context, name string, args []string, engines map[string]Engine, stdout, stderr io.Writer) error {
	names := slices.Sorted(maps.Keys(engines))
	fs, cfg := flags(name, names[0], stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: "+name+" [-engine "+strings.Join(names, "|")+"] [-mode echo|line] [-addr HOST:PORT]")
		fs.PrintDefaults()
	}
	if err := cli.Parse(fs, args, name, stdout); err != nil {
		return cli.ParseError(err)
	}
	if fs.NArg() > 0 {
		return cli.Usagef("%s: unexpected argument %q (the address is -addr)", name, fs.Arg(0))
	}
	if err := check(*cfg, engines); err != nil {
		return cli.Usage(fmt.Errorf("%s: %w", name, err))
	}
	return run(ctx, *cfg, engines, stdout, stderr)
}

func run(ctx context.Context, cfg Config, engines map[string]Engine, stdout, stderr io.Writer) error {
	cfg.ErrorLog = log.New(stderr, "", log.LstdFlags)
	cfg.Stats = stdout
	if cfg.Engine == "netio" {
		spareProc()
	}
	return Serve(ctx, cfg, engines, stdout)
}

// Respond appends the response to one request line: the line itself.
func Respond(dst, line []byte) []byte { return append(dst, line...) }

// startStd serves with a goroutine per connection, writing each response
// with its own Write, on the connection itself (std) or through a
// netio.Conn (netio-conn). std reads into a 1 KiB buffer per connection
// (and a pooled 64 KiB one while reads fill it); netio-conn reads with
// Conn.ReadPooled, so a waiting connection holds no buffer, and its
// Writes go out when the loop reads again. (Accepted
// connections have TCP_NODELAY: package net sets it on every TCP
// connection.)
func startStd(cfg Config, h *hooks, coalesce bool) (addr string, stop func() error, err error) {
	ln, remove, err := listen(cfg.Addr)
	if err != nil {
		return "", nil, err
	}
	if h.listener != nil {
		ln = h.listener(ln)
	}
	var (
		mu     sync.Mutex
		conns  = map[net.Conn]bool{}
		closed bool // stop has closed conns: register no more
		wg     sync.WaitGroup
	)
	// stopping ends -delay's waits for responses due: their connections
	// are closed.
	stopping, stopped := context.WithCancel(context.Background())
	wg.Add(1)
	go func() {
		defer wg.Done()
		var pause time.Duration
		for {
			c, err := ln.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				// Out of descriptors, a connection aborted before it was
				// taken: the listener is still there. Accept again after
				// a pause, longer each time in a row, as net/http does.
				pause = min(max(2*pause, 5*time.Millisecond), time.Second)
				cfg.ErrorLog.Printf("serve: accept: %v; again in %v", err, pause)
				select {
				case <-stopping.Done():
					return
				case <-time.After(pause):
				}
				continue
			}
			pause = 0
			if h.accepted != nil {
				h.accepted()
			}
			var rw net.Conn = c
			switch {
			case coalesce:
				rw = netio.NewConn(c, nil)
			case cfg.TLS != nil:
				rw = tls.Server(c, cfg.TLS) // the handshake runs at the first read
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
				if handleStd(stopping, rw, c, &cfg, h) {
					if h.tooLong != nil {
						h.tooLong()
					}
					closeLingering(rw, c)
				}
				rw.Close()
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
				if h.connDone != nil {
					h.connDone()
				}
			}()
		}
	}()
	stop = func() error {
		err := ln.Close()
		remove()
		stopped()
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
	return addrString(ln.Addr()), stop, nil
}

// handleStd serves c until its peer ends its stream or fails, or is
// silent or does not take its responses for longer than cfg's timeouts
// allow, or until a request line is too long: then it returns true, the
// peer's input unread (see closeLingering). A TLS handshake runs first,
// under its own bound (deadlines.handshake). raw is the connection under
// c (c itself, or under its TLS or netio.Conn layer): once a write has
// failed (timed out), it is closed, so that c's Close does not try to send
// more (TLS's close_notify waited 5 s for a peer that takes nothing).
func handleStd(stopping context.Context, c, raw net.Conn, cfg *Config, h *hooks) (tooLong bool) {
	d := newDeadlines(c, raw, cfg, h)
	defer func() {
		if d.failed {
			raw.Close()
		}
	}()
	if tc, ok := c.(*tls.Conn); ok && !d.handshake(tc) {
		return false
	}
	if cfg.Delay > 0 {
		return handleDelayed(stopping, c, d, cfg, h)
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
		serveEcho(r, d)
		return false
	}
	return serveLines(r, d)
}

// closeLingering ends a connection given up on while its peer may still
// be sending (a line longer than MaxLine). Closed with input unread, it
// would be reset, and a reset drops the responses already written that
// the peer has not yet read. So the end of stream is sent after them,
// and what the peer sends is read and thrown away until it ends its
// stream too, for at most netio.DefaultLinger, as netio's loops linger
// (stop cuts it short: it closes raw). rw is what the engine writes to
// (a *tls.Conn or *netio.Conn over raw, or raw itself).
func closeLingering(rw, raw net.Conn) {
	type closeWriter interface{ CloseWrite() error }
	end := time.Now().Add(netio.DefaultLinger)
	if rw != raw {
		// TLS: close_notify; netio.Conn: sends what is queued first,
		// then ends raw's output too. Both within the linger (with
		// -write-timeout 0 the flush had no bound). A failure leaves the
		// peer nothing more to read.
		rw.SetWriteDeadline(end)
		if cw, ok := rw.(closeWriter); !ok || cw.CloseWrite() != nil {
			return
		}
	}
	if _, ok := rw.(*netio.Conn); !ok {
		if cw, ok := raw.(closeWriter); !ok || cw.CloseWrite() != nil {
			return
		}
	}
	raw.SetReadDeadline(end)
	buf := bigPool.Get().(*[]byte)
	defer bigPool.Put(buf)
	for {
		if _, err := raw.Read(*buf); err != nil {
			return
		}
	}
}

// A reader returns the bytes of the next read, valid until the one after.
type reader interface{ read() ([]byte, error) }

// serveEcho and serveLines are the std and netio-conn engines' loops, with
// small frames: every connection's goroutine runs them, and the deepest
// call chain decides the size of its stack. They write to d's
// connection, and d keeps its deadlines.
func serveEcho(r reader, d *deadlines) {
	for {
		d.beforeRead()
		b, err := r.read()
		if len(b) > 0 {
			if d.writeOut(b) != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// serveLines returns true if it stopped at a line longer than MaxLine.
func serveLines(r reader, d *deadlines) (tooLong bool) {
	lw := &lineWriter{d: d}
	var s lineSplitter
	for {
		d.beforeRead()
		b, err := r.read()
		if !s.lines(b, lw.write) {
			return !lw.failed // a line longer than MaxLine, or a failed write
		}
		if err != nil {
			return false // EOF or error
		}
	}
}

// A lineWriter writes the response to each line with its own Write.
type lineWriter struct {
	d      *deadlines
	out    []byte
	failed bool // a Write failed
}

func (w *lineWriter) write(line []byte) bool {
	w.out = Respond(w.out[:0], line)
	err := w.d.writeOut(w.out)
	w.failed = err != nil
	return err == nil
}

// A readFunc is a Read method.
type readFunc func(p []byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

// A delayedResponse is due at a fixed time after its request was read.
type delayedResponse struct {
	due time.Time
	b   []byte
}

// maxDelayed and maxDelayedBytes bound the responses waiting per
// connection in -delay mode, in number and in bytes; past either the
// reader waits (the client's writes then wait on TCP's window), and later
// requests are stamped late.
const (
	maxDelayed      = 4096
	maxDelayedBytes = 1 << 20
)

// handleDelayed serves c with every response written cfg.Delay after its
// request was read: a goroutine reads and stamps requests (each chunk in
// echo mode, each line in line mode) while this one writes the responses
// when due, so pipelined requests are not delayed by their predecessors'
// waits. Once stopping is done, the responses still due are dropped: the
// server is closing the connection. dl bounds the reader's reads (the
// idle timeout) and the writer's writes (the write timeout); a write that
// fails closes the connection under c, which ends the reader. It returns true if the reader
// stopped at a line longer than MaxLine and every response was written.
func handleDelayed(stopping context.Context, c net.Conn, dl *deadlines, cfg *Config, h *hooks) (tooLong bool) {
	now, until := time.Now, h.until
	if h.now != nil {
		now = h.now
	}
	if until == nil {
		w := sleep.System{}.Waiter(30 * time.Microsecond)
		defer w.Close()
		until = func(due time.Time) { w.Until(stopping, due) }
	}
	ch := make(chan delayedResponse, maxDelayed)
	var (
		mu     sync.Mutex
		room   = sync.NewCond(&mu)
		queued int  // bytes in ch and being written
		quit   bool // the writer is gone
	)
	// queue sends response b once the bytes queued leave room for it (one
	// alone always goes), stamped then; it reports false if the writer is
	// gone.
	queue := func(b []byte) bool {
		mu.Lock()
		for queued > 0 && queued+len(b) > maxDelayedBytes && !quit {
			if h.full != nil {
				h.full()
			}
			room.Wait()
		}
		queued += len(b)
		ok := !quit
		mu.Unlock()
		if ok {
			ch <- delayedResponse{now().Add(cfg.Delay), b}
		}
		return ok
	}
	go func() {
		defer close(ch)
		if cfg.Mode == "echo" {
			buf := make([]byte, 64<<10)
			for {
				dl.beforeRead()
				n, err := c.Read(buf)
				if n > 0 && !queue(append([]byte(nil), buf[:n]...)) {
					return
				}
				if err != nil {
					return
				}
			}
		}
		r := bufio.NewReaderSize(readFunc(func(p []byte) (int, error) {
			dl.beforeRead()
			return c.Read(p)
		}), MaxLine)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				// EOF, error, or a line longer than MaxLine (read by
				// the writer once ch is closed)
				tooLong = errors.Is(err, bufio.ErrBufferFull)
				return
			}
			if !queue(Respond(nil, line)) {
				return
			}
		}
	}()
	for d := range ch {
		until(d.due)
		if stopping.Err() == nil {
			if dl.writeOut(d.b) == nil {
				mu.Lock()
				queued -= len(d.b)
				room.Signal()
				mu.Unlock()
				continue
			}
		}
		mu.Lock()
		quit = true
		room.Signal()
		mu.Unlock()
		dl.raw.Close() // ends the reader (c's Close could wait to send: see handleStd)
		for range ch {
		}
		return false
	}
	return tooLong
}

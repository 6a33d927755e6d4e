package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/tidwall/evio"
)

// gnetServer is the echo/line service on gnet: one event loop per CPU the
// process may use; responses to all complete lines of one read go out with
// one Write, as gnet's examples do.
type gnetServer struct {
	gnet.BuiltinEventEngine
	mode  string
	eng   gnet.Engine
	ready chan error
	addr  string
}

func (s *gnetServer) OnBoot(eng gnet.Engine) gnet.Action {
	s.eng = eng
	addr, err := gnetAddr(eng)
	s.addr = addr
	s.ready <- err
	return gnet.None
}

// gnetAddr reads the bound address of the engine's listener (for port 0)
// from a duplicate of its descriptor, which gnet's API hands out.
func gnetAddr(eng gnet.Engine) (string, error) {
	fd, err := eng.Dup()
	if err != nil {
		return "", err
	}
	f := os.NewFile(uintptr(fd), "gnet listener")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func (s *gnetServer) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	out := make([]byte, 0, 4096)
	c.SetContext(&out)
	return nil, gnet.None
}

func (s *gnetServer) OnTraffic(c gnet.Conn) gnet.Action {
	if s.mode == "echo" {
		buf, _ := c.Next(-1)
		c.Write(buf)
		return gnet.None
	}
	buf, _ := c.Peek(-1)
	end := bytes.LastIndexByte(buf, '\n') + 1
	if end == 0 {
		if len(buf) > maxLine {
			return gnet.Close
		}
		return gnet.None
	}
	outp := c.Context().(*[]byte)
	out := (*outp)[:0]
	for b := buf[:end]; len(b) > 0; {
		i := bytes.IndexByte(b, '\n') + 1
		out = respond(out, b[:i])
		b = b[i:]
	}
	*outp = out
	c.Discard(end)
	c.Write(out)
	return gnet.None
}

func startGnet(srv *Server, cfg Config, h *hooks) error {
	s := &gnetServer{mode: cfg.Mode, ready: make(chan error, 1)}
	logger := &gnetLogger{log: cfg.ErrorLog, fail: srv.fail}
	if h.gnetLogger != nil {
		h.gnetLogger(logger)
	}
	done := make(chan error, 1)
	go func() {
		done <- gnet.Run(s, "tcp://"+cfg.Addr,
			gnet.WithMulticore(true),
			gnet.WithTCPNoDelay(gnet.TCPNoDelay),
			gnet.WithLogger(logger))
	}()
	select {
	case err := <-s.ready:
		if err != nil {
			s.eng.Stop(context.Background())
			<-done
			return err
		}
	case err := <-done:
		select {
		case <-srv.failed:
			err = errors.Join(srv.failErr, err)
		default:
		}
		return fmt.Errorf("gnet: %w", err)
	}
	srv.addr = s.addr
	srv.stop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := s.eng.Stop(ctx)
		if rerr := <-done; err == nil {
			err = rerr
		}
		return err
	}
	return nil
}

// gnetLogger drops gnet's informational messages and logs its warnings and
// errors. gnet calls Fatalf where it cannot go on (and expects the process
// to exit): this records the failure, which makes Serve stop the engine and
// return it.
type gnetLogger struct {
	log  *log.Logger
	fail func(error)
}

func (*gnetLogger) Debugf(string, ...any)       {}
func (*gnetLogger) Infof(string, ...any)        {}
func (l *gnetLogger) Warnf(f string, a ...any)  { l.log.Printf("gnet: "+f, a...) }
func (l *gnetLogger) Errorf(f string, a ...any) { l.log.Printf("gnet: "+f, a...) }
func (l *gnetLogger) Fatalf(f string, a ...any) {
	err := fmt.Errorf("%w: gnet: %s", ErrFatal, fmt.Sprintf(f, a...))
	l.log.Print(err)
	l.fail(err)
}

// evioConn is the per-connection state of the evio line service.
type evioConn struct {
	in  evio.InputStream
	out []byte
}

// startEvio runs the service on evio, one loop per CPU the process may use.
//
// Its connections run with Nagle's algorithm (the kernel's default): evio
// has no option for TCP_NODELAY and no way to reach its sockets. (On Linux
// accepted sockets inherit TCP_NODELAY from the listener, but evio creates
// the listener itself and does not expose it.) So a response written while
// an earlier one on the same connection is still unacknowledged waits for
// that ACK; one request in flight per connection is not affected.
func startEvio(srv *Server, cfg Config) error {
	var stopping atomic.Bool
	ready := make(chan string, 1)
	ev := evio.Events{NumLoops: runtime.GOMAXPROCS(0)}
	ev.Serving = func(s evio.Server) evio.Action {
		ready <- s.Addrs[0].String()
		return evio.None
	}
	ev.Opened = func(c evio.Conn) ([]byte, evio.Options, evio.Action) {
		if stopping.Load() {
			return nil, evio.Options{}, evio.Shutdown
		}
		c.SetContext(&evioConn{})
		return nil, evio.Options{}, evio.None
	}
	ev.Data = func(c evio.Conn, in []byte) ([]byte, evio.Action) {
		if cfg.Mode == "echo" {
			return in, evio.None
		}
		st := c.Context().(*evioConn)
		data := st.in.Begin(in)
		out := st.out[:0]
		for {
			i := bytes.IndexByte(data, '\n') + 1
			if i == 0 {
				break
			}
			out = respond(out, data[:i])
			data = data[i:]
		}
		st.out = out
		if len(data) > maxLine {
			return out, evio.Close
		}
		st.in.End(data)
		return out, evio.None
	}
	done := make(chan error, 1)
	go func() { done <- evio.Serve(ev, "tcp://"+cfg.Addr) }()
	select {
	case srv.addr = <-ready:
	case err := <-done:
		return fmt.Errorf("evio: %w", err)
	}
	// evio stops when an event handler returns Shutdown. (Returning it from
	// Tick would leave evio's ticker goroutine blocked forever.) stop
	// connects once to raise an Opened event that does so.
	srv.stop = func() error {
		stopping.Store(true)
		c, err := net.DialTimeout("tcp", srv.addr, 10*time.Second)
		if err != nil {
			return fmt.Errorf("evio: cannot connect to stop it: %w", err)
		}
		c.Close()
		err = <-done
		if errors.Is(err, net.ErrClosed) {
			err = nil
		}
		return err
	}
	return nil
}

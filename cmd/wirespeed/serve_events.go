package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
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

// gnetAddr reads the bound address of the engine's listener (for port 0).
func gnetAddr(eng gnet.Engine) (string, error) {
	fd, err := eng.Dup()
	if err != nil {
		return "", err
	}
	defer syscall.Close(fd)
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return "", err
	}
	return sockaddrString(sa)
}

func sockaddrString(sa syscall.Sockaddr) (string, error) {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port)), nil
	case *syscall.SockaddrInet6:
		return net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port)), nil
	}
	return "", fmt.Errorf("unexpected socket address %T", sa)
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

func startGnet(cfg serveConfig) (*runningServer, error) {
	s := &gnetServer{mode: cfg.mode, ready: make(chan error, 1)}
	done := make(chan error, 1)
	go func() {
		done <- gnet.Run(s, "tcp://"+cfg.addr,
			gnet.WithMulticore(true),
			gnet.WithTCPNoDelay(gnet.TCPNoDelay),
			gnet.WithLogger(gnetLogger{}))
	}()
	select {
	case err := <-s.ready:
		if err != nil {
			s.eng.Stop(context.Background())
			<-done
			return nil, err
		}
	case err := <-done:
		return nil, fmt.Errorf("gnet: %w", err)
	}
	stop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := s.eng.Stop(ctx)
		if rerr := <-done; err == nil {
			err = rerr
		}
		return err
	}
	return &runningServer{addr: s.addr, stop: stop}, nil
}

// gnetLogger drops gnet's informational messages and prints its errors.
type gnetLogger struct{}

func (gnetLogger) Debugf(string, ...any)     {}
func (gnetLogger) Infof(string, ...any)      {}
func (gnetLogger) Warnf(f string, a ...any)  { log.Printf("gnet: "+f, a...) }
func (gnetLogger) Errorf(f string, a ...any) { log.Printf("gnet: "+f, a...) }
func (gnetLogger) Fatalf(f string, a ...any) { log.Fatalf("gnet: "+f, a...) }

// evioConn is the per-connection state of the evio line service.
type evioConn struct {
	in  evio.InputStream
	out []byte
}

// startEvio runs the service on evio, one loop per CPU the process may use.
// evio has no option for TCP_NODELAY; Linux accepted sockets inherit it from
// the listener, so it is set there.
func startEvio(cfg serveConfig) (*runningServer, error) {
	var stopping atomic.Bool
	ready := make(chan string, 1)
	var nodelayErr error
	ev := evio.Events{NumLoops: runtime.GOMAXPROCS(0)}
	ev.Serving = func(srv evio.Server) evio.Action {
		nodelayErr = setListenerNoDelay(srv.Addrs[0])
		ready <- srv.Addrs[0].String()
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
		if cfg.mode == "echo" {
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
	go func() { done <- evio.Serve(ev, "tcp://"+cfg.addr) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		return nil, fmt.Errorf("evio: %w", err)
	}
	// evio stops when an event handler returns Shutdown. (Returning it from
	// Tick would leave evio's ticker goroutine blocked forever.) stop
	// connects once to raise an Opened event that does so.
	stop := func() error {
		stopping.Store(true)
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
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
	if nodelayErr != nil {
		stop()
		return nil, fmt.Errorf("evio: TCP_NODELAY on the listener: %w", nodelayErr)
	}
	return &runningServer{addr: addr, stop: stop}, nil
}

// setListenerNoDelay finds this process's listening socket bound to addr and
// sets TCP_NODELAY on it.
func setListenerNoDelay(addr net.Addr) error {
	want := addr.String()
	for fd := 3; fd < 4096; fd++ {
		if v, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_ACCEPTCONN); err != nil || v != 1 {
			continue
		}
		sa, err := syscall.Getsockname(fd)
		if err != nil {
			continue
		}
		if s, err := sockaddrString(sa); err == nil && s == want {
			return syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
		}
	}
	return errors.New("listening socket not found")
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/wirespeed/wirespeed/internal/serve"
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
		if len(buf) > serve.MaxLine {
			return gnet.Close
		}
		return gnet.None
	}
	outp := c.Context().(*[]byte)
	out := (*outp)[:0]
	for b := buf[:end]; len(b) > 0; {
		i := bytes.IndexByte(b, '\n') + 1
		if i > serve.MaxLine {
			*outp = out
			c.Write(out)
			return gnet.Close
		}
		out = serve.Respond(out, b[:i])
		b = b[i:]
	}
	*outp = out
	c.Discard(end)
	c.Write(out)
	return gnet.None
}

// startGnet is the gnet engine; hook, if not nil, gets the logger handed
// to gnet (for tests).
func startGnet(cfg serve.Config, fail func(error), hook func(*gnetLogger)) (string, func() error, error) {
	addr, err := listenAddr(cfg.Addr)
	if err != nil {
		return "", nil, err
	}
	s := &gnetServer{mode: cfg.Mode, ready: make(chan error, 1)}
	logger := &gnetLogger{log: cfg.ErrorLog, fail: fail}
	if hook != nil {
		hook(logger)
	}
	done := make(chan error, 1)
	go func() {
		done <- gnet.Run(s, "tcp://"+addr,
			gnet.WithMulticore(true),
			gnet.WithReuseAddr(true), // as evio and netpoll: a restart binds over TIME-WAIT
			gnet.WithTCPNoDelay(gnet.TCPNoDelay),
			gnet.WithLogger(logger))
	}()
	select {
	case err := <-s.ready:
		if err != nil {
			s.eng.Stop(context.Background())
			<-done
			return "", nil, err
		}
	case err := <-done:
		return "", nil, fmt.Errorf("gnet: %w", errors.Join(logger.failure(), err))
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
	return s.addr, stop, nil
}

// gnetLogger drops gnet's informational messages and logs its warnings and
// errors. gnet calls Fatalf where it cannot go on (and expects the process
// to exit): this records the failure, which makes Serve stop the engine and
// return it.
type gnetLogger struct {
	log  *log.Logger
	fail func(error)

	mu    sync.Mutex
	fatal error // the first Fatalf
}

func (*gnetLogger) Debugf(string, ...any)       {}
func (*gnetLogger) Infof(string, ...any)        {}
func (l *gnetLogger) Warnf(f string, a ...any)  { l.log.Printf("gnet: "+f, a...) }
func (l *gnetLogger) Errorf(f string, a ...any) { l.log.Printf("gnet: "+f, a...) }
func (l *gnetLogger) Fatalf(f string, a ...any) {
	err := fmt.Errorf("%w: gnet: %s", ErrFatal, fmt.Sprintf(f, a...))
	l.log.Print(err)
	l.mu.Lock()
	if l.fatal == nil {
		l.fatal = err
	}
	l.mu.Unlock()
	l.fail(err)
}

// failure returns the error of the first Fatalf, or nil.
func (l *gnetLogger) failure() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fatal
}

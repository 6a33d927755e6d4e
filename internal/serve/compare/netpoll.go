package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/cloudwego/netpoll"

	"github.com/wirespeed/wirespeed/internal/serve"
)

// netpollServer is the echo/line service on cloudwego/netpoll with its
// documented idioms: an EventLoop whose OnRequest reads the connection's
// nocopy Reader (Next, Peek, Release) and answers through its Writer
// (WriteBinary, Malloc, one Flush per OnRequest). netpoll runs its own
// pollers (one below 20 CPUs) and runs OnRequest on its goroutine pool.
type netpollServer struct {
	mode string

	mu     sync.Mutex
	conns  map[netpoll.Connection]bool
	closed bool
	probe  chan struct{} // closed at the first connection
	once   sync.Once
}

// onPrepare registers the connection, or closes it once stop has begun.
func (s *netpollServer) onPrepare(c netpoll.Connection) context.Context {
	s.once.Do(func() { close(s.probe) })
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return context.Background()
	}
	s.conns[c] = true
	s.mu.Unlock()
	c.AddCloseCallback(func(c netpoll.Connection) error {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		return nil
	})
	return context.Background()
}

func (s *netpollServer) onRequest(_ context.Context, c netpoll.Connection) error {
	r, w := c.Reader(), c.Writer()
	if s.mode == "echo" {
		buf, err := r.Next(r.Len())
		if err != nil {
			return err
		}
		w.WriteBinary(buf) // may link buf, so Release after Flush
		err = w.Flush()
		r.Release()
		return err
	}
	// line: answer every complete line buffered, with one Flush; wait
	// (Peek of one byte more) for the rest of a partial line, as OnRequest
	// must consume its input or close.
	for {
		n := r.Len()
		buf, err := r.Peek(n)
		if err != nil {
			return err
		}
		end := bytes.LastIndexByte(buf, '\n') + 1
		if end > 0 {
			for b := buf[:end]; len(b) > 0; {
				i := bytes.IndexByte(b, '\n') + 1
				if i > serve.MaxLine {
					return c.Close()
				}
				out, err := w.Malloc(i)
				if err != nil {
					return err
				}
				serve.Respond(out[:0], b[:i])
				b = b[i:]
			}
			if err := r.Skip(end); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
			r.Release()
		}
		rest := n - end
		if rest == 0 {
			return nil
		}
		if rest > serve.MaxLine {
			return c.Close()
		}
		if _, err := r.Peek(rest + 1); err != nil { // waits for more input
			c.Close() // the peer's end of stream: netpoll leaves the socket open
			return err
		}
	}
}

func startNetpoll(cfg serve.Config) (string, func() error, error) {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return "", nil, err
	}
	s := &netpollServer{mode: cfg.Mode, conns: map[netpoll.Connection]bool{}, probe: make(chan struct{})}
	evl, err := netpoll.NewEventLoop(s.onRequest, netpoll.WithOnPrepare(s.onPrepare))
	if err != nil {
		ln.Close()
		return "", nil, fmt.Errorf("netpoll: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- evl.Serve(ln) }()
	// Shutdown before Serve has set up its server is a no-op, so wait
	// until it accepts: one probe connection.
	probe, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
	if err == nil {
		select {
		case <-s.probe:
		case err = <-done:
			err = fmt.Errorf("netpoll: %w", err)
		}
		probe.Close()
	}
	if err != nil {
		evl.Shutdown(context.Background())
		ln.Close()
		return "", nil, err
	}
	stop := func() error {
		// Shutdown closes idle connections and waits for busy ones; close
		// them all first, as the other engines' stop does.
		s.mu.Lock()
		s.closed = true
		conns := slices.Collect(maps.Keys(s.conns))
		s.mu.Unlock()
		for _, c := range conns {
			c.Close() // runs the close callback, which locks s.mu
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := evl.Shutdown(ctx)
		if serr := <-done; err == nil && serr != nil && !errors.Is(serr, net.ErrClosed) {
			err = serr
		}
		return err
	}
	return ln.Addr().String(), stop, nil
}

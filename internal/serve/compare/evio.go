package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/tidwall/evio"

	"github.com/wirespeed/wirespeed/internal/serve"
)

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
func startEvio(cfg serve.Config) (string, func() error, error) {
	laddr, err := listenAddr(cfg.Addr)
	if err != nil {
		return "", nil, err
	}
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
			if i > serve.MaxLine {
				st.out = out
				return out, evio.Close
			}
			out = serve.Respond(out, data[:i])
			data = data[i:]
		}
		st.out = out
		if len(data) > serve.MaxLine {
			return out, evio.Close
		}
		st.in.End(data)
		return out, evio.None
	}
	done := make(chan error, 1)
	go func() { done <- evio.Serve(ev, "tcp://"+laddr) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		return "", nil, fmt.Errorf("evio: %w", err)
	}
	// evio stops when an event handler returns Shutdown. (Returning it from
	// Tick would leave evio's ticker goroutine blocked forever.) stop
	// connects once to raise an Opened event that does so.
	// evio's shutdown signal is lost if it comes before its serve waits
	// for it (a stop right after the start: a test hung 10 minutes), so
	// stop connects again each second until evio has returned; once its
	// listener is gone a connect fails, and stop just waits.
	stop := func() error {
		stopping.Store(true)
		for try := 0; ; try++ {
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err != nil {
				if try == 0 {
					return fmt.Errorf("evio: cannot connect to stop it: %w", err)
				}
				break
			}
			c.Close()
			select {
			case err := <-done:
				return evioStopped(err)
			case <-time.After(time.Second):
			}
		}
		return evioStopped(<-done)
	}
	return addr, stop, nil
}

// evioStopped is evio.Serve's error once stopped: its closed listener's is
// none.
func evioStopped(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/wirespeed/wirespeed/netio"
)

// startLoops serves on netio's event loops (netio.Serve), one per CPU the
// process may use (see spareProc). Each read is answered with one write:
// in line mode the responses to all its complete lines, each written with
// its own LoopConn.Write, as the other engines do.
func startLoops(cfg Config) (addr string, stop func() error, err error) {
	ln, remove, err := listen(cfg.Addr)
	if err != nil {
		return "", nil, err
	}
	h := loopEcho
	if cfg.Mode == "line" {
		h = loopLines
	}
	lo, err := netio.Serve(ln, h, loopOptions(cfg))
	if err != nil {
		ln.Close()
		remove()
		return "", nil, err
	}
	stop = func() error {
		err := lo.Close()
		remove()
		if cfg.Stats != nil {
			b, _ := json.Marshal(lo.Stats())
			fmt.Fprintf(cfg.Stats, "netio stats: %s\n", b)
		}
		return err
	}
	return addrString(ln.Addr()), stop, nil
}

// loopOptions are the netio engine's options for cfg. Config's timeouts
// mean what LoopOptions' do.
func loopOptions(cfg Config) *netio.LoopOptions {
	// A line longer than MaxLine is more unused input than MaxInput: the
	// loop closes the connection.
	return &netio.LoopOptions{Loops: min(runtime.NumCPU(), netio.MaxLoops), MaxInput: MaxLine, TLSConfig: cfg.TLS,
		IdleTimeout: cfg.IdleTimeout, WriteTimeout: cfg.WriteTimeout}
}

// spareProc raises GOMAXPROCS to one more than the netio engine's loops,
// which run best with a processor to spare (see netio.LoopOptions.Loops).
func spareProc() {
	if n := runtime.NumCPU() + 1; runtime.GOMAXPROCS(0) < n {
		runtime.GOMAXPROCS(n)
	}
}

func loopEcho(c *netio.LoopConn, in []byte) int {
	if _, err := c.Write(in); err != nil || c.EOF() {
		c.Close()
	}
	return len(in)
}

func loopLines(c *netio.LoopConn, in []byte) int {
	used := 0
	for {
		i := bytes.IndexByte(in[used:], '\n') + 1
		if i == 0 {
			if c.EOF() {
				c.Close()
			}
			return used
		}
		if i > MaxLine { // MaxInput bounds only what is left unused
			c.Close()
			return len(in)
		}
		// The response to a line is the line (Respond), written from the
		// input, which saves a copy.
		if _, err := c.Write(in[used : used+i]); err != nil {
			c.Close()
			return len(in)
		}
		used += i
	}
}

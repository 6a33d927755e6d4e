//go:build unix

package netio

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestLoopsServeNil: Serve with no Handler or no listener fails, with a
// typed error, instead of crashing on the first input.
func TestLoopsServeNil(t *testing.T) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if s, err := Serve(ln, nil, nil); !errors.Is(err, ErrNilFunc) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Serve(ln, nil, nil): %v, want ErrNilFunc", err)
	}
	if _, err := Serve(nil, echo, nil); !errors.Is(err, os.ErrInvalid) {
		t.Fatalf("Serve(nil, h, nil): %v, want os.ErrInvalid", err)
	}
}

// TestLoopsDoNil: Do(nil) fails with ErrNilFunc, and the connection and
// its loop go on.
func TestLoopsDoNil(t *testing.T) {
	conns := make(chan *LoopConn, 1)
	s := startLoops(t, echo, &LoopOptions{Loops: 1, OnOpen: func(c *LoopConn) { conns <- c }})
	nc := dial(t, s)
	lc := <-conns
	if err := lc.Do(nil); !errors.Is(err, ErrNilFunc) {
		t.Fatalf("Do(nil): %v, want ErrNilFunc", err)
	}
	s.Sync()
	roundTrip(t, bufio.NewReader(nc), nc)
}

// TestLoopsControlNil: Control(nil) fails with ErrNilFunc, as Do and
// AfterFunc do, and the connection goes on: it called the nil function,
// whose panic closed the connection (OnClose learned ErrPanic), on both
// implementations.
func TestLoopsControlNil(t *testing.T) {
	got := make(chan error, 1)
	closed := make(chan error, 1)
	s := startLoops(t, func(c *LoopConn, in []byte) int {
		if bytes.Contains(in, []byte("control")) {
			got <- c.Control(nil)
			return len(in)
		}
		return echo(c, in)
	}, &LoopOptions{Loops: 1, OnClose: func(c *LoopConn, err error) { closed <- err }})
	nc := dial(t, s)
	nc.Write([]byte("control\n"))
	select {
	case err := <-got:
		if !errors.Is(err, ErrNilFunc) {
			t.Fatalf("Control(nil): %v, want ErrNilFunc", err)
		}
	case err := <-closed:
		t.Fatalf("Control(nil) closed the connection: %.60v", err)
	}
	roundTrip(t, bufio.NewReader(nc), nc)
}

// TestLoopsPanic: a panic in a Handler, a callback, or a function run by
// Do or AfterFunc closes that connection at once and OnClose learns a
// PanicError with the value and the stack; the server serves the others.
func TestLoopsPanic(t *testing.T) {
	boom := func(where string) { panic("boom in " + where) }
	for _, tc := range []struct {
		name string
		h    Handler
		opt  func(o *LoopOptions)
		poke func(lc *LoopConn, nc net.Conn) // makes the panic happen
	}{
		{name: "Handler", h: func(c *LoopConn, in []byte) int {
			if bytes.Contains(in, []byte("boom")) {
				boom("Handler")
			}
			return echo(c, in)
		}, poke: func(_ *LoopConn, nc net.Conn) { nc.Write([]byte("boom\n")) }},
		{name: "used", h: func(c *LoopConn, in []byte) int {
			if bytes.Contains(in, []byte("boom")) {
				return len(in) + 1
			}
			return echo(c, in)
		}, poke: func(_ *LoopConn, nc net.Conn) { nc.Write([]byte("boom\n")) }},
		{name: "Do", poke: func(lc *LoopConn, _ net.Conn) {
			lc.Do(func(c *LoopConn) { c.WriteString("lost\n"); boom("Do") })
		}},
		{name: "AfterFunc", poke: func(lc *LoopConn, _ net.Conn) {
			lc.Do(func(c *LoopConn) { c.AfterFunc(0, func(*LoopConn) { boom("AfterFunc") }) })
		}},
		{name: "OnOpen", opt: func(o *LoopOptions) {
			open, opens := o.OnOpen, 0
			o.OnOpen = func(c *LoopConn) {
				open(c)
				if opens++; opens == 1 { // the first connection's
					boom("OnOpen")
				}
			}
		}},
		{name: "OnWritable", opt: func(o *LoopOptions) {
			o.OnWritable = func(*LoopConn) { boom("OnWritable") }
		}, poke: func(lc *LoopConn, _ net.Conn) {
			lc.Do(func(c *LoopConn) { c.NotifyWritable() })
		}},
		{name: "Detach", h: func(c *LoopConn, in []byte) int {
			if bytes.Contains(in, []byte("boom")) {
				c.Detach()
				boom("Handler after Detach")
			}
			return echo(c, in)
		}, poke: func(_ *LoopConn, nc net.Conn) { nc.Write([]byte("boom\n")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conns := make(chan *LoopConn, 2)
			closed := make(chan error, 2)
			opt := &LoopOptions{Loops: 1,
				OnOpen:  func(c *LoopConn) { conns <- c },
				OnClose: func(c *LoopConn, err error) { closed <- err },
			}
			if tc.opt != nil {
				tc.opt(opt)
			}
			h := tc.h
			if h == nil {
				h = echo
			}
			s := startLoops(t, h, opt)
			victim := dial(t, s)
			lv := <-conns
			if tc.poke != nil {
				tc.poke(lv, victim)
			}
			err := <-closed
			var pe *PanicError
			if !errors.Is(err, ErrPanic) || !errors.As(err, &pe) {
				t.Fatalf("OnClose learned %v, want a PanicError", err)
			}
			if v, _ := pe.Value.(string); !strings.HasPrefix(v, "boom in") && !strings.Contains(v, "Handler returned") {
				t.Errorf("the panic's value: %v", pe.Value)
			}
			if tc.name != "used" && !bytes.Contains(pe.Stack, []byte("TestLoopsPanic")) {
				t.Errorf("the stack has not the panicking function:\n%s", pe.Stack)
			}
			got, _ := readAllNow(victim)
			if strings.Contains(got, "lost") {
				t.Errorf("the panicking call's output was sent: %q", got)
			}
			// The loop goes on serving.
			other := dial(t, s)
			<-conns
			roundTrip(t, bufio.NewReader(other), other)
		})
	}
}

// readAllNow reads c until it ends (reset or EOF), within a minute.
func readAllNow(c net.Conn) (string, error) {
	c.SetReadDeadline(time.Now().Add(time.Minute))
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String(), err
		}
	}
}

// TestLoopsServeTwice: one listener passed to Serve twice is served once:
// the second Serve fails with net.ErrClosed.
func TestLoopsServeTwice(t *testing.T) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := serveOn(t, ln, echo, nil)
	if s2, err := Serve(ln, echo, nil); !errors.Is(err, net.ErrClosed) {
		if s2 != nil {
			s2.Close()
		}
		t.Fatalf("a second Serve of the listener: %v, want net.ErrClosed", err)
	}
	c := dial(t, s)
	roundTrip(t, bufio.NewReader(c), c)
}

// TestLoopsPanicTimeoutShutdown: a panic in OnTimeout or OnShutdown, too,
// closes only its connection, and OnClose learns ErrPanic.
func TestLoopsPanicTimeoutShutdown(t *testing.T) {
	for _, which := range []string{"OnTimeout", "OnShutdown"} {
		t.Run(which, func(t *testing.T) {
			clk := newFakeClock()
			closed := make(chan error, 1)
			opt := &LoopOptions{IdleTimeout: time.Minute,
				OnClose: func(c *LoopConn, err error) { closed <- err }}
			boom := func(c *LoopConn) { c.WriteString("lost\n"); panic("boom in " + which) }
			if which == "OnTimeout" {
				opt.OnTimeout = func(c *LoopConn, _ error) { boom(c) }
			} else {
				opt.OnShutdown = boom
			}
			SetLoopClock(opt, clk.Now)
			s := startLoops(t, echo, opt)
			c := dial(t, s)
			roundTrip(t, bufio.NewReader(c), c)
			done := make(chan error, 1)
			if which == "OnTimeout" {
				clk.advance(s, time.Minute)
			} else {
				go func() { done <- s.Shutdown(t.Context()) }()
			}
			if err := <-closed; !errors.Is(err, ErrPanic) {
				t.Fatalf("OnClose learned %v, want ErrPanic", err)
			}
			if got, _ := readAllNow(c); strings.Contains(got, "lost") {
				t.Errorf("the panicking call's output was sent: %q", got)
			}
			if which == "OnShutdown" {
				if err := <-done; err != nil {
					t.Fatalf("Shutdown: %v", err)
				}
			}
		})
	}
}

//go:build unix

package netio

import (
	"bufio"
	"errors"
	"math/rand/v2"
	"net"
	"runtime"
	"slices"
	"testing"
	"time"
)

// onLoop runs f on lc's loop and waits for it.
func onLoop(t *testing.T, lc *LoopConn, f func(c *LoopConn)) {
	t.Helper()
	done := make(chan struct{})
	if err := lc.Do(func(c *LoopConn) { f(c); close(done) }); err != nil {
		t.Fatalf("Do: %v", err)
	}
	<-done
}

// timerServer serves echo on a fake clock and returns the first
// connection, from both ends.
func timerServer(t *testing.T, opt *LoopOptions) (*Loops, *fakeClock, *LoopConn, *net.TCPConn) {
	t.Helper()
	clk := newFakeClock()
	conns := make(chan *LoopConn, 1)
	opt.OnOpen = func(c *LoopConn) { conns <- c }
	opt.IdleTimeout = -1
	SetLoopClock(opt, clk.Now)
	s := startLoops(t, echo, opt)
	nc := dial(t, s)
	return s, clk, <-conns, nc
}

// TestLoopsAfterFunc: a timer runs once, when the loop's clock reaches
// its time, as a Handler would: what it writes arrives.
func TestLoopsAfterFunc(t *testing.T) {
	s, clk, lc, nc := timerServer(t, &LoopOptions{})
	r := bufio.NewReader(nc)
	runs := 0
	onLoop(t, lc, func(c *LoopConn) {
		if _, err := c.AfterFunc(time.Second, func(c *LoopConn) {
			runs++
			c.WriteString("tick\n")
		}); err != nil {
			t.Errorf("AfterFunc: %v", err)
		}
	})
	clk.advance(s, time.Second-time.Nanosecond)
	onLoop(t, lc, func(*LoopConn) {
		if runs != 0 {
			t.Errorf("ran %d times before its time", runs)
		}
	})
	clk.advance(s, time.Nanosecond)
	if line, err := r.ReadString('\n'); line != "tick\n" {
		t.Fatalf("read %q, %v; want the timer's tick", line, err)
	}
	clk.advance(s, time.Hour)
	onLoop(t, lc, func(*LoopConn) {
		if runs != 1 {
			t.Errorf("ran %d times, want once", runs)
		}
	})
}

// TestLoopsAfterFuncStop: a timer stopped before its time never runs and
// Stop says so; Stop after it ran, or twice, reports false.
func TestLoopsAfterFuncStop(t *testing.T) {
	s, clk, lc, _ := timerServer(t, &LoopOptions{})
	var ran []string
	var a, b *LoopTimer
	onLoop(t, lc, func(c *LoopConn) {
		a, _ = c.AfterFunc(time.Second, func(*LoopConn) { ran = append(ran, "a") })
		b, _ = c.AfterFunc(time.Second, func(*LoopConn) { ran = append(ran, "b") })
	})
	onLoop(t, lc, func(*LoopConn) {
		if !a.Stop() {
			t.Error("Stop before the timer's time reported false")
		}
		if a.Stop() {
			t.Error("a second Stop reported true")
		}
	})
	clk.advance(s, 2*time.Second)
	onLoop(t, lc, func(*LoopConn) {
		if !slices.Equal(ran, []string{"b"}) {
			t.Errorf("ran %q, want only b", ran)
		}
		if b.Stop() {
			t.Error("Stop after the timer ran reported true")
		}
	})
}

// TestLoopsAfterFuncOrder: timers run in the order of their times, and
// those due at the same time in the order they were armed, each once.
func TestLoopsAfterFuncOrder(t *testing.T) {
	s, clk, lc, _ := timerServer(t, &LoopOptions{})
	type arm struct {
		d time.Duration
		i int
	}
	rnd := rand.New(rand.NewPCG(29, 4))
	var want []arm
	var got []int
	onLoop(t, lc, func(c *LoopConn) {
		for i := range 500 {
			d := time.Duration(rnd.IntN(50)) * time.Millisecond
			want = append(want, arm{d, i})
			c.AfterFunc(d, func(*LoopConn) { got = append(got, i) })
		}
	})
	slices.SortStableFunc(want, func(x, y arm) int { return int(x.d - y.d) })
	for range 60 {
		clk.advance(s, time.Millisecond)
	}
	onLoop(t, lc, func(*LoopConn) {
		if len(got) != len(want) {
			t.Fatalf("%d timers ran, want %d", len(got), len(want))
		}
		for k, w := range want {
			if got[k] != w.i {
				t.Fatalf("call %d was timer %d, want %d (%v)", k, got[k], w.i, w.d)
			}
		}
	})
}

// closedTimer serves a connection on a fake clock, with OnClose
// reporting on closed, and arms a timer for a second that reports on
// ran.
func closedTimer(t *testing.T) (*Loops, *fakeClock, *LoopConn, *net.TCPConn, chan error, chan struct{}, *LoopTimer) {
	t.Helper()
	closed := make(chan error, 1)
	s, clk, lc, nc := timerServer(t, &LoopOptions{OnClose: func(c *LoopConn, err error) { closed <- err }})
	ran := make(chan struct{}, 2)
	var tm *LoopTimer
	onLoop(t, lc, func(c *LoopConn) {
		tm, _ = c.AfterFunc(time.Second, func(*LoopConn) { ran <- struct{}{} })
	})
	return s, clk, lc, nc, closed, ran, tm
}

// TestLoopsAfterFuncClosed: the timers of a connection closed (by the
// peer here) never run, and Stop reports false for them.
func TestLoopsAfterFuncClosed(t *testing.T) {
	s, clk, lc, nc, closed, ran, tm := closedTimer(t)
	onLoop(t, lc, func(c *LoopConn) {
		c.AfterFunc(time.Second, func(*LoopConn) { ran <- struct{}{} })
	})
	nc.Close() // the echo handler closes on the peer's end of stream
	if err := <-closed; err != nil {
		t.Fatalf("OnClose: %v", err)
	}
	clk.advance(s, time.Hour)
	select {
	case <-ran:
		t.Fatal("a closed connection's timer ran")
	default:
	}
	if tm.Stop() {
		t.Fatal("Stop of a closed connection's timer reported true")
	}
}

// TestLoopsAfterFuncStopClosing: a connection's timers are dropped as it
// starts closing or is detached, before the loop is done with it (here
// it is held in the very call that closed it): Stop from another
// goroutine then reports false, as for a closed connection's, and the
// timer never runs. Stop used to report true until the loop had released
// the connection, which a closing connection's linger (output the peer
// has not read, up to 5 s) makes long.
func TestLoopsAfterFuncStopClosing(t *testing.T) {
	for _, end := range []string{"Close", "Detach"} {
		t.Run(end, func(t *testing.T) {
			s, clk, lc, nc, closed, ran, tm := closedTimer(t)
			stopped := make(chan bool)
			var dc net.Conn
			onLoop(t, lc, func(c *LoopConn) {
				var err error
				if end == "Close" {
					err = c.Close()
				} else {
					dc, err = c.Detach()
				}
				if err != nil {
					t.Errorf("%s: %v", end, err)
				}
				go func() { stopped <- tm.Stop() }()
				if <-stopped {
					t.Errorf("Stop from another goroutine after %s reported true", end)
				}
				if tm.Stop() {
					t.Errorf("Stop on the loop after %s reported true", end)
				}
			})
			if dc != nil {
				dc.Close()
			}
			nc.Close()
			<-closed
			clk.advance(s, time.Hour)
			select {
			case <-ran:
				t.Fatalf("the timer ran after %s", end)
			default:
			}
		})
	}
}

// TestLoopsAfterFuncErrors: AfterFunc outside a call on its connection
// (in another connection's), with a nil function or on a closing
// connection fails with a typed error.
func TestLoopsAfterFuncErrors(t *testing.T) {
	conns := make(chan *LoopConn, 2)
	s := startLoops(t, echo, &LoopOptions{Loops: 1, OnOpen: func(c *LoopConn) { conns <- c }})
	dial(t, s)
	lc := <-conns
	dial(t, s)
	other := <-conns
	onLoop(t, other, func(*LoopConn) {
		if _, err := lc.AfterFunc(time.Second, func(*LoopConn) {}); !errors.Is(err, ErrOutsideLoop) {
			t.Errorf("AfterFunc outside the loop: %v, want ErrOutsideLoop", err)
		}
	})
	onLoop(t, lc, func(c *LoopConn) {
		if _, err := c.AfterFunc(time.Second, nil); !errors.Is(err, ErrNilFunc) {
			t.Errorf("AfterFunc(nil): %v, want ErrNilFunc", err)
		}
		c.Close()
		if _, err := c.AfterFunc(time.Second, func(*LoopConn) {}); !errors.Is(err, ErrClosed) {
			t.Errorf("AfterFunc after Close: %v, want ErrClosed", err)
		}
	})
}

// TestLoopsAfterFuncNoGoroutine: a thousand timers start no goroutine.
func TestLoopsAfterFuncNoGoroutine(t *testing.T) {
	s, clk, lc, _ := timerServer(t, &LoopOptions{})
	before := runtime.NumGoroutine()
	runs := 0
	onLoop(t, lc, func(c *LoopConn) {
		for i := range 1000 {
			c.AfterFunc(time.Duration(i+1)*time.Millisecond, func(*LoopConn) { runs++ })
		}
	})
	// The process's own goroutines come and go (a finalizer running
	// counts as one), so only a goroutine a timer would show.
	if n := runtime.NumGoroutine(); n >= before+100 {
		t.Errorf("%d goroutines with 1000 timers armed, %d before", n, before)
	}
	clk.advance(s, 2*time.Second)
	onLoop(t, lc, func(*LoopConn) {
		if runs != 1000 {
			t.Errorf("%d timers ran, want 1000", runs)
		}
	})
}

// TestLoopsAfterFuncWakes: on the real clock, a timer wakes a loop that
// has nothing else to do (the timerfd), and never runs early.
func TestLoopsAfterFuncWakes(t *testing.T) {
	conns := make(chan *LoopConn, 1)
	s := startLoops(t, echo, &LoopOptions{Loops: 1, OnOpen: func(c *LoopConn) { conns <- c }})
	dial(t, s)
	lc := <-conns
	for _, d := range []time.Duration{time.Millisecond, 3 * time.Millisecond, 20 * time.Millisecond} {
		fired := make(chan time.Duration, 1)
		onLoop(t, lc, func(c *LoopConn) {
			start := time.Now()
			c.AfterFunc(d, func(*LoopConn) { fired <- time.Since(start) })
		})
		if got := <-fired; got < d {
			t.Errorf("a %v timer ran after %v", d, got)
		}
	}
}

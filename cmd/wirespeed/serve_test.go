package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/tcpperf"
)

// Every engine starts on port 0, answers echo and pipelined line requests
// correctly from several connections at once, and stops cleanly.
func TestServeEngines(t *testing.T) {
	for _, engine := range []string{"std", "netio", "gnet", "evio"} {
		for _, mode := range []string{"echo", "line"} {
			t.Run(engine+"/"+mode, func(t *testing.T) {
				base := runtime.NumGoroutine()
				s, err := startServer(serveConfig{engine: engine, mode: mode, addr: "127.0.0.1:0"})
				if err != nil {
					t.Fatal(err)
				}
				stopped := false
				defer func() {
					if !stopped {
						s.stop()
					}
				}()
				var wg sync.WaitGroup
				for c := 0; c < 4; c++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := exchange(s.addr, c); err != nil {
							t.Error(err)
						}
					}()
				}
				wg.Wait()
				done := make(chan error, 1)
				go func() { done <- s.stop() }()
				select {
				case err := <-done:
					stopped = true
					if err != nil {
						t.Fatalf("stop: %v", err)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("engine did not stop")
				}
				if c, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
					c.Close()
					t.Fatal("still accepting after stop")
				}
				// Nothing of the engine keeps running.
				for i := 0; runtime.NumGoroutine() > base; i++ {
					if i == 500 {
						buf := make([]byte, 1<<20)
						t.Fatalf("%d goroutines after stop, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
					}
					time.Sleep(10 * time.Millisecond)
				}
			})
		}
	}
}

// exchange sends 200 pipelined lines in uneven writes and checks that the
// same bytes come back.
func exchange(addr string, id int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	var want bytes.Buffer
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&want, "conn %d request %d %s\n", id, i, strings.Repeat("x", i%50))
	}
	go func() {
		b := want.Bytes()
		for len(b) > 0 { // split lines across writes
			n := min(len(b), 97)
			c.Write(b[:n])
			b = b[n:]
		}
	}()
	got := make([]byte, want.Len())
	if _, err := io.ReadFull(c, got); err != nil {
		return fmt.Errorf("conn %d: %v", id, err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		return fmt.Errorf("conn %d: response differs from the requests", id)
	}
	return nil
}

func TestServePrintsAddressAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, serveConfig{engine: "netio", mode: "line", addr: "127.0.0.1:0"}, pw) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening on 127.0.0.1:") {
		t.Fatalf("first line %q, %v", line, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, bad := range []serveConfig{
		{engine: "nginx", mode: "echo", addr: "127.0.0.1:0"},
		{engine: "std", mode: "http", addr: "127.0.0.1:0"},
		{engine: "gnet", mode: "line", addr: "127.0.0.1:0", delay: time.Millisecond},
	} {
		if _, err := startServer(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// A line longer than the limit closes the connection instead of growing a
// buffer.
func TestServeLongLine(t *testing.T) {
	for _, engine := range []string{"std", "netio", "gnet", "evio"} {
		s, err := startServer(serveConfig{engine: engine, mode: "line", addr: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(20 * time.Second))
		go c.Write(bytes.Repeat([]byte("y"), 4*maxLine))
		if _, err := io.Copy(io.Discard, c); err != nil && !strings.Contains(err.Error(), "reset") {
			t.Errorf("%s: %v", engine, err)
		}
		c.Close()
		s.stop()
	}
}

// -delay: tcpperf sees at least the delay.
func TestServeDelay(t *testing.T) {
	s, err := startServer(serveConfig{engine: "std", mode: "line", addr: "127.0.0.1:0", delay: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	res, err := tcpperf.Run(context.Background(), tcpperf.Config{Addr: s.addr, Conns: 2, QPS: 200, Mode: "line", Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || res.P50 < 2000 || res.P50 > 50_000 {
		t.Fatalf("2ms server: %+v", res)
	}
}

// A connection accepted just before stop closes the listener, but registered
// after stop closed the connections it knew of, is closed too: stop does not
// wait for that client to hang up.
func TestServeStopAcceptRace(t *testing.T) {
	for _, engine := range []string{"std", "netio"} {
		t.Run(engine, func(t *testing.T) {
			accepted, proceed := make(chan struct{}), make(chan struct{})
			var once sync.Once
			hooks := &serveHooks{
				accepted:   func() { once.Do(func() { close(accepted) }); <-proceed },
				stopClosed: func() { close(proceed) },
			}
			s, err := startServer(serveConfig{engine: engine, mode: "echo", addr: "127.0.0.1:0", hooks: hooks})
			if err != nil {
				t.Fatal(err)
			}
			c, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			<-accepted // the server holds c, not yet registered
			done := make(chan error, 1)
			go func() { done <- s.stop() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				c.Close() // let stop finish
				<-done
				t.Fatal("stop waited for a connection accepted during shutdown")
			}
			// The server closed c.
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.Read(make([]byte, 1)); err == nil {
				t.Fatal("connection still open after stop")
			}
		})
	}
}

// -delay: each response is written delay after its own request was read, so
// the second of two pipelined requests is not answered a delay after the
// first (the old one-at-a-time sleep made the k-th k delays late).
func TestServeDelayPipelined(t *testing.T) {
	const delay = 150 * time.Millisecond
	for _, tc := range []struct {
		engine, mode string
		reqs         []string // written in one go, or 20ms apart in echo mode
	}{
		{"std", "line", []string{"a\nb\n"}},
		{"netio", "line", []string{"a\nb\n"}},
		{"std", "echo", []string{"a\n", "b\n"}},
	} {
		t.Run(tc.engine+"/"+tc.mode, func(t *testing.T) {
			s, err := startServer(serveConfig{engine: tc.engine, mode: tc.mode, addr: "127.0.0.1:0", delay: delay})
			if err != nil {
				t.Fatal(err)
			}
			defer s.stop()
			// The gap between the two responses is about 0 (20ms in echo
			// mode), where one-at-a-time sleeping makes it at least delay.
			// A stall of the loaded machine may widen it: try a few times.
			var gaps []time.Duration
			for attempt := 0; attempt < 3; attempt++ {
				gap := pipelinedGap(t, s.addr, tc.reqs, delay)
				gaps = append(gaps, gap)
				if gap < delay/2 {
					return
				}
			}
			t.Fatalf("gaps between the responses to two pipelined requests %v, want under %v", gaps, delay/2)
		})
	}
}

// pipelinedGap sends reqs (two lines in all) and returns the time between
// the two response lines; it fails the test if a response comes back less
// than delay after its request was sent.
func pipelinedGap(t *testing.T, addr string, reqs []string, delay time.Duration) time.Duration {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	sent := make(chan time.Time, 2)
	go func() {
		for i, r := range reqs {
			if i > 0 {
				time.Sleep(20 * time.Millisecond)
			}
			now := time.Now()
			c.Write([]byte(r))
			for range strings.Count(r, "\n") {
				sent <- now
			}
		}
	}()
	br := bufio.NewReader(c)
	var at [2]time.Time
	for i := range at {
		line, err := br.ReadString('\n')
		at[i] = time.Now()
		if err != nil {
			t.Fatal(err)
		}
		if want := string(rune('a'+i)) + "\n"; line != want {
			t.Fatalf("response %d: %q, want %q", i, line, want)
		}
		if d := at[i].Sub(<-sent); d < delay {
			t.Fatalf("response %d came %v after its request, before the %v delay", i, d, delay)
		}
	}
	return at[1].Sub(at[0])
}

package serve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/tcpperf"
)

// quiet keeps the engines' log lines out of the test output.
var quiet = log.New(io.Discard, "", 0)

func startT(t *testing.T, cfg Config, h *hooks) *Server {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.ErrorLog == nil {
		cfg.ErrorLog = quiet
	}
	s, err := start(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every engine starts on port 0, answers echo and pipelined line requests
// correctly from several connections at once, and stops cleanly: Stop
// returns only once the engine has ended, after which nothing accepts on
// its address.
func TestServeEngines(t *testing.T) {
	for _, engine := range Engines() {
		for _, mode := range []string{"echo", "line"} {
			t.Run(engine+"/"+mode, func(t *testing.T) {
				s := startT(t, Config{Engine: engine, Mode: mode}, nil)
				var wg sync.WaitGroup
				for c := 0; c < 4; c++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := exchange(s.Addr(), c); err != nil {
							t.Error(err)
						}
					}()
				}
				wg.Wait()
				if err := s.Stop(); err != nil {
					t.Fatalf("stop: %v", err)
				}
				if c, err := net.Dial("tcp", s.Addr()); err == nil {
					c.Close()
					t.Fatal("still accepting after stop")
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
	go func() { done <- Serve(ctx, Config{Engine: "netio", Mode: "line", Addr: "127.0.0.1:0"}, pw) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening on 127.0.0.1:") {
		t.Fatalf("first line %q, %v", line, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Config{
		{Engine: "nginx", Mode: "echo", Addr: "127.0.0.1:0"},
		{Engine: "std", Mode: "http", Addr: "127.0.0.1:0"},
		{Engine: "gnet", Mode: "line", Addr: "127.0.0.1:0", Delay: time.Millisecond},
	} {
		if _, err := Start(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// gnet's Fatalf does not end the process: it stops the engine, and Serve
// returns the failure.
func TestServeGnetFatal(t *testing.T) {
	loggers := make(chan *gnetLogger, 1)
	var logged bytes.Buffer
	var mu sync.Mutex
	cfg := Config{Engine: "gnet", Mode: "echo", Addr: "127.0.0.1:0", ErrorLog: log.New(lockedWriter{&mu, &logged}, "", 0)}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve(context.Background(), cfg, &hooks{gnetLogger: func(l *gnetLogger) { loggers <- l }}, pw)
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	l := <-loggers
	l.Fatalf("poller: %s", "broken")
	err = <-done
	if !errors.Is(err, ErrFatal) || !strings.Contains(err.Error(), "gnet: poller: broken") {
		t.Fatalf("Serve returned %v, want the engine's failure", err)
	}
	mu.Lock()
	if !strings.Contains(logged.String(), "poller: broken") {
		t.Errorf("failure not logged: %q", logged.String())
	}
	mu.Unlock()
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("still accepting after the failure")
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// A line longer than the limit closes the connection instead of growing a
// buffer.
func TestServeLongLine(t *testing.T) {
	for _, engine := range Engines() {
		t.Run(engine, func(t *testing.T) {
			s := startT(t, Config{Engine: engine, Mode: "line"}, nil)
			defer s.Stop()
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			go c.Write(bytes.Repeat([]byte("y"), 4*maxLine))
			// The server closes with unread data, which resets the
			// connection: either ends the copy.
			if _, err := io.Copy(io.Discard, c); err != nil && !errors.Is(err, syscall.ECONNRESET) {
				t.Error(err)
			}
		})
	}
}

// -delay on a real clock: tcpperf never sees less than the delay.
func TestServeDelay(t *testing.T) {
	s := startT(t, Config{Engine: "std", Mode: "line", Delay: 2 * time.Millisecond}, nil)
	defer s.Stop()
	res, err := tcpperf.Run(context.Background(), tcpperf.Config{Addr: s.Addr(), Conns: 2, QPS: 200, Mode: "line", Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || res.Received == 0 || res.P50 < 2000 {
		t.Fatalf("2ms server: %+v", res)
	}
}

// A connection accepted just before stop closes the listener, but registered
// after stop closed the connections it knew of, is closed too: stop does not
// wait for that client to hang up.
func TestServeStopAcceptRace(t *testing.T) {
	for _, engine := range []string{"std", "netio-conn"} {
		t.Run(engine, func(t *testing.T) {
			accepted, proceed := make(chan struct{}), make(chan struct{})
			var once sync.Once
			h := &hooks{
				accepted:   func() { once.Do(func() { close(accepted) }); <-proceed },
				stopClosed: func() { close(proceed) },
			}
			s := startT(t, Config{Engine: engine, Mode: "echo"}, h)
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			<-accepted // the server holds c, not yet registered
			// Stop returns although the client keeps c open (a stop that
			// waited for it would hang the test).
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Read(make([]byte, 1)); err == nil {
				t.Fatal("connection still open after stop")
			}
		})
	}
}

// -delay: each response is due delay after its own request was read, so
// the second of two pipelined requests is not answered a delay after the
// first (the old one-at-a-time sleep made the k-th k delays late). A fake
// clock stamps the requests and the writer's wait is held open until both
// are stamped: the reader must go on reading while a response waits.
func TestServeDelayPipelined(t *testing.T) {
	const delay = 150 * time.Millisecond
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		engine, mode string
		reqs         []string // the second is sent once the first response waits
	}{
		{"std", "line", []string{"a\nb\n"}},
		{"netio-conn", "line", []string{"a\nb\n"}},
		{"std", "echo", []string{"a\n", "b\n"}},
	} {
		t.Run(tc.engine+"/"+tc.mode, func(t *testing.T) {
			stamped := make(chan struct{}, 2)
			waiting := make(chan time.Time, 2)
			release := make(chan struct{})
			var mu sync.Mutex
			clock := t0
			h := &hooks{
				now: func() time.Time {
					mu.Lock()
					defer mu.Unlock()
					stamped <- struct{}{}
					return clock
				},
				until: func(due time.Time) {
					waiting <- due
					<-release
					mu.Lock()
					clock = due // the wait ends at the due time
					mu.Unlock()
				},
			}
			s := startT(t, Config{Engine: tc.engine, Mode: tc.mode, Delay: delay}, h)
			defer s.Stop()
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, r := range tc.reqs {
				if _, err := c.Write([]byte(r)); err != nil {
					t.Fatal(err)
				}
				<-stamped
			}
			if len(tc.reqs) == 1 {
				<-stamped // both lines of the one write
			}
			var dues []time.Time
			dues = append(dues, <-waiting)
			close(release)
			dues = append(dues, <-waiting)
			for i, due := range dues {
				if !due.Equal(t0.Add(delay)) {
					t.Errorf("response %d due %v after the first request was read, want %v", i, due.Sub(t0), delay)
				}
			}
			br := bufio.NewReader(c)
			for i := range 2 {
				line, err := br.ReadString('\n')
				if want := string(rune('a'+i)) + "\n"; err != nil || line != want {
					t.Fatalf("response %d: %q, %v; want %q", i, line, err, want)
				}
			}
		})
	}
}

package tcpperf

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/internal/sleep"
)

// server runs a line or echo server on 127.0.0.1:0 until the test ends.
// handle is called per connection.
func server(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); defer c.Close(); handle(c) }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

func echo(c net.Conn) { io.Copy(c, c) }

// delayedLines answers each line exactly delay after reading it.
func delayedLines(delay time.Duration, corrupt bool) func(net.Conn) {
	return func(c net.Conn) {
		sl, _ := sleep.New(30 * time.Microsecond)
		defer sl.Close()
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			at := time.Now().Add(delay)
			if corrupt {
				line[0] ^= 1
			}
			sl.Until(at)
			if _, err := c.Write(line); err != nil {
				return
			}
		}
	}
}

// Against a server that answers each request 1 ms late, the latencies are at
// least 1 ms, and not wildly more (the tight bound belongs to the benchmark
// measurement, not to a test on a shared machine).
func TestDelayedServerPercentiles(t *testing.T) {
	addr := server(t, delayedLines(time.Millisecond, false))
	var hlog bytes.Buffer
	res, err := Run(context.Background(), Config{
		Addr: addr, Conns: 4, QPS: 400, MsgSize: 64, Mode: "line",
		Duration: time.Second, Warmup: 200 * time.Millisecond, HdrLog: &hlog,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *res)
	if res.P50 < 1000 || res.P50 > 50_000 {
		t.Errorf("P50 %.1fµs against a 1ms server, want in [1000, 50000]", res.P50)
	}
	if !(res.P50 <= res.P90 && res.P90 <= res.P99 && res.P99 <= res.P999 && res.P999 <= res.P9999 && res.P9999 <= res.Max) {
		t.Errorf("percentiles not monotonic: %+v", res)
	}
	if res.Errors != 0 || res.ContentErrors != 0 {
		t.Errorf("errors: %+v", res)
	}
	// 400/s for 1s: the count is exact up to the edges of the window.
	if res.Received < 390 || res.Received > 410 {
		t.Errorf("received %d responses in the measurement, want about 400", res.Received)
	}
	if res.AchievedQPS < 300 || res.AchievedQPS > 500 {
		t.Errorf("achieved %.0f/s, want about 400", res.AchievedQPS)
	}

	// The interval log reads back with HdrHistogram's reader and adds up to
	// the same histogram.
	lr := hdrhistogram.NewHistogramLogReader(&hlog)
	var total int64
	var maxNs int64
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("reading the log: %v\n%s", err, hlog.String())
		}
		if h == nil {
			break
		}
		total += h.TotalCount()
		maxNs = max(maxNs, h.Max())
	}
	if total != res.Received {
		t.Errorf("log holds %d values, the run recorded %d", total, res.Received)
	}
	if math.Abs(float64(maxNs)/1e3-res.Max) > res.Max/100 {
		t.Errorf("log max %dns, run max %.1fµs", maxNs, res.Max)
	}
}

// Open loop against an immediate echo server: every message is answered,
// checked and counted. (How low the floor is belongs to the benchmark
// measurement, not to a test on a shared machine.)
func TestOpenLoopEcho(t *testing.T) {
	addr := server(t, echo)
	res, err := Run(context.Background(), Config{
		Addr: addr, Conns: 4, QPS: 400, Duration: 500 * time.Millisecond, Mode: "echo", MsgSize: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *res)
	if res.Errors != 0 || res.Received < 190 || res.Received > 210 || res.Sent < res.Received {
		t.Fatalf("errors or missing responses: %+v", res)
	}
	if res.P50 <= 0 || res.LatenessMax <= 0 {
		t.Fatalf("no latencies recorded: %+v", res)
	}
}

func TestClosedLoop(t *testing.T) {
	addr := server(t, echo)
	res, err := Run(context.Background(), Config{
		Addr: addr, Conns: 3, Depth: 8, MsgSize: 100, Mode: "line", Duration: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *res)
	if res.Errors != 0 || res.Received < 100 || res.Depth != 8 {
		t.Fatalf("closed loop: %+v", res)
	}
	if res.Sent < res.Received {
		t.Fatalf("received more than sent: %+v", res)
	}
}

// Responses are checked: a server that flips a bit is caught.
func TestContentChecked(t *testing.T) {
	addr := server(t, delayedLines(0, true))
	res, err := Run(context.Background(), Config{
		Addr: addr, Conns: 2, QPS: 200, Mode: "line", Duration: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ContentErrors == 0 || res.Errors < res.ContentErrors {
		t.Fatalf("corrupting server not detected: %+v", res)
	}
}

// A server that never answers: everything is unanswered, the run still ends.
func TestUnanswered(t *testing.T) {
	addr := server(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	start := time.Now()
	res, err := Run(context.Background(), Config{
		Addr: addr, Conns: 2, QPS: 200, Duration: 200 * time.Millisecond, DrainTimeout: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unanswered != res.Sent || res.Sent == 0 || res.Received != 0 {
		t.Fatalf("silent server: %+v", res)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("run took %v", d)
	}
}

func TestErrors(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Addr: "x", Mode: "http"},
		{Addr: "x", MsgSize: -1},
		{Addr: "x", QPS: -1},
	} {
		if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", cfg, err)
		}
	}
	addr := refusingAddr(t)
	res, err := Run(context.Background(), Config{Addr: addr, Conns: 3, QPS: 10, Duration: time.Millisecond})
	if !errors.Is(err, ErrConnect) || res != nil {
		t.Errorf("closed port: %v, want ErrConnect", err)
	}
	if err := ensureFDs(math.MaxInt64); !errors.Is(err, ErrFDLimit) {
		t.Errorf("impossible fd count: %v, want ErrFDLimit", err)
	}
}

// refusingAddr returns a loopback address that refuses connections for the
// rest of the test: a TCP socket is bound to it but does not listen, so no
// other test or process can take the port meanwhile (as one could after a
// listener is closed).
func refusingAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}

// A closed loop against a slow server leaves the client idle: nothing in the
// tool busy-waits while responses are outstanding.
func TestClosedLoopIdleCPU(t *testing.T) {
	addr := server(t, delayedLines(5*time.Millisecond, false))
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c0, w0 := cpu(), time.Now()
	res, err := Run(context.Background(), Config{Addr: addr, Conns: 2, Depth: 1, Mode: "line", Duration: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	used, wall := cpu()-c0, time.Since(w0)
	t.Logf("CPU %v over %v; %+v", used, wall, *res)
	if used > wall/2 {
		t.Errorf("the process used %v of CPU in %v against a server answering every 5ms", used, wall)
	}
}

// failingDialer fails all but every keep-th dial with ECONNREFUSED.
func failingDialer(keep int) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var mu sync.Mutex
	n := 0
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		n++
		fail := n%keep != 0
		mu.Unlock()
		if fail {
			return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
}

// Some connections fail to open (normal at 10k connections): the run goes on
// with the others, all pacers included, and reports the failures.
func TestPartialConnectFailure(t *testing.T) {
	addr := server(t, echo)
	res, err := Run(context.Background(), Config{
		Addr: addr, Conns: 16, Pacers: 16, QPS: 400, Duration: 300 * time.Millisecond,
		dial: failingDialer(4),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *res)
	if res.ConnectFailures != 12 || res.Connected != 4 || res.Conns != 16 {
		t.Fatalf("want 12 connect failures and 4 connections: %+v", res)
	}
	if !strings.Contains(res.ConnectError, "12 of 16") || !strings.Contains(res.ConnectError, "refused") {
		t.Errorf("connect error %q", res.ConnectError)
	}
	if res.Errors != res.ConnectFailures || res.Unanswered != 0 {
		t.Fatalf("errors other than the connect failures: %+v", res)
	}
	// The whole schedule went out on the 4 connections: 400/s for 0.3s.
	if res.Received < 110 || res.Received > 130 {
		t.Fatalf("received %d responses, want about 120", res.Received)
	}
}

// silentServer accepts connections and never reads from them, until the test
// ends.
func silentServer(t *testing.T) string {
	stop := make(chan struct{})
	addr := server(t, func(net.Conn) { <-stop })
	t.Cleanup(func() { close(stop) }) // runs before server's cleanup
	return addr
}

// runWithin runs cfg and fails the test if Run has not returned within limit.
func runWithin(t *testing.T, ctx context.Context, cfg Config, limit time.Duration) *Result {
	t.Helper()
	type out struct {
		res *Result
		err error
	}
	ch := make(chan out, 1)
	go func() { res, err := Run(ctx, cfg); ch <- out{res, err} }()
	select {
	case o := <-ch:
		if o.err != nil {
			t.Fatal(o.err)
		}
		t.Logf("%+v", *o.res)
		return o.res
	case <-time.After(limit):
		t.Fatalf("Run did not return within %v", limit)
	}
	return nil
}

// A server that stops reading fills the socket buffers; Run still returns
// promptly when its context is cancelled, and at the end of the run, and
// counts what the server never answered.
func TestNonReadingServer(t *testing.T) {
	addr := silentServer(t)
	// 1 MiB messages fill the loopback buffers within a few sends.
	cfg := Config{Addr: addr, Conns: 2, QPS: 100, MsgSize: 1 << 20, Mode: "echo", DrainTimeout: 100 * time.Millisecond}

	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(500*time.Millisecond, cancel)
		c := cfg
		c.Duration = time.Hour
		start := time.Now()
		res := runWithin(t, ctx, c, 20*time.Second)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("Run returned %v after start, the context was cancelled after 500ms", d)
		}
		// About 25 MiB were due per connection; at most 4 MiB wait beyond what
		// the kernel holds, the rest count as write errors.
		if res.Sent == 0 || res.Received != 0 || res.WriteErrors == 0 || res.Errors < res.WriteErrors+res.Unanswered {
			t.Errorf("want messages sent, none answered, write errors: %+v", res)
		}
	})
	t.Run("end", func(t *testing.T) {
		c := cfg
		c.Duration = 500 * time.Millisecond
		res := runWithin(t, context.Background(), c, 20*time.Second)
		if res.Sent == 0 || res.Received != 0 || res.Unanswered != res.Sent || res.WriteErrors == 0 || res.Errors < res.Unanswered+res.WriteErrors {
			t.Errorf("want messages sent, none answered, write errors: %+v", res)
		}
	})
}

// Closed loop with more bytes in flight than the socket buffers hold: the
// client keeps reading responses while its sends are blocked, so neither it
// nor the echo server deadlocks.
func TestClosedLoopDeeperThanBuffers(t *testing.T) {
	const buf = 32 << 10 // socket buffers on both sides
	addr := server(t, func(c net.Conn) {
		c.(*net.TCPConn).SetReadBuffer(buf)
		c.(*net.TCPConn).SetWriteBuffer(buf)
		echo(c)
	})
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			rc.Control(func(fd uintptr) {
				syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, buf)
				syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, buf)
			})
			return nil
		}}
		return d.DialContext(ctx, network, addr)
	}
	// 16 × 64 KiB in flight: several times what the buffers hold.
	res := runWithin(t, context.Background(), Config{
		Addr: addr, Conns: 1, Depth: 16, MsgSize: 64 << 10, Mode: "echo", Duration: 300 * time.Millisecond,
		dial: dial,
	}, 20*time.Second)
	if res.Errors != 0 || res.Received == 0 {
		t.Fatalf("closed loop, 32 MiB in flight: %+v", res)
	}
}

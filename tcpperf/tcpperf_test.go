package tcpperf

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/internal/tooltest"
	"github.com/wirespeed/wirespeed/netio"
)

// server runs a server on 127.0.0.1:0 until the test ends. handle is
// called per connection.
func server(t testing.TB, handle func(net.Conn)) string {
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

// clockedLines answers each line after moving clk on by delay, as a server
// taking delay to answer would; with corrupt, it flips a bit of each.
func clockedLines(clk *fakeClock, delay time.Duration, corrupt bool) func(net.Conn) {
	return func(c net.Conn) {
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			if corrupt {
				line[0] ^= 1
			}
			clk.Advance(delay)
			if _, err := c.Write(line); err != nil {
				return
			}
		}
	}
}

// Closed loop against a server that takes exactly 1ms (of the test's
// clock) per answer: every latency is 1ms, the counts follow from the
// duration, and the interval log adds up to the run's histogram.
func TestClosedLoopLatency(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		clk := newFakeClock()
		addr := server(t, clockedLines(clk, time.Millisecond, false))
		var hlog, progress bytes.Buffer
		res, err := RunWith(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 1, Depth: 1, MsgSize: 64, Mode: "line",
			Duration: 1500 * time.Millisecond, Warmup: 200 * time.Millisecond,
			HdrLog: &hlog, Progress: &progress,
		}, nil, clk)
		if err != nil {
			t.Fatal(err)
		}
		// One message a millisecond from 0 to the end at 1.7s; those sent in
		// the warmup are not measured.
		if res.Sent != 1500 || res.Received != 1500 || res.Errors != 0 || res.DurationS != 1.5 || res.AchievedQPS != 1000 {
			t.Errorf("want 1500 sent and received in the measured 1.5s, no errors: %+v", res)
		}
		ref := hdrhistogram.New(1, histMax, 3)
		ref.RecordValue(int64(time.Millisecond))
		want := float64(ref.ValueAtQuantile(50)) / 1e3
		for _, v := range []float64{res.P50, res.P90, res.P99, res.P999, res.P9999} {
			if v != want {
				t.Errorf("percentiles %+v, want all %.3fµs", res, want)
				break
			}
		}
		if res.Max != float64(ref.Max())/1e3 || res.Mean != ref.Mean()/1e3 || res.LatenessMax != 0 {
			t.Errorf("max %.3fµs, mean %.3fµs, lateness %.3fµs; want %.3f, %.3f, 0", res.Max, res.Mean, res.LatenessMax, float64(ref.Max())/1e3, ref.Mean()/1e3)
		}
		// A line a second, and the last one, which covers only the rest
		// of the run, says so (it looked like a second line for the same
		// second, with a rate of its fraction of a second). The second's
		// line is there if the run's goroutine took its tick before the
		// clock, which the server moves, passed the end: on a loaded
		// machine it may not have.
		lines := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n")
		if n := len(lines); n > 2 || !strings.HasSuffix(lines[n-1], " (the rest, to the end of the drain)") || n == 2 && strings.HasSuffix(lines[0], ")") {
			t.Errorf("progress lines:\n%s", progress.String())
		}

		// Merged, the log spans the measurement, and gives its rate: the
		// last response, in the drain, is in the last interval, which
		// ends with the measurement (it ended with the drain).
		if m, err := MergeLogs(bytes.NewReader(hlog.Bytes())); err != nil || m.DurationS != res.DurationS || m.AchievedQPS != res.AchievedQPS {
			t.Errorf("merged: %v, %.3fs at %.1f/s; want the run's %.3fs at %.1f/s", err, m.DurationS, m.AchievedQPS, res.DurationS, res.AchievedQPS)
		}
		// The interval log reads back with HdrHistogram's reader and adds up to
		// the same histogram.
		lr := hdrhistogram.NewHistogramLogReader(&hlog)
		var total, maxNs int64
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
		if total != res.Received || float64(maxNs)/1e3 != res.Max {
			t.Errorf("log holds %d values up to %dns, the run %d up to %.3fµs", total, maxNs, res.Received, res.Max)
		}
	})
}

// Open loop: the schedule, spread over two pacers and four connections,
// goes out whole, every message is answered and checked, and only those
// due after the warmup are measured.
func TestOpenLoopSchedule(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := server(t, echo)
		res, err := RunWith(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 4, Loops: 2, QPS: 400, MsgSize: 10, Mode: "echo",
			Duration: 500 * time.Millisecond, Warmup: 100 * time.Millisecond,
		}, nil, newFakeClock())
		if err != nil {
			t.Fatal(err)
		}
		// 400/s: 240 messages in 600ms, 200 of them in the measured 500ms.
		if res.Sent != 200 || res.SentAll != 240 || res.Received != 200 || res.Errors != 0 || res.AchievedQPS != 400 {
			t.Fatalf("want 200 sent and received in the measurement (240 sent in all) at 400/s, no errors: %+v", res)
		}
		if res.P50 <= 0 || res.Loops != 2 {
			t.Fatalf("no latencies recorded: %+v", res)
		}
	})
}

// On a fake clock that moves only when the loop waits for its next send,
// the loop is idle the whole time: its work takes no time on that clock.
func TestLoopBusy(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := server(t, echo)
		res, err := RunWith(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 4, QPS: 400, Duration: 500 * time.Millisecond,
		}, nil, newFakeClock())
		if err != nil {
			t.Fatal(err)
		}
		// The run reads the clock and the idle time one after the other, so a
		// step of the schedule (2.5ms of 500) may fall between them.
		if res.LoopBusy > 0.01 || res.Received != 200 {
			t.Fatalf("busy %.4f, want 0 (to a step of the schedule): %+v", res.LoopBusy, res)
		}
	})
}

// Responses are checked: a server that flips a bit is caught, every time.
func TestContentChecked(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		clk := newFakeClock()
		addr := server(t, clockedLines(clk, time.Millisecond, true))
		res, err := RunWith(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 2, Depth: 2, Mode: "line", Duration: 20 * time.Millisecond,
		}, nil, clk)
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent == 0 || res.ContentErrors != res.Sent || res.Errors != res.ContentErrors || res.Received != 0 || res.P50 != 0 || res.AchievedQPS != 0 {
			t.Fatalf("want every response a content error, none received or timed: %+v", res)
		}
	})
}

// A connection the server closes gets no more messages: those due on it
// count as unsent, so that sent, unsent and missed make up the schedule.
// The dialer returns each connection once the server's close has come
// (tcpperf's engine: netio's dials cannot wait so), so the loop learns of
// it at its first poll, after the first message.
func TestUnsentOnClosedConn(t *testing.T) {
	addr := server(t, func(c net.Conn) {})
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, a)
		if err == nil {
			c.Read(make([]byte, 1)) // the server's close
		}
		return c, err
	}
	res, err := RunWith(context.Background(), Config{
		Engine: EngineTcpperf, Addr: addr, Conns: 4, QPS: 400, Duration: 500 * time.Millisecond,
	}, dial, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent > 4 || res.Sent+res.Unsent+res.Missed != 200 || res.Received != 0 || res.Errors < res.Unsent {
		t.Fatalf("want the 200 due unsent but the first few, the unsent among the errors: %+v", res)
	}
}

// A server that never answers: everything sent is unanswered, and the run
// ends DrainTimeout after the schedule.
func TestUnanswered(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := server(t, func(c net.Conn) { io.Copy(io.Discard, c) })
		res, err := RunEnv(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 2, QPS: 200, Duration: 200 * time.Millisecond, DrainTimeout: time.Millisecond,
		}, Env{Clock: newFakeClock(), DrainQuiet: SilentQuiet})
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent != 40 || res.Missed != 0 || res.Unanswered != 40 || res.Received != 0 || res.Errors != 40 {
			t.Fatalf("silent server: %+v, want the 40 messages of the schedule sent and unanswered", res)
		}
	})
}

// Unanswered counts the measurement's messages only, as Sent does: the
// warm-up's, unanswered too, are neither sent nor unanswered in the
// result, whether they are outstanding at the end (a silent server) or on
// a connection the server closes (after reading more than the warm-up's
// messages). It read 60 unanswered of 40 sent.
func TestUnansweredMeasuredOnly(t *testing.T) {
	// 2 connections, 200/s: 10 messages each in the warm-up, 20 in the
	// measurement; the closing server closes after 15 of them.
	for name, handle := range unanswering(15) {
		t.Run(name, func(t *testing.T) {
			forEngines(t, func(t *testing.T, engine string) {
				addr := server(t, handle)
				res, err := RunEnv(context.Background(), Config{
					Engine: engine, Addr: addr, Conns: 2, QPS: 200, MsgSize: 64,
					Warmup: 100 * time.Millisecond, Duration: 200 * time.Millisecond,
				}, Env{Clock: newFakeClock(), DrainQuiet: SilentQuiet})
				if err != nil {
					t.Fatal(err)
				}
				if res.Sent == 0 || res.Received != 0 || res.Unanswered != res.Sent || res.Sent+res.Unsent+res.Missed != 40 {
					t.Fatalf("%s server: %+v; want the sent of the 40 due in the measurement unanswered, the warm-up's not counted", name, res)
				}
			})
		})
	}
}

// unanswering returns servers that answer nothing: "silent" reads all it
// is sent, "closing" closes after n 64-byte messages.
func unanswering(n int64) map[string]func(net.Conn) {
	return map[string]func(net.Conn){
		"silent":  func(c net.Conn) { io.Copy(io.Discard, c) },
		"closing": func(c net.Conn) { io.CopyN(io.Discard, c, n*64) },
	}
}

func TestErrors(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Addr: "x", Mode: "http"},
		{Addr: "unix:"}, // no path: a usage error, not a failed dial
		{Addr: "x", MsgSize: -1},
		{Addr: "x", QPS: -1},
	} {
		if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", cfg, err)
		}
	}
	addr := tooltest.RefusingAddr(t)
	res, err := Run(context.Background(), Config{Addr: addr, Conns: 3, QPS: 1000, Duration: time.Millisecond})
	if !errors.Is(err, ErrConnect) || !errors.Is(err, errRefused) || res != nil {
		t.Errorf("closed port: %v, want ErrConnect wrapping ECONNREFUSED", err)
	}
	_, err = RunWith(context.Background(), Config{Addr: "x", Conns: 2}, func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.EMFILE}
	}, nil)
	if !errors.Is(err, ErrFDLimit) || !errors.Is(err, syscall.EMFILE) {
		t.Errorf("dial out of descriptors: %v, want ErrFDLimit wrapping EMFILE", err)
	}
}

// The descriptor check passes within the soft limit and otherwise says
// which limit to raise; it never changes the limit.
func TestFDLimit(t *testing.T) {
	for _, c := range []struct {
		need, soft, hard uint64
		ok               bool
		hint             string
	}{
		{100, 100, 200, true, ""},
		{100, 1024, 1024, true, ""},
		{2000, 1024, 4096, false, "ulimit -n 2000"},
		{5000, 1024, 4096, false, "ulimit -Hn 5000"},
	} {
		err := CheckFDLimit(c.need, c.soft, c.hard)
		if c.ok {
			if err != nil {
				t.Errorf("need %d, soft %d, hard %d: %v", c.need, c.soft, c.hard, err)
			}
			continue
		}
		if !errors.Is(err, ErrFDLimit) || !strings.Contains(err.Error(), c.hint) {
			t.Errorf("need %d, soft %d, hard %d: %v, want ErrFDLimit suggesting %q", c.need, c.soft, c.hard, err, c.hint)
		}
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
			return nil, &net.OpError{Op: "dial", Net: network, Err: errRefused}
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
}

// failingLoopDial is failingDialer for EngineNetio.
func failingLoopDial(keep int) func(ctx context.Context, s *netio.Loops, network, addr string) (*netio.LoopConn, error) {
	var mu sync.Mutex
	n := 0
	return func(ctx context.Context, s *netio.Loops, network, addr string) (*netio.LoopConn, error) {
		mu.Lock()
		n++
		fail := n%keep != 0
		mu.Unlock()
		if fail {
			return nil, &net.OpError{Op: "dial", Net: network, Err: errRefused}
		}
		return s.Dial(ctx, network, addr)
	}
}

// Some connections fail to open (normal at 10k connections): the run goes on
// with the others, all pacers included, and reports the failures.
func TestPartialConnectFailure(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := server(t, echo)
		res, err := RunEnv(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 16, Loops: 16, QPS: 400, Duration: 300 * time.Millisecond,
		}, Env{Dial: failingDialer(4), LoopDial: failingLoopDial(4), Clock: newFakeClock()})
		if err != nil {
			t.Fatal(err)
		}
		if res.ConnectFailures != 12 || res.Connected != 4 || res.Conns != 16 {
			t.Fatalf("want 12 connect failures and 4 connections: %+v", res)
		}
		if !strings.Contains(res.ConnectError, "12 of 16") || !strings.Contains(res.ConnectError, errRefused.Error()) {
			t.Errorf("connect error %q", res.ConnectError)
		}
		if res.Errors != res.ConnectFailures || res.Unanswered != 0 {
			t.Fatalf("errors other than the connect failures: %+v", res)
		}
		// The whole schedule went out on the 4 connections: 400/s for 0.3s.
		if res.Sent != 120 || res.Received != 120 {
			t.Fatalf("sent %d, received %d responses, want 120", res.Sent, res.Received)
		}
	})
}

// smallBuffers dials with 32 KiB socket buffers, so that a peer that does
// not read stops taking data after a few hundred KiB at most.
func smallBuffers(ctx context.Context, network, addr string) (net.Conn, error) {
	const buf = 32 << 10
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		rc.Control(func(fd uintptr) {
			setSockOpt(fd, soRcvbuf, buf)
			setSockOpt(fd, soSndbuf, buf)
		})
		return nil
	}}
	return d.DialContext(ctx, network, addr)
}

// smallLoopBuffers is smallBuffers for EngineNetio: the buffers are set
// on the loop once the connection is open.
func smallLoopBuffers(ctx context.Context, s *netio.Loops, network, addr string) (*netio.LoopConn, error) {
	lc, err := s.Dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	const buf = 32 << 10
	done := make(chan error, 1)
	if err := lc.Do(func(lc *netio.LoopConn) {
		done <- lc.Control(func(fd uintptr) {
			setSockOpt(fd, soRcvbuf, buf)
			setSockOpt(fd, soSndbuf, buf)
		})
	}); err != nil {
		return nil, err
	}
	return lc, <-done
}

// silentServer accepts connections, with 32 KiB receive buffers, and never
// reads from them, until the test ends.
func silentServer(t *testing.T) string {
	stop := make(chan struct{})
	addr := server(t, func(c net.Conn) {
		c.(*net.TCPConn).SetReadBuffer(32 << 10)
		<-stop
	})
	t.Cleanup(func() { close(stop) }) // runs before server's cleanup
	return addr
}

// A server that stops reading fills the socket buffers: what the schedule
// wants beyond 4 MiB per connection counts as write errors, and Run still
// returns when its context is cancelled and at the end of the run, and
// counts what the server never answered (or, stopped, did not wait for). (EngineNetio dials with netio,
// with the system's buffers: they hold 4 MiB at most, too.)
func TestNonReadingServer(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := silentServer(t)
		// 1 MiB messages: 50 MiB per connection and second.
		cfg := Config{Engine: engine, Addr: addr, Conns: 2, QPS: 100, MsgSize: 1 << 20, Mode: "echo", DrainTimeout: time.Millisecond}

		t.Run("cancel", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clk := newFakeClock()
			stopAt := clk.Now().Add(2 * time.Second) // 100 MiB per connection due
			clk.Moved = func(now time.Time) {
				if !now.Before(stopAt) {
					cancel()
				}
			}
			c := cfg
			c.Duration = time.Hour
			res, err := RunWith(ctx, c, smallBuffers, clk)
			if err != nil {
				t.Fatal(err)
			}
			// Stopped, the run does not wait for what is in flight: not
			// unanswered (an error of the server's), but abandoned.
			if res.Sent == 0 || res.Received != 0 || res.WriteErrors == 0 || !res.Interrupted || res.Abandoned != res.Sent || res.Unanswered != 0 || res.Errors != res.WriteErrors {
				t.Errorf("want messages sent, none answered and all abandoned at the stop, write errors: %+v", res)
			}
		})
		t.Run("end", func(t *testing.T) {
			c := cfg
			c.Duration = time.Second
			res, err := RunEnv(context.Background(), c, Env{Dial: smallBuffers, LoopDial: smallLoopBuffers, Clock: newFakeClock(), DrainQuiet: SilentQuiet})
			if err != nil {
				t.Fatal(err)
			}
			// Every message of the schedule was sent or counted as an error.
			if res.Sent+res.WriteErrors != 100 || res.Missed != 0 || res.Received != 0 || res.Unanswered != res.Sent || res.WriteErrors == 0 || res.Errors != res.Unanswered+res.WriteErrors {
				t.Errorf("want 100 messages sent or failed, none answered, write errors: %+v", res)
			}
		})
	})
}

// Depth is the closed loop's: in open loop it does not raise what may
// wait per connection. Depth 1000 of 1 MiB messages let 1000 MiB wait on
// a connection whose server stops reading (the whole schedule of 100 MiB
// here was queued, no write error), where the bound is 4 MiB.
func TestOpenLoopDepthNoPendingBound(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := silentServer(t)
		const size = 1 << 20
		res, err := RunEnv(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 1, QPS: 100, Depth: 1000, MsgSize: size,
			Duration: time.Second, DrainTimeout: time.Millisecond,
		}, Env{Dial: smallBuffers, LoopDial: smallLoopBuffers, Clock: newFakeClock(), DrainQuiet: SilentQuiet})
		if err != nil {
			t.Fatal(err)
		}
		// The 4 MiB wait, and a message partly in the socket's 32 KiB
		// buffers.
		if res.Sent+res.WriteErrors != 100 || res.Sent > minMaxPending/size+1 || res.Received != 0 {
			t.Errorf("want at most %d of the 100 messages queued (4 MiB), the rest write errors: %+v", minMaxPending/size+1, res)
		}
	})
}

// The messages refused because too many wait on their connection are
// write errors of the measurement only, as the counts are: with the
// warm-up's, sent and the write errors made up more than the schedule's
// measurement (46 write errors for 30 messages, the warm-up's 16 refused
// counted).
func TestRefusedMeasuredOnly(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := silentServer(t)
		// 1 MiB messages, 20 in the warm-up and 30 in the measurement, on
		// a connection that takes a few.
		res, err := RunEnv(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 1, QPS: 100, MsgSize: 1 << 20,
			Warmup: 200 * time.Millisecond, Duration: 300 * time.Millisecond, DrainTimeout: time.Millisecond,
		}, Env{Dial: smallBuffers, LoopDial: smallLoopBuffers, Clock: newFakeClock(), DrainQuiet: SilentQuiet})
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent+res.WriteErrors+res.Unsent+res.Missed != 30 || res.WriteErrors == 0 || res.Received != 0 {
			t.Errorf("want the 30 messages of the measurement sent or refused (write errors), none answered: %+v", res)
		}
	})
}

// Closed loop with more bytes in flight than the socket buffers hold: the
// client keeps reading responses while its sends are blocked, so neither it
// nor the echo server deadlocks. The run ends once 4 MiB came back.
func TestClosedLoopDeeperThanBuffers(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		if engine == EngineNetio {
			// It deadlocks: the echo server blocks writing to a client
			// that does not read, and stops reading it.
			t.Skip("netio reads no connection whose output waits for room")
		}
		const buf = 32 << 10 // socket buffers on both sides
		clk := newFakeClock()
		var echoed atomic.Int64
		enough := make(chan struct{})
		var once sync.Once
		addr := server(t, func(c net.Conn) {
			c.(*net.TCPConn).SetReadBuffer(buf)
			c.(*net.TCPConn).SetWriteBuffer(buf)
			b := make([]byte, 16<<10)
			for {
				n, err := c.Read(b)
				if _, werr := c.Write(b[:n]); err != nil || werr != nil {
					return
				}
				if echoed.Add(int64(n)) >= 4<<20 {
					once.Do(func() { close(enough) })
				}
			}
		})
		const duration = time.Second
		go func() { <-enough; clk.Advance(duration) }()
		// 16 × 64 KiB in flight: several times what the buffers hold.
		res, err := RunEnv(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 1, Depth: 16, MsgSize: 64 << 10, Mode: "echo", Duration: duration,
		}, Env{Dial: smallBuffers, LoopDial: smallLoopBuffers, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		// Up to Depth messages go out after the end, unmeasured.
		if res.Errors != 0 || res.Received < 4<<20/(64<<10) || res.Sent < res.Received || res.Sent > res.Received+16 {
			t.Fatalf("closed loop, 1 MiB in flight: %+v", res)
		}
	})
}

// Messages carry the last digits of their sequence number in hexadecimal.
func TestPutHex(t *testing.T) {
	for _, c := range []struct {
		n    int
		seq  uint64
		want string
	}{
		{16, 0x0123456789abcdef, "0123456789abcdef"},
		{4, 0x12345, "2345"},
		{3, 0xabc, "abc"},
		{1, 0x1f, "f"},
		{16, 7, "0000000000000007"},
	} {
		b := make([]byte, c.n)
		putHex(b, c.seq)
		if string(b) != c.want {
			t.Errorf("putHex(%d bytes, %#x) = %q, want %q", c.n, c.seq, b, c.want)
		}
	}
}

// A run stopped while it connects returns an error wrapping the
// context's, naming how many connections were open, and no result: it
// returned one that counted the dials cut short by the stop as the
// server's connect failures ("1 of 3 conns", 2 connect errors), and its
// tool CPU over the few microseconds between the stop and the result
// (209% of one core once).
func TestInterruptedConnecting(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := server(t, echo)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var n atomic.Int32
		blocked := make(chan struct{}, 3)
		first := make(chan struct{}) // closed once the first dial has connected
		// The first dial connects, the others wait for the stop, which
		// comes once both of them wait, after the first.
		wait := func(ctx context.Context) error {
			<-first
			blocked <- struct{}{}
			if len(blocked) == 2 {
				cancel()
			}
			<-ctx.Done()
			return ctx.Err()
		}
		env := Env{
			Dial: func(ctx context.Context, network, a string) (net.Conn, error) {
				if n.Add(1) > 1 {
					return nil, wait(ctx)
				}
				defer close(first)
				var d net.Dialer
				return d.DialContext(ctx, network, a)
			},
			LoopDial: func(ctx context.Context, s *netio.Loops, network, a string) (*netio.LoopConn, error) {
				if n.Add(1) > 1 {
					return nil, wait(ctx)
				}
				defer close(first)
				return s.Dial(ctx, network, a)
			},
		}
		res, err := RunEnv(ctx, Config{Engine: engine, Addr: addr, Conns: 3, QPS: 1000, Duration: time.Second}, env)
		// EngineNetio's first connection may be cut short too, in its
		// set-up on the loop, after the dial.
		want := "1 of 3 connections open"
		if engine == EngineNetio && strings.Contains(fmt.Sprint(err), "0 of 3") {
			want = "0 of 3 connections open"
		}
		if !errors.Is(err, context.Canceled) || res != nil || !strings.Contains(fmt.Sprint(err), want) {
			t.Fatalf("stopped while connecting: %v, %+v; want context.Canceled, 1 of 3 open, no result", err, res)
		}
	})
}

// A server that ends its stream at once (a half-close: it still reads)
// fails the connection, on either engine: a read error, its messages
// unsent. On EngineNetio the end could come before the connection was
// set up on its loop, and was lost: the run sent on, and its messages
// went unanswered. The dials here return only once the end has come
// (the netio one once the loop has seen it), so that it comes first.
func TestHalfClosedAtOnce(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := server(t, func(c net.Conn) {
			c.(*net.TCPConn).CloseWrite()
			io.Copy(io.Discard, c)
		})
		env := Env{Clock: newFakeClock(), Dial: func(ctx context.Context, network, a string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, network, a)
			if err == nil {
				if _, rerr := c.Read(make([]byte, 1)); rerr != io.EOF {
					c.Close()
					return nil, fmt.Errorf("read %v, want the end", rerr)
				}
			}
			return c, err
		}, LoopDial: func(ctx context.Context, s *netio.Loops, network, a string) (*netio.LoopConn, error) {
			lc, err := s.Dial(ctx, network, a)
			for err == nil {
				eof := make(chan bool, 1)
				if err = lc.Do(func(lc *netio.LoopConn) { eof <- lc.EOF() }); err == nil && <-eof {
					break
				}
				time.Sleep(time.Millisecond) // a wait for the end, not a bound
			}
			return lc, err
		}}
		res, err := RunEnv(context.Background(), Config{Engine: engine, Addr: addr, QPS: 100, Duration: 300 * time.Millisecond}, env)
		if err != nil {
			t.Fatal(err)
		}
		if res.ReadErrors != 1 || res.Sent != 0 || res.Unsent != 30 || res.Unanswered != 0 {
			t.Errorf("want 1 read error, the 30 messages unsent: %+v", res)
		}
	})
}

// A connection closed on its loop before the call that sets it up runs
// (a server's reset at once) fails to connect at once: the call never
// runs, and its dial waited for the dial timeout (5 s by default), then
// failed with "context deadline exceeded". The dial here has the loop
// close the connection, in a call queued before the run's.
func TestNetioClosedBeforeSetUp(t *testing.T) {
	addr := server(t, echo)
	env := Env{Clock: newFakeClock(), LoopDial: func(ctx context.Context, s *netio.Loops, network, a string) (*netio.LoopConn, error) {
		lc, err := s.Dial(ctx, network, a)
		if err == nil {
			err = lc.Do(func(lc *netio.LoopConn) { lc.Close() })
		}
		return lc, err
	}}
	_, err := RunEnv(context.Background(), Config{Engine: EngineNetio, Addr: addr, QPS: 100, Duration: 300 * time.Millisecond, DialTimeout: time.Minute}, env) // a hang guard
	if !errors.Is(err, ErrConnect) || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "closed") {
		t.Errorf("%v, want ErrConnect, the connection closed", err)
	}
}

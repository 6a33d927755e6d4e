package tcpperf

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"math"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// forEngines runs f on each engine.
func forEngines(t *testing.T, f func(t *testing.T, engine string)) {
	for _, e := range []string{EngineTcpperf, EngineNetio} {
		t.Run(e, func(t *testing.T) { f(t, e) })
	}
}

// Hundreds of connections on three loops, against a real echo server on
// loopback: the whole schedule goes out, every response comes back in
// order (each is checked against its sequence number) and none is lost.
func TestLoopsManyConns(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		var mu sync.Mutex
		var perConn []int64 // bytes echoed on each connection of the run
		addr := server(t, func(c net.Conn) {
			b := make([]byte, 4096)
			var n64 int64
			defer func() { mu.Lock(); perConn = append(perConn, n64); mu.Unlock() }()
			for {
				n, err := c.Read(b)
				if _, werr := c.Write(b[:n]); err != nil || werr != nil {
					return
				}
				n64 += int64(n)
			}
		})
		for _, loops := range []int{1, 3} {
			mu.Lock()
			perConn = nil
			mu.Unlock()
			res, err := RunWith(context.Background(), Config{
				Engine: engine, Addr: addr, Conns: 300, Loops: loops, QPS: 30000, MsgSize: 40,
				Duration: 100 * time.Millisecond, Warmup: 20 * time.Millisecond,
			}, nil, newFakeClock())
			if err != nil {
				t.Fatal(err)
			}
			// 30000/s: 3600 messages in 120ms, the 3000 of the measurement
			// counted.
			if res.Sent != 3000 || res.Received != 3000 || res.Errors != 0 || res.Connected != 300 || res.Loops != loops {
				t.Errorf("%d loops: want 3000 sent and received in the measurement, no errors: %+v", loops, res)
			}
			// Each connection had its 12 messages: the schedule is dealt to
			// all of them in turn. (Run returns after closing its sockets; the
			// server's handlers note their counts soon after.)
			for {
				mu.Lock()
				done := len(perConn) == 300
				mu.Unlock()
				if done {
					break
				}
				runtime.Gosched()
			}
			mu.Lock()
			for i, n := range perConn {
				if n != 12*40 {
					t.Errorf("%d loops: connection %d carried %d bytes, want 12 messages of 40", loops, i, n)
					break
				}
			}
			mu.Unlock()
		}
	})
}

// The same on the system clock, through Run, closed loop: every
// connection keeps its messages in flight until the end, and the drain
// collects every response. How many fall in the 50ms is the machine's (a
// loop that starts after them sends its first messages after the end,
// not measured): every connection sends its Depth, every measured one is
// received, and nothing is lost. (That the closed loop measures, to the
// message, is TestClosedLoopLatency's, on a fake clock.) The drain ends when
// the last response is in: its minute is a guard against a hang.
func TestLoopsClosedLoopRealClock(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := server(t, echo)
		res, err := Run(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 200, Loops: 2, Depth: 4, MsgSize: 64, Duration: 50 * time.Millisecond,
			DrainTimeout: time.Minute,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.SentAll < 200*4 || res.Received != res.Sent || res.Errors != 0 || res.Unanswered != 0 {
			t.Fatalf("closed loop on 200 connections: want 800 sent at least, every measured one received, no errors: %+v", res)
		}
	})
}

// trickle echoes what it reads one byte per write, so responses arrive
// split at every byte.
func trickle(c net.Conn) {
	c.(*net.TCPConn).SetNoDelay(true)
	b := make([]byte, 4096)
	for {
		n, err := c.Read(b)
		for i := 0; i < n; i++ {
			if _, werr := c.Write(b[i : i+1]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Responses split anywhere are put back together: the counts are exact
// and no response is taken for a wrong one.
func TestSplitResponses(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := server(t, trickle)
		res, err := RunWith(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 5, QPS: 2000, MsgSize: 33, Duration: 100 * time.Millisecond,
		}, nil, newFakeClock())
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent != 200 || res.Received != 200 || res.Errors != 0 {
			t.Fatalf("want 200 sent and received intact: %+v", res)
		}
	})
}

// The tool's CPU per message is the process's CPU time from the start of
// the measurement to the end of the drain over the messages due in it.
// The fake CPU clock advances 1ms per reading: at the start, at the
// start of the measurement, at the end.
func TestCPUPerMessage(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := server(t, echo)
		var reads time.Duration
		res, err := RunEnv(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 2, QPS: 1000, Duration: 200 * time.Millisecond,
		}, Env{Clock: newFakeClock(), CPU: func() time.Duration { reads += time.Millisecond; return reads }})
		if err != nil {
			t.Fatal(err)
		}
		if reads != 3*time.Millisecond || res.CPUPerMsg != 5 {
			t.Fatalf("%v of CPU readings, %.3fµs per message; want 3 readings, 1ms over 200 messages = 5µs", reads, res.CPUPerMsg)
		}
	})
}

// A loop pinned to CPU 0 runs; a CPU the machine does not have is a
// configuration error, and so is any CPU for engine netio where netio's
// loops pin nothing (its portable loops).
func TestPinning(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := server(t, echo)
		if engine == EngineNetio && !netioPins {
			_, err := RunWith(context.Background(), Config{Engine: engine, Addr: addr, CPUs: []int{0}, QPS: 100, Duration: 100 * time.Millisecond}, nil, newFakeClock())
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("pinned where netio pins nothing: %v, want ErrConfig", err)
			}
			return
		}
		res, err := RunWith(context.Background(), Config{Engine: engine, Addr: addr, Conns: 2, Loops: 2, CPUs: []int{0}, QPS: 100, Duration: 100 * time.Millisecond}, nil, newFakeClock())
		if err != nil || res.Received != 10 || res.Errors != 0 {
			t.Fatalf("pinned to CPU 0: %v, %+v", err, res)
		}
		_, err = RunWith(context.Background(), Config{Engine: engine, Addr: addr, Conns: 2, CPUs: []int{1 << 12}, QPS: 100, Duration: 100 * time.Millisecond}, nil, newFakeClock())
		if !errors.Is(err, ErrConfig) || !errors.Is(err, os.ErrInvalid) || !strings.Contains(err.Error(), "CPU 4096") {
			t.Fatalf("pinned to CPU 4096: %v, want ErrConfig wrapping os.ErrInvalid, naming the CPU", err)
		}
	})
}

// Out of ephemeral ports: the check says how many the range has and how
// to widen it (a dial failing with EADDRNOTAVAIL: TestPortsDial).
func TestPorts(t *testing.T) {
	lo, hi, err := ParsePortRange("32768\t60999\n")
	if err != nil || lo != 32768 || hi != 60999 {
		t.Fatalf("ParsePortRange: %d, %d, %v", lo, hi, err)
	}
	for _, bad := range []string{"", "1", "a b", "60999 32768", "1 2 3"} {
		if _, _, err := ParsePortRange(bad); err == nil {
			t.Errorf("ParsePortRange(%q) did not fail", bad)
		}
	}
	if err := CheckPorts(28232, lo, hi); err != nil {
		t.Errorf("28232 connections in 28232 ports: %v", err)
	}
	err = CheckPorts(28233, lo, hi)
	if !errors.Is(err, ErrPorts) || !contains(err.Error(), "32768-60999 has 28232", "ip_local_port_range") {
		t.Errorf("28233 connections in 28232 ports: %v", err)
	}
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// WaitBatch on a fake clock (where a sleep ends exactly when asked): the
// loop wakes when its next send is Batch late and sends all that are due,
// so the lateness, from each message's intended time, runs from 0 to
// Batch and is part of each latency; the whole schedule goes out.
func TestBatchLateness(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := server(t, echo)
		var hlog bytes.Buffer
		res, err := RunWith(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 4, QPS: 1000, MsgSize: 16, Wait: WaitBatch, Batch: 10 * time.Millisecond,
			Duration: 500 * time.Millisecond, HdrLog: &hlog,
		}, nil, newFakeClock())
		if err != nil {
			t.Fatal(err)
		}
		// One message a millisecond, woken for every eleventh: lateness 10ms
		// down to 0.
		if res.Sent != 500 || res.Received != 500 || res.Errors != 0 {
			t.Fatalf("want 500 sent and measured, no errors: %+v", res)
		}
		if res.LatenessMax < 9.99e3 || res.LatenessMax > 10.01e3 || res.LatenessP50 < 4.99e3 || res.LatenessP50 > 5.01e3 {
			t.Errorf("lateness p50 %.0fµs max %.0fµs, want 5000 and 10000", res.LatenessP50, res.LatenessMax)
		}
		if res.P50 < res.LatenessP50 || res.Max < res.LatenessMax {
			t.Errorf("latency p50 %.0fµs max %.0fµs below the lateness %.0fµs %.0fµs: measured from the send, not the intended time", res.P50, res.Max, res.LatenessP50, res.LatenessMax)
		}
		if res.Wait != WaitBatch || res.BatchUs != 10000 || res.Arrival != ArrivalRead {
			t.Errorf("wait %s batch %gµs arrival %s, want batch 10000 read (a fake clock)", res.Wait, res.BatchUs, res.Arrival)
		}
		want := "[tcpperf wait batch 10ms, arrival read, 1 loops]"
		if engine == EngineNetio {
			want = "[tcpperf wait batch 10ms, arrival read, 1 loops, engine netio]"
		}
		if !strings.Contains(hlog.String(), want) {
			t.Errorf("the interval log does not say how the loop waited:\n%s", hlog.String())
		}
	})
}

// Batch is WaitBatch's alone and at most 10ms (a 1s window ran as one
// of 10-70ms, ended by the runtime's preemption signals, and was
// reported as batch 1s; math.MaxInt64 overflowed and never slept), the
// arrival is kernel or read, a rate is a number its schedule can hold
// (NaN ran for ever, 1e-12 overflowed the interval, +Inf flooded) and
// the measurement holds one send interval at least; Check says so
// without connecting.
func TestBatchConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Addr: "127.0.0.1:1", Batch: time.Millisecond},
		{Addr: "127.0.0.1:1", Wait: WaitBatch, Batch: -1},
		{Addr: "127.0.0.1:1", QPS: 1000, Wait: WaitBatch, Batch: 10*time.Millisecond + 1},
		{Addr: "127.0.0.1:1", QPS: 1000, Wait: WaitBatch, Batch: time.Second},
		{Addr: "127.0.0.1:1", QPS: 1000, Wait: WaitBatch, Batch: math.MaxInt64},
		{Addr: "127.0.0.1:1", QPS: 1000, Wait: WaitBatch, Batch: time.Second, Engine: EngineNetio},
		{Addr: "127.0.0.1:1", Arrival: "later"},
		{Addr: "127.0.0.1:1", QPS: math.NaN()},
		{Addr: "127.0.0.1:1", QPS: math.Inf(1)},
		{Addr: "127.0.0.1:1", QPS: 1e-12},
		{Addr: "127.0.0.1:1", QPS: -1},
		{Addr: "127.0.0.1:1", QPS: 1000, Duration: time.Millisecond - 1}, // 10⁹ msg/s from one send in 1ns
		{Addr: "127.0.0.1:1", QPS: 1e-6},                                 // 10s, one send in 11 days
	} {
		if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", cfg, err)
		}
		if err := cfg.Check(); !errors.Is(err, ErrConfig) {
			t.Errorf("Check(%+v): %v, want ErrConfig", cfg, err)
		}
	}
	// TLS over a Unix socket without a ServerName nor InsecureSkipVerify,
	// which crypto/tls refuses at every handshake: it failed to connect,
	// ErrConnect, as if the server were at fault.
	if err := (Config{Addr: "unix:/nonexistent.sock", TLS: &tls.Config{}}).Check(); !errors.Is(err, ErrConfig) {
		t.Errorf("TLS over a Unix socket with no server name: %v, want ErrConfig", err)
	}
	for _, tc := range []*tls.Config{{ServerName: "localhost"}, {InsecureSkipVerify: true}} {
		if err := (Config{Addr: "unix:/nonexistent.sock", TLS: tc}).Check(); err != nil {
			t.Errorf("TLS over a Unix socket, %+v: %v", tc, err)
		}
	}
	if err := (Config{Addr: "127.0.0.1:1", QPS: 1000, Wait: WaitBatch, Batch: 10 * time.Millisecond}).Check(); err != nil {
		t.Errorf("batch 10ms: %v", err)
	}
	if err := (Config{Addr: "127.0.0.1:1", QPS: 1e-6, Duration: 1e6 * time.Second}).Check(); err != nil {
		t.Errorf("one message in 11 days: %v", err)
	}
	if err := (Config{Addr: "127.0.0.1:1", QPS: 1000, Duration: time.Millisecond}).Check(); err != nil {
		t.Errorf("one send in 1ms at 1000 msg/s: %v", err)
	}
}

// WaitBatch on the system clock: the whole schedule goes out and every
// response comes back, timed by the kernel (when read with EngineNetio).
// A loop behind its schedule sends late, up to the drain's end after the
// end: the drain's minute (a guard against a hang; it ends when the last
// response is in) keeps a slow machine from missing sends or answers.
func TestBatchRealClock(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := server(t, echo)
		res, err := Run(context.Background(), Config{
			Engine: engine, Addr: addr, Conns: 20, QPS: 2000, MsgSize: 32, Wait: WaitBatch,
			Duration: 100 * time.Millisecond, Warmup: 20 * time.Millisecond, DrainTimeout: time.Minute,
		})
		if err != nil {
			t.Fatal(err)
		}
		// 2000/s: 240 messages in 120ms, the 200 of the measurement counted.
		arrival := ArrivalKernel
		if engine == EngineNetio {
			arrival = ArrivalRead
		}
		if res.Sent != 200 || res.Received != 200 || res.Errors != 0 || res.Arrival != arrival || res.BatchUs != 400 || res.Engine != engine {
			t.Fatalf("want 200 sent and received in the measurement, no errors, %s arrival, batch 400µs: %+v", arrival, res)
		}
	})
}

// With Wait unset the run chooses it by its load, and says so: batch
// where a loop's share of the rate would have WaitAdaptive spin all the
// time (1/(Spin+50µs) a second and up), adaptive below, sleep with no
// Spin; a Wait given is kept.
func TestWaitChosen(t *testing.T) {
	addr := server(t, echo)
	for _, tc := range []struct {
		cfg    Config
		want   Wait
		chosen bool
	}{
		{Config{QPS: 20000, Conns: 4}, WaitBatch, true},
		{Config{QPS: 12500, Conns: 4}, WaitBatch, true},
		{Config{QPS: 12000, Conns: 4}, WaitAdaptive, true},
		{Config{QPS: 20000, Conns: 4, Loops: 2}, WaitAdaptive, true},
		{Config{QPS: 20000, Conns: 4, Spin: 100 * time.Microsecond}, WaitBatch, true},
		{Config{QPS: 5000, Conns: 4, Spin: 200 * time.Microsecond}, WaitBatch, true},
		{Config{QPS: 20000, Conns: 4, Spin: -1}, WaitSleep, true},
		{Config{QPS: 20000, Conns: 4, Wait: WaitSpin}, WaitSpin, false},
	} {
		cfg := tc.cfg
		cfg.Addr, cfg.MsgSize, cfg.Duration = addr, 16, 20*time.Millisecond
		res, err := RunWith(context.Background(), cfg, nil, newFakeClock())
		if err != nil {
			t.Fatal(err)
		}
		if res.Wait != tc.want || res.WaitChosen != tc.chosen {
			t.Errorf("%+v: wait %s chosen %v, want %s %v", tc.cfg, res.Wait, res.WaitChosen, tc.want, tc.chosen)
		}
	}
}

// In closed loop the loops have no schedule: they sleep until responses
// come, and the wait chosen says so (it said adaptive, the open loop's
// choice at a low rate, which polls before sends that closed loop does
// not schedule). The system clock: a fake one moves only with a
// schedule or a server that moves it.
func TestWaitChosenClosedLoop(t *testing.T) {
	addr := server(t, echo)
	forEngines(t, func(t *testing.T, engine string) {
		res, err := Run(context.Background(), Config{Engine: engine, Addr: addr, Conns: 2, MsgSize: 16, Duration: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if res.Wait != WaitSleep || !res.WaitChosen || res.TargetQPS != 0 {
			t.Errorf("closed loop: wait %s chosen %v, want sleep chosen: %+v", res.Wait, res.WaitChosen, res)
		}
	})
}

// In closed loop an explicit WaitAdaptive, WaitSend or WaitBatch, which
// poll or batch only around sends the closed loop does not schedule,
// sleeps as the loops do: the result said adaptive or send (not chosen),
// or "batch 400µs" with the kernel's arrival, which did not run (the
// tcpperf engine's loops slept in epoll until each response came, never
// batching), and EngineNetio refused adaptive and send with ErrConfig
// where EngineTcpperf ran them. On both engines it says sleep, chosen
// (the text: "waiting sleep (closed loop: for responses)"), no batch
// window and responses timed at read, as an unset Wait does. WaitSpin,
// which closed loop keeps on EngineTcpperf (its loops poll), stays as
// given there and is refused by EngineNetio, which cannot poll.
func TestWaitGivenClosedLoop(t *testing.T) {
	addr := server(t, echo)
	forEngines(t, func(t *testing.T, engine string) {
		for _, tc := range []struct {
			wait, want Wait
			batch      time.Duration
			chosen     bool
		}{
			{WaitAdaptive, WaitSleep, 0, true},
			{WaitSend, WaitSleep, 0, true},
			{WaitBatch, WaitSleep, 0, true},
			{WaitBatch, WaitSleep, 200 * time.Microsecond, true}, // bench net -wait batch -batch 200us
			{WaitSleep, WaitSleep, 0, false},
			{WaitSpin, WaitSpin, 0, false},
		} {
			cfg := Config{Engine: engine, Addr: addr, Conns: 1, MsgSize: 16, Duration: 20 * time.Millisecond, Wait: tc.wait, Batch: tc.batch}
			res, err := Run(context.Background(), cfg)
			if engine == EngineNetio && tc.wait == WaitSpin {
				if !errors.Is(err, ErrConfig) {
					t.Errorf("closed loop, wait spin: %v, want ErrConfig", err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("closed loop, wait %s batch %v: %v", tc.wait, tc.batch, err)
			}
			if res.Wait != tc.want || res.WaitChosen != tc.chosen || res.TargetQPS != 0 || res.BatchUs != 0 || res.Arrival != ArrivalRead {
				t.Errorf("closed loop, wait %s batch %v: result wait %s chosen %v batch %gµs arrival %s, want %s %v, no batch, read",
					tc.wait, tc.batch, res.Wait, res.WaitChosen, res.BatchUs, res.Arrival, tc.want, tc.chosen)
			}
		}
		// A negative batch is still refused.
		if err := (Config{Engine: engine, Addr: addr, Wait: WaitBatch, Batch: -1}).Check(); !errors.Is(err, ErrConfig) {
			t.Errorf("closed loop, batch -1: %v, want ErrConfig", err)
		}
		// The kernel's arrival, asked for, is kept where the engine reads it.
		if engine == EngineTcpperf {
			res, err := Run(context.Background(), Config{Engine: engine, Addr: addr, MsgSize: 16, Duration: 20 * time.Millisecond, Wait: WaitBatch, Arrival: ArrivalKernel})
			if err != nil {
				t.Fatal(err)
			}
			if res.Wait != WaitSleep || res.Arrival != ArrivalKernel {
				t.Errorf("closed loop, wait batch, arrival kernel: wait %s arrival %s", res.Wait, res.Arrival)
			}
		}
		// In open loop, they are kept as given (EngineNetio refuses
		// those that poll).
		for _, w := range []Wait{WaitAdaptive, WaitSend, WaitBatch} {
			res, err := RunWith(context.Background(), Config{Engine: engine, Addr: addr, QPS: 1000, MsgSize: 16, Duration: 20 * time.Millisecond, Wait: w}, nil, newFakeClock())
			if engine == EngineNetio && w != WaitBatch {
				if !errors.Is(err, ErrConfig) {
					t.Errorf("open loop, wait %s: %v, want ErrConfig", w, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Wait != w || res.WaitChosen {
				t.Errorf("open loop, wait %s: result wait %s chosen %v", w, res.Wait, res.WaitChosen)
			}
		}
	})
}

// EngineNetio waits only by sleeping and times responses only when read:
// a wait that polls, or kernel arrival, is a configuration error, and a
// wait chosen by the load is batch or sleep. An unknown engine is refused.
func TestEngineConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Addr: "127.0.0.1:1", Engine: "gnet"},
		{Addr: "127.0.0.1:1", Engine: EngineNetio, Wait: WaitSpin},
		{Addr: "127.0.0.1:1", Engine: EngineNetio, QPS: 1000, Wait: WaitAdaptive}, // closed loop sleeps: TestWaitGivenClosedLoop
		{Addr: "127.0.0.1:1", Engine: EngineNetio, QPS: 1000, Wait: WaitSend},
		{Addr: "127.0.0.1:1", Engine: EngineNetio, Wait: WaitBatch, Arrival: ArrivalKernel},
	} {
		if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", cfg, err)
		}
	}
	addr := server(t, echo)
	for _, tc := range []struct {
		cfg  Config
		want Wait
	}{
		{Config{QPS: 20000, Conns: 4}, WaitBatch},
		{Config{QPS: 12000, Conns: 4}, WaitSleep},
		{Config{QPS: 20000, Conns: 4, Spin: -1}, WaitSleep},
	} {
		cfg := tc.cfg
		cfg.Engine, cfg.Addr, cfg.MsgSize, cfg.Duration = EngineNetio, addr, 16, 20*time.Millisecond
		res, err := RunWith(context.Background(), cfg, nil, newFakeClock())
		if err != nil {
			t.Fatal(err)
		}
		if res.Wait != tc.want || !res.WaitChosen || res.Arrival != ArrivalRead || res.Engine != EngineNetio || res.Errors != 0 {
			t.Errorf("%+v: wait %s chosen %v arrival %s engine %s, want %s chosen, read, netio: %+v", tc.cfg, res.Wait, res.WaitChosen, res.Arrival, res.Engine, tc.want, res)
		}
	}
}

// A rate far above what the tool can send (10^12 messages a second) does
// not stretch the run: sending stops DrainTimeout after the schedule's
// end, and the messages due and not sent by then are missed. Sent, not taken (too many
// waiting: write errors) and missed make up the whole schedule. (It used to send the 10^11 messages due, however
// long that took, deaf to ctx.)
func TestRateBeyondReach(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addr := server(t, echo)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cfg := Config{Engine: engine, Addr: addr, QPS: 1e12, Duration: 100 * time.Millisecond, DrainTimeout: 100 * time.Millisecond, MsgSize: 16}
		res, err := Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if ctx.Err() != nil {
			t.Fatal("the run did not end within a minute")
		}
		want := 0.1 * 1e12
		if total := float64(res.Sent + res.WriteErrors + res.Missed); res.Missed == 0 || math.Abs(total-want) > 1 {
			t.Fatalf("sent %d, not taken (write errors) %d, missed %d: %.0f in all, want %.0f", res.Sent, res.WriteErrors, res.Missed, total, want)
		}
	})
}

// Each loop is an OS thread: more than a thousand are refused (the
// runtime dies past 10,000 threads), but only those the connections
// would have (Loops beyond Conns is as many as Conns).
func TestLoopsBound(t *testing.T) {
	if err := (Config{Addr: "x", Conns: 2000, Loops: 2000}).Check(); !errors.Is(err, ErrConfig) {
		t.Errorf("2000 loops: %v, want ErrConfig", err)
	}
	if err := (Config{Addr: "x", Conns: 10, Loops: 100000}).Check(); err != nil {
		t.Errorf("100000 loops over 10 connections: %v, want 10 loops", err)
	}
}

// A warm-up and a duration whose sum overflows the run's nanoseconds are
// refused: -duration 2562047h -warmup 1h ran nothing and exited 0, with
// "9223369200.0s measured".
func TestSpanBound(t *testing.T) {
	for _, cfg := range []Config{
		{Addr: "x", Duration: 2562047 * time.Hour, Warmup: time.Hour},
		{Addr: "x", Duration: time.Second, DrainTimeout: 1<<63 - 1},
		{Addr: "x", Duration: time.Second, Warmup: 1<<63 - 1},
	} {
		if err := cfg.Check(); !errors.Is(err, ErrConfig) {
			t.Errorf("warm-up %v, duration %v, drain %v: %v, want ErrConfig", cfg.Warmup, cfg.Duration, cfg.DrainTimeout, err)
		}
	}
}

// A closed loop's depth is bounded by what a connection may have in
// flight: 1000 1 MiB messages took 2.9 GB and 25s for a run of 0.7s (its
// loop queued them all before it could read or stop), and a depth of
// 100,000,000 counted write errors beyond 1Mi.
func TestDepthBound(t *testing.T) {
	for _, cfg := range []Config{
		{Addr: "x", Depth: 1000, MsgSize: 1 << 20},
		{Addr: "x", Depth: 100_000_000, MsgSize: 1},
	} {
		if err := cfg.Check(); !errors.Is(err, ErrConfig) {
			t.Errorf("depth %d of %d bytes: %v, want ErrConfig", cfg.Depth, cfg.MsgSize, err)
		}
	}
	for _, cfg := range []Config{
		{Addr: "x", Depth: 64, MsgSize: 1 << 20},
		{Addr: "x", Depth: 1 << 20, MsgSize: 64},
		{Addr: "x", Depth: 100_000_000, MsgSize: 1 << 20, QPS: 10}, // open loop: no depth
	} {
		if err := cfg.Check(); err != nil {
			t.Errorf("depth %d of %d bytes: %v", cfg.Depth, cfg.MsgSize, err)
		}
	}
}

// Spin is at most 10ms, refused alike on each engine and with every wait
// (a spin near math.MaxInt64 overflowed Spin + 50µs: an adaptive run
// then never set its timer, sent nothing and never ended, and a run left
// to choose took batch at any rate); Check says so without connecting.
func TestSpinConfig(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		for _, spin := range []time.Duration{10*time.Millisecond + 1, time.Hour, math.MaxInt64 - minNap + 1, math.MaxInt64} {
			for _, wait := range []Wait{"", WaitAdaptive, WaitSend, WaitSleep, WaitSpin, WaitBatch} {
				for _, qps := range []float64{0, 100} {
					cfg := Config{Addr: "127.0.0.1:1", Engine: engine, QPS: qps, Spin: spin, Wait: wait}
					err := cfg.Check()
					if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "spin") {
						t.Errorf("Check(spin %v, wait %q, qps %g): %v, want ErrConfig about the spin", spin, wait, qps, err)
					}
					if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) {
						t.Errorf("Run(spin %v, wait %q, qps %g): %v, want ErrConfig", spin, wait, qps, err)
					}
				}
			}
		}
		for _, wait := range []Wait{"", WaitSleep, WaitBatch} {
			if err := (Config{Addr: "127.0.0.1:1", Engine: engine, QPS: 100, Spin: 10 * time.Millisecond, Wait: wait}).Check(); err != nil {
				t.Errorf("spin 10ms, wait %q: %v", wait, err)
			}
		}
	})
	if err := (Config{Addr: "127.0.0.1:1", Engine: EngineTcpperf, QPS: 100, Spin: 10 * time.Millisecond, Wait: WaitAdaptive}).Check(); err != nil {
		t.Errorf("spin 10ms, wait adaptive: %v", err)
	}
}

// A configuration Run cannot run is a *ConfigError naming the field at
// fault, and matches ErrConfig (its message named no field: "negative
// count" of Conns, Depth or Loops).
func TestConfigErrorField(t *testing.T) {
	for field, cfg := range map[string]Config{
		"Addr":         {},
		"Conns":        {Addr: "127.0.0.1:1", Conns: -1},
		"Depth":        {Addr: "127.0.0.1:1", Depth: -1},
		"Loops":        {Addr: "127.0.0.1:1", Loops: -1},
		"QPS":          {Addr: "127.0.0.1:1", QPS: -1},
		"MsgSize":      {Addr: "127.0.0.1:1", MsgSize: -1},
		"Duration":     {Addr: "127.0.0.1:1", Duration: -1},
		"Warmup":       {Addr: "127.0.0.1:1", Warmup: -1},
		"DrainTimeout": {Addr: "127.0.0.1:1", DrainTimeout: -1},
		"DialTimeout":  {Addr: "127.0.0.1:1", DialTimeout: -1},
		"Mode":         {Addr: "127.0.0.1:1", Mode: "x"},
		"Wait":         {Addr: "127.0.0.1:1", Wait: "x"},
		"Arrival":      {Addr: "127.0.0.1:1", Arrival: "x"},
		"Batch":        {Addr: "127.0.0.1:1", Batch: time.Millisecond},
		"Spin":         {Addr: "127.0.0.1:1", Spin: time.Second},
		"Engine":       {Addr: "127.0.0.1:1", Engine: "x"},
		"CPUs":         {Addr: "127.0.0.1:1", CPUs: []int{-1}},
	} {
		err := cfg.Check()
		var ce *ConfigError
		if !errors.Is(err, ErrConfig) || !errors.As(err, &ce) || ce.Field != field {
			t.Errorf("%s: %v (%#v), want a *ConfigError for %s", field, err, ce, field)
		}
	}
}

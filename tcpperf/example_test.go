package tcpperf_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"time"

	"github.com/wirespeed/wirespeed/tcpperf"
)

// echoServer listens on a loopback port and echoes what each connection
// sends.
func echoServer() net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln
}

// An open-loop run of 100 messages a second for 100ms against an echo
// server: the schedule, and so the counts, are fixed; the latencies are
// what the machine makes of them. A loop behind its schedule sends late,
// up to DrainTimeout after the end, and the drain waits up to
// DrainTimeout for the responses (it ends when the last is in): a long
// one has a slow machine send and receive them all, late.
func ExampleRun() {
	ln := echoServer()
	defer ln.Close()

	res, err := tcpperf.Run(context.Background(), tcpperf.Config{
		Addr: ln.Addr().String(), QPS: 100, Duration: 100 * time.Millisecond, DrainTimeout: time.Minute,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("sent %d, received %d, errors %d, p99 > 0: %v\n", res.Sent, res.Received, res.Errors, res.P99 > 0)
	// Output: sent 10, received 10, errors 0, p99 > 0: true
}

// Two runs (say, from two client hosts) each write an interval log;
// MergeLogs gives the percentiles of all their values together.
func ExampleMergeLogs() {
	ln := echoServer()
	defer ln.Close()

	var logs []io.Reader
	for range 2 {
		var hlog bytes.Buffer
		_, err := tcpperf.Run(context.Background(), tcpperf.Config{
			Addr: ln.Addr().String(), QPS: 100, Duration: 100 * time.Millisecond, DrainTimeout: time.Minute, HdrLog: &hlog,
		})
		if err != nil {
			log.Fatal(err)
		}
		logs = append(logs, &hlog)
	}
	res, err := tcpperf.MergeLogs(logs...)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d logs, %d values, p99 > 0: %v\n", res.Logs, res.Received, res.P99 > 0)
	// Output: 2 logs, 20 values, p99 > 0: true
}

// A run's interval log read back as one histogram, in nanoseconds, for a
// plot or percentiles of one's own.
func ExampleLogHistogram() {
	ln := echoServer()
	defer ln.Close()
	var hlog bytes.Buffer
	_, err := tcpperf.Run(context.Background(), tcpperf.Config{
		Addr: ln.Addr().String(), QPS: 100, Duration: 100 * time.Millisecond, DrainTimeout: time.Minute, HdrLog: &hlog,
	})
	if err != nil {
		log.Fatal(err)
	}
	h, err := tcpperf.LogHistogram(&hlog)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d values, max >= p50 > 0: %v\n", h.TotalCount(), h.Max() >= h.ValueAtQuantile(50) && h.ValueAtQuantile(50) > 0)
	// Output: 10 values, max >= p50 > 0: true
}

// Check refuses a configuration before anything is opened, with the error
// Run would return.
func ExampleConfig_Check() {
	cfg := tcpperf.Config{Addr: "127.0.0.1:7", QPS: math.Inf(1)}
	err := cfg.Check()
	fmt.Println(errors.Is(err, tcpperf.ErrConfig), err)
	// Output: true tcpperf: bad configuration: rate +Inf not 0 or in [1e-06, 1e+12]
}

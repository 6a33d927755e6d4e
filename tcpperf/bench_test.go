package tcpperf

import (
	"bufio"
	"context"
	"net"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/sleep"
)

// delayedLines answers each line delay after reading it, on the real clock.
func delayedLines(delay time.Duration) func(net.Conn) {
	return func(c net.Conn) {
		sl, _ := sleep.New(30 * time.Microsecond)
		defer sl.Close()
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			sl.Until(time.Now().Add(delay))
			if _, err := c.Write(line); err != nil {
				return
			}
		}
	}
}

// BenchmarkDelayedServer runs the open loop at 400/s over 4 connections for
// 250ms per op against a server answering each line 1ms late, and reports
// the percentiles the tool measured (1ms and a little more on an idle
// machine) and its own send lateness.
func BenchmarkDelayedServer(b *testing.B) {
	addr := server(b, delayedLines(time.Millisecond))
	var res *Result
	for b.Loop() {
		var err error
		res, err = Run(context.Background(), Config{
			Addr: addr, Conns: 4, QPS: 400, MsgSize: 64, Mode: "line", Duration: 250 * time.Millisecond,
		})
		if err != nil || res.Errors != 0 {
			b.Fatal(err, res)
		}
	}
	b.ReportMetric(res.P50, "p50-µs")
	b.ReportMetric(res.P99, "p99-µs")
	b.ReportMetric(res.LatenessP99, "late-p99-µs")
}

// BenchmarkClosedLoopIdleCPU runs a closed loop for 250ms per op against a
// server answering every 5ms and reports the process's CPU time per second
// of wall time: near 0 when nothing in the tool busy-waits while responses
// are outstanding.
func BenchmarkClosedLoopIdleCPU(b *testing.B) {
	addr := server(b, delayedLines(5*time.Millisecond))
	cpu := processCPU
	c0, w0 := cpu(), time.Now()
	for b.Loop() {
		if _, err := Run(context.Background(), Config{Addr: addr, Conns: 2, Depth: 1, Mode: "line", Duration: 250 * time.Millisecond}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu()-c0)/float64(time.Since(w0)), "cpu/wall")
}

package bench

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirespeed/wirespeed/internal/sleep"
	"github.com/wirespeed/wirespeed/netio"
)

// The overload experiment of `wirespeed bench net`: a producer that
// writes faster than its peer drains, on one loopback connection, through
// netio.Writer with and without its bound. The producer follows an open-loop
// schedule and every message carries its intended send time, so a producer
// held back by backpressure shows in the latency too (no coordinated
// omission): the bound keeps the backlog out of the server's memory, and
// only shedding (NonBlocking) keeps the latency of what is delivered low.

// An overloadVariant is one way of sending.
type overloadVariant struct {
	Name string
	Opt  netio.Options
}

func overloadVariants() []overloadVariant {
	return []overloadVariant{
		{"unbounded", netio.Options{MaxQueued: 1 << 30}},
		{"bounded 1 MiB, blocking", netio.Options{}},
		{"bounded 1 MiB, shedding", netio.Options{NonBlocking: true}},
		{"adaptive 10 ms, blocking", netio.Options{TargetDelay: 10 * time.Millisecond}},
		{"adaptive 10 ms, shedding", netio.Options{TargetDelay: 10 * time.Millisecond, NonBlocking: true}},
	}
}

type overloadConfig struct {
	Rate     float64       `json:"offered_msg_per_s"` // the producer's schedule
	MsgSize  int           `json:"msg_size"`
	Drain    float64       `json:"drain_bytes_per_s"` // the reader's pace
	Duration time.Duration `json:"duration_ns"`       // of the schedule
	SockBuf  int           `json:"socket_buffer"`     // SO_SNDBUF and SO_RCVBUF
}

func defaultOverload(d time.Duration) overloadConfig {
	// Twice what the reader takes: 10 MB/s offered, 5 MB/s drained.
	return overloadConfig{Rate: 20000, MsgSize: 512, Drain: 5e6, Duration: d, SockBuf: 64 << 10}
}

// An overloadRow is one variant's result.
type overloadRow struct {
	Variant   string `json:"variant"`
	Offered   int64  `json:"offered"`
	Delivered int64  `json:"delivered"`
	Dropped   int64  `json:"dropped"`
	// The latencies of delivered messages, from their intended send
	// time: none (0, left out of the JSON) when none was delivered; a
	// latency is recorded as 1 ns at least.
	P50MS      float64 `json:"latency_p50_ms,omitempty"`
	P99MS      float64 `json:"latency_p99_ms,omitempty"`
	MaxMS      float64 `json:"latency_max_ms,omitempty"`
	PeakQueued int     `json:"peak_queued_bytes"`   // the Writer's, sampled after each Write
	Window     int     `json:"window_bytes"`        // the Writer's window at the end
	DrainRate  float64 `json:"drain_rate_estimate"` // its estimate of the reader's rate, bytes/s (adaptive only)
	BehindMS   float64 `json:"producer_behind_ms"`  // the producer's worst lag behind its schedule
	Err        string  `json:"error,omitempty"`
}

// MarshalJSON writes the row, a failed one (Err) as its variant and error
// alone: the figures of a run cut short (offered, delivered, latencies,
// queue) read as a measurement.
func (r overloadRow) MarshalJSON() ([]byte, error) {
	type row overloadRow // without this method
	if r.Err == "" {
		return json.Marshal(row(r))
	}
	return failedJSON(r, "variant", "error")
}

var errShortMsg = errors.New("bench: overload messages under 16 bytes")

// runOverload runs one variant: the producer's schedule, then the reader
// until it has everything that was accepted.
func runOverload(ctx context.Context, cfg overloadConfig, v overloadVariant) (row overloadRow) {
	row.Variant = v.Name
	if cfg.MsgSize < 16 {
		row.Err = errShortMsg.Error()
		return row
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		row.Err = err.Error()
		return row
	}
	defer ln.Close()
	cli, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		row.Err = err.Error()
		return row
	}
	defer cli.Close()
	srv, err := ln.Accept()
	if err != nil {
		row.Err = err.Error()
		return row
	}
	defer srv.Close()
	srv.(*net.TCPConn).SetWriteBuffer(cfg.SockBuf)
	cli.(*net.TCPConn).SetReadBuffer(cfg.SockBuf)

	start := time.Now().Add(10 * time.Millisecond)
	lat := hdrhistogram.New(1, int64(time.Minute), 3)
	readDone := make(chan error, 1)
	go func() { readDone <- drainPaced(cli, cfg, start, lat) }()

	w := netio.NewWriter(srv, &v.Opt)
	sl, _ := sleep.New(30 * time.Microsecond)
	defer sl.Close()
	msg := make([]byte, cfg.MsgSize)
	n := int64(cfg.Rate * cfg.Duration.Seconds())
	var behind time.Duration
	for i := int64(0); i < n && ctx.Err() == nil; i++ {
		due := start.Add(time.Duration(float64(i) / cfg.Rate * float64(time.Second)))
		sl.Until(due)
		behind = max(behind, time.Since(due))
		binary.LittleEndian.PutUint64(msg, uint64(due.UnixNano()))
		binary.LittleEndian.PutUint64(msg[8:], uint64(i))
		row.Offered++
		if _, err := w.Write(msg); errors.Is(err, netio.ErrQueueFull) {
			row.Dropped++
			continue
		} else if err != nil {
			row.Err = err.Error()
			break
		}
		row.PeakQueued = max(row.PeakQueued, w.Stats().Queued)
	}
	// An end message (sequence -1) after everything accepted.
	binary.LittleEndian.PutUint64(msg[8:], ^uint64(0))
	if _, err := w.WriteContext(ctx, msg); err != nil && row.Err == "" {
		row.Err = err.Error()
	}
	if err := w.Flush(); err != nil && row.Err == "" {
		row.Err = err.Error()
	}
	select {
	case err = <-readDone:
		if err != nil && row.Err == "" {
			row.Err = err.Error()
		}
	case <-ctx.Done():
		row.Err = ctx.Err().Error()
	}
	st := w.Stats()
	row.Window, row.DrainRate = st.Window, st.DrainRate
	w.Close()
	row.Delivered = lat.TotalCount()
	ms := func(v int64) float64 { return float64(v) / 1e6 }
	row.P50MS, row.P99MS, row.MaxMS = ms(lat.ValueAtQuantile(50)), ms(lat.ValueAtQuantile(99)), ms(lat.Max())
	row.BehindMS = ms(int64(behind))
	return row
}

// drainPaced reads messages from c at cfg.Drain bytes a second, recording
// each one's latency from its intended send time, until the end message.
func drainPaced(c net.Conn, cfg overloadConfig, start time.Time, lat *hdrhistogram.Histogram) error {
	sl, _ := sleep.New(30 * time.Microsecond)
	defer sl.Close()
	buf := make([]byte, 16<<10)
	var have, total int
	for {
		sl.Until(start.Add(time.Duration(float64(total) / cfg.Drain * float64(time.Second))))
		n, err := c.Read(buf[have:])
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		now := time.Now()
		have += n
		total += n
		m := 0
		for ; m+cfg.MsgSize <= have; m += cfg.MsgSize {
			if binary.LittleEndian.Uint64(buf[m+8:]) == ^uint64(0) {
				return nil
			}
			due := time.Unix(0, int64(binary.LittleEndian.Uint64(buf[m:])))
			lat.RecordValue(max(int64(now.Sub(due)), 1))
		}
		have = copy(buf, buf[m:have])
	}
}

func printOverloadTable(w io.Writer, cfg overloadConfig, rows []overloadRow) error {
	fmt.Fprintf(w, "\noverload: one connection, %d-byte messages offered at %.0f msg/s (%.1f MB/s) for %v to a reader that drains %.1f MB/s, socket buffers %d KiB;\nlatency of delivered messages from their intended send time\n",
		cfg.MsgSize, cfg.Rate, cfg.Rate*float64(cfg.MsgSize)/1e6, cfg.Duration, cfg.Drain/1e6, cfg.SockBuf>>10)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "netio.Writer\tdelivered\tdropped\tp50 ms\tp99 ms\tmax ms\tpeak queued KiB\twindow KiB at end\tdrain estimate MB/s\tproducer behind ms")
	for _, r := range rows {
		if r.Err != "" {
			fmt.Fprintf(tw, "%s\terror: %s\n", r.Variant, r.Err)
			continue
		}
		est := "-"
		if r.DrainRate > 0 {
			est = fmt.Sprintf("%.1f", r.DrainRate/1e6)
		}
		p50, p99, pmax := "-", "-", "-" // of no message delivered: no latency, not 0.0 ms
		if r.Delivered > 0 {
			p50, p99, pmax = fmt.Sprintf("%.1f", r.P50MS), fmt.Sprintf("%.1f", r.P99MS), fmt.Sprintf("%.1f", r.MaxMS)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%s\t%s\t%s\t%d\t%d\t%s\t%.0f\n", r.Variant, r.Delivered,
			100*float64(r.Dropped)/float64(max(r.Offered, 1)), p50, p99, pmax, r.PeakQueued>>10, r.Window>>10, est, r.BehindMS)
	}
	return tw.Flush()
}

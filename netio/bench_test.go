package netio

import (
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// BenchmarkCoalescer sends 64-byte messages over loopback TCP to a peer that
// drains them: one conn.Write per message against netio's coalescing Writer
// (the final Flush is inside the timing).
func BenchmarkCoalescer(b *testing.B) {
	for _, size := range []int{64, 512} {
		msg := make([]byte, size)
		for _, impl := range []string{"write-per-msg", "netio"} {
			b.Run("size="+strconv.Itoa(size)+"/impl="+impl, func(b *testing.B) {
				cli, srv := tcpPair(b)
				go io.Copy(io.Discard, srv)
				var w io.Writer = cli
				var nw *Writer
				if impl == "netio" {
					nw = NewWriter(cli, nil)
					w = nw
				}
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := w.Write(msg); err != nil {
						b.Fatal(err)
					}
				}
				if nw != nil {
					if err := nw.Flush(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
				if nw != nil {
					nw.Close()
				}
			})
		}
	}
}

// BenchmarkPingPong is one request/response round trip of a 64-byte message
// to an echo peer: conn.Write then Read, or the same through a netio.Conn,
// whose Read sends the request, in the caller's goroutine, before it
// waits. It shows that this costs no latency (a hand-over to a flusher
// goroutine, or a hold timer, took about twice as long with GOMAXPROCS 2),
// and that the request/response path allocates nothing.
func BenchmarkPingPong(b *testing.B) {
	for _, impl := range []string{"write-per-msg", "netio"} {
		b.Run("size=64/impl="+impl, func(b *testing.B) {
			cli, srv := tcpPair(b)
			go func() {
				buf := make([]byte, 64)
				for {
					if _, err := io.ReadFull(srv, buf); err != nil {
						return
					}
					if _, err := srv.Write(buf); err != nil {
						return
					}
				}
			}()
			var c net.Conn = cli
			if impl == "netio" {
				nc := NewConn(cli, nil)
				defer nc.Close()
				c = nc
			}
			msg, resp := make([]byte, 64), make([]byte, 64)
			b.SetBytes(64)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAdaptiveWindow writes 512-byte messages to a loopback peer that
// drains about 2 MB/s, with a 10ms TargetDelay, and reports where the
// adaptive window and the drain-rate estimate settle on a real socket
// (about 20 KB and 2e6 B/s; the unit tests check the arithmetic on an
// exact clock).
func BenchmarkAdaptiveWindow(b *testing.B) {
	cli, srv := tcpPair(b)
	cli.SetWriteBuffer(16 << 10)
	srv.SetReadBuffer(16 << 10)
	go func() {
		buf := make([]byte, 8<<10)
		for {
			if _, err := io.ReadFull(srv, buf); err != nil {
				return
			}
			time.Sleep(4 * time.Millisecond)
		}
	}()
	w := NewWriter(cli, &Options{MaxQueued: 1 << 20, TargetDelay: 10 * time.Millisecond, MinWindow: 4 << 10})
	msg := make([]byte, 512)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if _, err := w.Write(msg); err != nil {
			b.Fatal(err)
		}
	}
	s := w.Stats()
	b.ReportMetric(float64(s.Window), "window-B")
	b.ReportMetric(s.DrainRate, "drain-B/s")
	cli.Close()
	w.Close()
}

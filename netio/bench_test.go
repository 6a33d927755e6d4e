package netio

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
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

// BenchmarkConnStack runs 1000 connections of an echo server in the style
// of serve's netio engine (one goroutine per connection: ReadPooled, then
// Write, which the next Read sends) and reports the goroutine stack memory
// each connection holds while it waits in Read (stack-B/conn), the figure
// that decides a server's memory at 10,000 connections: Go starts a
// goroutine with a 2 KiB stack and doubles it when a call chain goes
// deeper. Each op is one 64-byte round trip on every connection.
func BenchmarkConnStack(b *testing.B) {
	const conns = 1000
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				nc := NewConn(c, nil)
				defer nc.Close()
				for {
					p, err := nc.ReadPooled()
					if err != nil {
						return
					}
					if _, err := nc.Write(p); err != nil {
						return
					}
				}
			}()
		}
	}()
	cs := make([]net.Conn, conns)
	for i := range cs {
		if cs[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
			b.Fatal(err)
		}
		defer cs[i].Close()
	}
	msg, resp := make([]byte, 64), make([]byte, 64)
	for b.Loop() {
		for _, c := range cs {
			if _, err := c.Write(msg); err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(c, resp); err != nil {
				b.Fatal(err)
			}
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.StackInuse-before.StackInuse)/conns, "stack-B/conn")
}

// BenchmarkReadFrom is io.Copy of 64 MiB into a Conn or a bare Writer
// over loopback TCP, from a regular file (sendfile) or from another
// socket (a Conn splices it, a Writer copies through its buffer), to a
// peer that drains it; the final Flush and the drain are inside the
// timing.
func BenchmarkReadFrom(b *testing.B) {
	const size = 64 << 20
	p := filepath.Join(b.TempDir(), "file")
	if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
		b.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for _, src := range []string{"file", "socket"} {
		for _, dst := range []string{"conn", "writer"} {
			b.Run("src="+src+"/dst="+dst, func(b *testing.B) {
				cli, srv := tcpPair(b)
				var w interface {
					io.ReaderFrom
					Flush() error
				}
				if dst == "conn" {
					w = NewConn(cli, nil)
				} else {
					w = NewWriter(cli, nil)
				}
				f, err := os.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				b.SetBytes(size)
				b.ResetTimer()
				for range b.N {
					drained := make(chan int64, 1)
					go func() {
						n, _ := io.CopyN(io.Discard, srv, size)
						drained <- n
					}()
					var r io.Reader = f
					if src == "file" {
						if _, err := f.Seek(0, io.SeekStart); err != nil {
							b.Fatal(err)
						}
					} else {
						b.StopTimer()
						in, feed := tcpPair(b)
						b.StartTimer()
						go func() {
							for n := 0; n < size; n += len(chunk) {
								feed.Write(chunk)
							}
							feed.Close()
						}()
						r = in
					}
					if n, err := w.ReadFrom(r); n != size || err != nil {
						b.Fatalf("ReadFrom: %d bytes, %v", n, err)
					}
					if err := w.Flush(); err != nil {
						b.Fatal(err)
					}
					if n := <-drained; n != size {
						b.Fatalf("the peer read %d bytes", n)
					}
					if in, ok := r.(net.Conn); ok {
						in.Close()
					}
				}
			})
		}
	}
}

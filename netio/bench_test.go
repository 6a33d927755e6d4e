package netio

import (
	"io"
	"net"
	"testing"
)

// BenchmarkCoalescer sends 64-byte messages over loopback TCP to a peer that
// drains them: one conn.Write per message against netio's coalescing Writer
// (the final Flush is inside the timing).
func BenchmarkCoalescer(b *testing.B) {
	for _, size := range []int{64, 512} {
		msg := make([]byte, size)
		for _, impl := range []string{"write-per-msg", "netio"} {
			b.Run("size="+itoa(size)+"/impl="+impl, func(b *testing.B) {
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

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

var _ net.Conn = (*Conn)(nil)

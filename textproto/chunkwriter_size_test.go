package textproto

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestChunkWriterLargeSize: a ChunkWriter with a chunk size larger than
// what is written to it, up to math.MaxInt for one chunk whatever the
// message, sends what is written. It allocated a buffer of the whole chunk
// size at the first Write, which panicked (makeslice: cap out of range)
// for math.MaxInt and took a GiB for a size of 1<<30.
func TestChunkWriterLargeSize(t *testing.T) {
	for _, size := range []int{math.MaxInt, 1 << 30, 100_000} {
		var out bytes.Buffer
		w := NewWriter(bufio.NewWriter(&out))
		cw := w.ChunkWriter(size)
		msg := strings.Repeat("0123456789abcdef", 250_000/16)
		var grew uint64
		if size == 1<<30 {
			grew = heapGrowth(func() { cw.Write([]byte("hello")) })
			msg = msg[5:]
		}
		for p := msg; len(p) > 0; {
			k := min(len(p), 777)
			if n, err := cw.Write([]byte(p[:k])); n != k || err != nil {
				t.Fatalf("size %d: Write: %d, %v", size, n, err)
			}
			p = p[k:]
		}
		if err := cw.Close(); err != nil {
			t.Fatalf("size %d: Close: %v", size, err)
		}
		var want string
		switch size {
		case 100_000:
			want = fmt.Sprintf("BDAT 100000\r\n%sBDAT 100000\r\n%sBDAT 50000 LAST\r\n%s", msg[:100_000], msg[100_000:200_000], msg[200_000:])
		case 1 << 30:
			want = "BDAT 250000 LAST\r\nhello" + msg
		default:
			want = "BDAT 250000 LAST\r\n" + msg
		}
		if out.String() != want {
			t.Errorf("size %d: sent %d bytes %.60q..., want %d bytes %.60q...", size, out.Len(), out.String(), len(want), want)
		}
		if grew > 1<<20 {
			t.Errorf("size %d: a Write of 5 bytes allocated %d bytes", size, grew)
		}
	}
}

//go:build !linux || netio_portable

package netio

import (
	"math"
	"testing"
)

// The portable loops' output buffer grows geometrically, up to what
// MaxQueued lets wait, also when MaxQueued is math.MaxInt ("no bound"):
// its sum with the bytes being written wrapped, and the buffer was made
// anew, one append larger, at every append (quadratic copying).
func TestPortableQueueGrowth(t *testing.T) {
	for _, maxQueued := range []int{64 << 20, math.MaxInt} {
		l := &loop{maxQueued: maxQueued}
		c := &LoopConn{}
		c.sys.writing = true // the first bytes are being written: c.off stays
		l.queue(c, make([]byte, 100))
		c.off = 50
		grown := 0
		for range 10000 {
			before := cap(c.pending)
			l.queue(c, make([]byte, 10))
			if cap(c.pending) != before {
				grown++
			}
		}
		if grown > 20 {
			t.Errorf("MaxQueued %d: the buffer was made anew %d times in 10000 appends", maxQueued, grown)
		}
	}
}

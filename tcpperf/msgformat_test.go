package tcpperf

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"testing"
)

// base36 is id in 13 base-36 digits.
func base36(id int) string {
	s := strconv.FormatUint(uint64(id), 36)
	return strings.Repeat("0", 13-len(s)) + s
}

// msgOf is connection id's message seq, as the loops build it.
func msgOf(id, size int, seq uint64) []byte {
	m := msgTemplate(id, size)
	putHex(m[:hexLen(size)], seq)
	return m
}

// testIDs are the connection ids TestMsgDistinct compares: 0 to 2000,
// and some far beyond, to the largest an int holds.
func testIDs() []int {
	ids := make([]int, 0, 2010)
	for id := range 2001 {
		ids = append(ids, id)
	}
	if bits.UintSize == 64 {
		var far int64 = 1 << 32 // not a constant: an int of 32 bits cannot hold it
		ids = append(ids, int(far), int(far+26), int(far<<8))
	}
	return append(ids, math.MaxInt-26, math.MaxInt)
}

// A message is its sequence number's last digits (16 at most), then its
// connection's id in 13 base-36 digits (its last ones where fewer fit),
// then filler, then "\n" (nothing else of "\n" or "\r"). So from 30
// bytes on no two connections send the same message; below, two
// connections do only where their ids share their last size-17 digits
// (none of 0 to 2000 from 20 bytes on, none of 0 to 35 at 18); at 17
// bytes and fewer a message carries no id, and is its sequence number's
// last size-1 digits alone. Connections whose ids differed by a multiple
// of 26 sent the same messages at every size; in hexadecimal, the id
// told 16 connections apart at 18 bytes.
func TestMsgDistinct(t *testing.T) {
	ids := testIDs()
	for _, size := range []int{1, 2, 9, 16, 17, 18, 19, 20, 21, 24, 25, 29, 30, 31, 32, 33, 34, 46, 47, 64, 100, 1000} {
		k := min(13, max(0, size-17)) // id digits carried
		mod := uint64(math.MaxUint64) // ids that agree modulo this share their digits
		if k < 13 {
			mod = uint64(math.Pow(36, float64(k)))
		}
		for _, seq := range []uint64{0, 5, 1<<40 + 3, math.MaxUint64} {
			seen := make(map[string]int, len(ids))
			for _, id := range ids {
				m := msgOf(id, size, seq)
				// The same message as another connection's: only
				// where the ids agree in all the digits it carries.
				if prev, dup := seen[string(m)]; !dup {
					seen[string(m)] = id
				} else if k == 13 || uint64(prev)%mod != uint64(id)%mod {
					t.Fatalf("size %d, seq %d: connections %d and %d send the same message %q", size, seq, prev, id, m)
				}
			}
			for _, id := range ids {
				m := msgOf(id, size, seq)
				if len(m) != size || m[size-1] != '\n' || strings.ContainsAny(string(m[:size-1]), "\r\n") {
					t.Fatalf("size %d, id %d, seq %d: %q: want %d bytes, one \"\\n\", at the end, and no \"\\r\"", size, id, seq, m, size)
				}
				h := hexLen(size)
				if want := fmt.Sprintf("%016x", seq)[16-h:]; string(m[:h]) != want {
					t.Fatalf("size %d, id %d, seq %d: %q does not begin with %q", size, id, seq, m, want)
				}
				if want := base36(id)[13-k:]; string(m[h:h+k]) != want {
					t.Fatalf("size %d, id %d, seq %d: %q carries not the id's digits %q after the sequence number", size, id, seq, m, want)
				}
				if !checkMsg(m, msgTemplate(id, size), seq) {
					t.Fatalf("size %d, id %d, seq %d: %q is not its own message", size, id, seq, m)
				}
			}
			if k >= 3 && len(seen) < 2001 { // 0 to 2000 first
				t.Fatalf("size %d, seq %d: %d distinct messages of %d connections", size, seq, len(seen), len(ids))
			}
			if k >= 1 && len(seen) < int(min(mod, 2001)) {
				t.Fatalf("size %d, seq %d: %d distinct messages of %d connections, want %d", size, seq, len(seen), len(ids), min(mod, 2001))
			}
			if k == 0 && len(seen) != 1 {
				t.Fatalf("size %d, seq %d: %d distinct messages, want one for every connection (no id fits)", size, seq, len(seen))
			}
		}
	}
	// The one taken for the other, message for message: never, with
	// the ids whole.
	for _, size := range []int{30, 33, 64} {
		for _, ab := range [][2]int{{0, 26}, {3, 29}, {0, 1}, {0, 36}, {1, 1 << 32 & math.MaxInt} /* 0 where int has 32 bits */, {math.MaxInt - 26, math.MaxInt}, {math.MaxInt - 36, math.MaxInt}} {
			a, b := ab[0], ab[1]
			for _, seq := range []uint64{0, 7, 1 << 63} {
				m := msgOf(a, size, seq)
				if checkMsg(m, msgTemplate(b, size), seq) {
					t.Errorf("size %d: connection %d's message %d taken for connection %d's", size, a, seq, b)
				}
				if _, isMsg := msgSeq(m, msgTemplate(b, size)); isMsg {
					t.Errorf("size %d: connection %d's message %d taken by resynchronisation for connection %d's", size, a, seq, b)
				}
			}
		}
	}
}

// The filler after the id spells it too: any 14 bytes of it in a row
// differ between any two connections.
func TestMsgFillerDistinct(t *testing.T) {
	ids := testIDs()
	const size = 100 // filler at 29 to 98
	for _, at := range []int{29, 30, 45, 85} {
		seen := make(map[string]int, len(ids))
		for _, id := range ids {
			w := string(msgTemplate(id, size)[at : at+14])
			if prev, dup := seen[w]; dup {
				t.Fatalf("filler at %d: connections %d and %d both have %q", at, prev, id, w)
			}
			seen[w] = id
			for _, c := range []byte(w) {
				if c < 'a' || c > 'z' {
					t.Fatalf("filler at %d of connection %d: %q not lower-case letters", at, id, w)
				}
			}
		}
	}
}

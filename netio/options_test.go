package netio

import (
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestNegativeLimits: a negative limit means the default, as 0 does (a
// limit is never off; the timeouts' negative values are none, and no
// negative value but a CPU's is refused): LoopOptions' MaxQueued,
// MaxInput, ReadBudget and MaxDo, and Options' MaxQueued, MinWindow and
// LowWater.
func TestNegativeLimits(t *testing.T) {
	h := func(c *LoopConn, in []byte) int { return len(in) }
	def, err := NewLoops(h, &LoopOptions{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer def.Close()
	neg, err := NewLoops(h, &LoopOptions{Loops: 1, MaxQueued: -1, MaxInput: -2, ReadBudget: -3, MaxDo: -4})
	if err != nil {
		t.Fatalf("NewLoops with negative limits: %v, want the defaults", err)
	}
	defer neg.Close()
	if got, want := neg.Limits(), def.Limits(); got != want {
		t.Errorf("LoopOptions' limits, negative: %v, want the defaults %v", got, want)
	}
	w := NewWriter(io.Discard, &Options{MaxQueued: -1, MinWindow: -2, LowWater: -3})
	defer w.Close()
	dw := NewWriter(io.Discard, nil)
	defer dw.Close()
	if got, want := w.Limits(), dw.Limits(); got != want {
		t.Errorf("Options' limits, negative: %v, want the defaults %v", got, want)
	}
}

// More loops than MaxLoops are refused by both implementations, before
// any loop starts, with os.ErrInvalid naming the count: the epoll loops
// failed with EMFILE once their descriptors ran out (or, with descriptors
// enough, the runtime died past 10,000 threads), and the portable loops
// started them all.
func TestLoopsMaxLoops(t *testing.T) {
	h := func(c *LoopConn, in []byte) int { return len(in) }
	for _, n := range []int{MaxLoops + 1, 100000} {
		s, err := NewLoops(h, &LoopOptions{Loops: n})
		if err == nil {
			s.Close()
			t.Fatalf("Loops %d: NewLoops started them", n)
		}
		if !errors.Is(err, os.ErrInvalid) || !strings.Contains(err.Error(), strconv.Itoa(n)) {
			t.Errorf("Loops %d: NewLoops failed with %v, want os.ErrInvalid naming %d", n, err, n)
		}
	}
}

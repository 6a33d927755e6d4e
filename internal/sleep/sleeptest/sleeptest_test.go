package sleeptest

import (
	"testing"
	"time"
)

// At fires once the clock reaches its instant, however far the clock
// moved between reading the time and asking; After counts from the
// clock's own now.
func TestAt(t *testing.T) {
	c := NewClock()
	start := c.Now()
	c.Advance(5 * time.Millisecond) // moved since start was read
	end := start.Add(10 * time.Millisecond)
	at := c.At(end)
	after := c.After(end.Sub(start)) // from the clock's now: 15 ms
	c.Advance(5 * time.Millisecond)  // at end
	select {
	case got := <-at:
		if !got.Equal(end) {
			t.Errorf("At fired with %v, want %v", got, end)
		}
	default:
		t.Fatal("At did not fire at its instant")
	}
	select {
	case <-after:
		t.Fatal("After fired before its duration from the clock's now")
	default:
	}
	select {
	case <-c.At(start): // in the past: at once
	default:
		t.Error("At of a past instant did not fire at once")
	}
}

package sleep

import (
	"testing"
	"time"
)

// The sleeper wakes at or after the instant asked, never before.
func TestNeverEarly(t *testing.T) {
	sl, err := New(20 * time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	defer sl.Close()
	for i := 0; i < 50; i++ {
		at := time.Now().Add(time.Duration(i*37) * time.Microsecond)
		sl.Until(at)
		if now := time.Now(); now.Before(at) {
			t.Fatalf("woke %v early", at.Sub(now))
		}
	}
}

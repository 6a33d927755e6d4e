package sleep

import (
	"context"
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

// The system clock's waiter never returns before the instant, and a
// cancelled context ends a long wait at the next nap.
func TestSystemWaiter(t *testing.T) {
	w := System{}.Waiter(20 * time.Microsecond)
	defer w.Close()
	at := time.Now().Add(3 * time.Millisecond)
	w.Until(context.Background(), at)
	if now := time.Now(); now.Before(at) {
		t.Fatalf("woke %v early", at.Sub(now))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	far := time.Now().Add(time.Hour)
	w.Until(ctx, far) // returns after one nap, not in an hour
	if !time.Now().Before(far) {
		t.Fatal("a cancelled wait ran to its instant")
	}
}

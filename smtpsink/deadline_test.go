package smtpsink

import (
	"testing"
	"time"
)

// The deadline's arithmetic, with a clock the test moves: a command has
// timeout from its first read; data moves the deadline on by n/rate per
// read, never past timeout after that read.
func TestDeadline(t *testing.T) {
	t0 := time.Unix(1000, 0)
	d := deadline{timeout: 5 * time.Second, rate: 500}
	d.command()
	at, ok, exp := d.beforeRead(t0)
	if !ok || exp || !at.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("command: %v %v %v", at, ok, exp)
	}
	d.afterRead(100) // no credit for a command
	if at, _, exp := d.beforeRead(t0.Add(5 * time.Second)); !at.Equal(t0.Add(5*time.Second)) || !exp {
		t.Errorf("command at 5s: %v expired %v", at, exp)
	}
	// Data: 1 byte a second earns 2 ms a byte.
	d.startData()
	at, _, _ = d.beforeRead(t0)
	for i := 1; i <= 5; i++ {
		now := t0.Add(time.Duration(i) * time.Second)
		if !now.Before(at) {
			t.Fatalf("byte %d, at %ds, past the deadline %v", i, i, at.Sub(t0))
		}
		d.afterRead(1)
		at, _, _ = d.beforeRead(now)
	}
	if want := t0.Add(5*time.Second + 10*time.Millisecond); !at.Equal(want) {
		t.Errorf("after 5 bytes: deadline %v, want 5.01s", at.Sub(t0))
	}
	// A fast start buys no more than timeout of silence.
	d.startData()
	d.beforeRead(t0)
	d.afterRead(1 << 30)
	if at, _, _ := d.beforeRead(t0); !at.Equal(t0.Add(5 * time.Second)) {
		t.Errorf("after 1 GiB at once: deadline %v", at.Sub(t0))
	}
	// No rate: timeout after each read.
	d = deadline{timeout: time.Second}
	d.startData()
	d.beforeRead(t0)
	d.afterRead(1)
	if at, _, _ := d.beforeRead(t0.Add(900 * time.Millisecond)); !at.Equal(t0.Add(1900 * time.Millisecond)) {
		t.Errorf("no rate: deadline %v", at.Sub(t0))
	}
	// No timeout: no deadline.
	d = deadline{}
	d.command()
	if _, ok, _ := d.beforeRead(t0); ok {
		t.Error("a deadline without a timeout")
	}
}

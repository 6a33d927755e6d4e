package gosmtp

import (
	"fmt"
	"testing"
)

// TestDATA sends every hand-written payload to go-smtp over loopback TCP
// and compares it with wirespeed's decoders.
func TestDATA(t *testing.T) {
	p := startPeer(t, false)
	for i, c := range handPayloads() {
		t.Run(c.name, func(t *testing.T) {
			out := differential(t, p, []byte(c.data), uint64(i))
			var got expect
			switch {
			case out.differs:
				got = differs
			case out.deviation >= 0:
				got = harmless
			default:
				got = same
			}
			if c.want != unchecked && got != c.want {
				t.Errorf("go-smtp on %q: %v, want %v", c.data, got, c.want)
			}
		})
	}
}

// TestDATARandom does the same for seeded random payloads.
func TestDATARandom(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 50
	}
	p := startPeer(t, false)
	deviations := 0
	for seed := range uint64(n) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			if differential(t, p, randomPayload(seed), seed).deviation >= 0 {
				deviations++
			}
		})
	}
	t.Logf("%d of %d payloads hit a known go-smtp deviation", deviations, n)
}

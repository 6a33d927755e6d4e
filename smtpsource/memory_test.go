package smtpsource

import (
	"context"
	"runtime"
	"testing"
)

// TestSessionsMemory: a run with many sessions (smtp-source -s 500) holds
// one set of latency histograms, not a set for each session: the run
// allocates tens of KiB a session (its connection and buffers, and the
// fake server's), where a set of histograms is 3.1 MiB.
func TestSessionsMemory(t *testing.T) {
	f := &fakeServer{}
	addr := f.start(t)
	const sessions = 500
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := Run(context.Background(), Config{Addr: addr, Sessions: sessions, Messages: sessions})
	runtime.ReadMemStats(&after)
	if err != nil || res.Delivered != sessions {
		t.Fatalf("delivered %d of %d: %v", res.Delivered, sessions, err)
	}
	per := (after.TotalAlloc - before.TotalAlloc) / sessions
	if per > 256<<10 {
		t.Errorf("%d KiB allocated a session, want at most 256", per>>10)
	}
	t.Logf("%d KiB allocated a session; a set of histograms is %d KiB", per>>10, (numPhases+1)*newHist().ByteSize()>>10)
}

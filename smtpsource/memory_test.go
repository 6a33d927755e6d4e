package smtpsource

import (
	"context"
	"runtime"
	"testing"

	"github.com/wirespeed/wirespeed/smtpsink"
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

// TestChunksMemory: BDAT without pipelining sends each chunk from the
// message's header and body as they are (only a chunk that holds the end
// of the one and the start of the other is copied), so a session holds a
// chunk's worth, not a copy of the message: with 4 MiB messages in 64 KiB
// chunks into smtpsink, 16 sessions allocate little more than 2 (the
// run's own share, its message template, is the same).
func TestChunksMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's allocations")
	}
	srv := startSmtpsinkCfg(t, smtpsink.Config{})
	const length = 4 << 20
	alloc := func(sessions int) uint64 {
		cfg := Config{Addr: srv.Addr().String(), Sessions: sessions, Messages: sessions, Length: length, Chunking: true, ChunkSize: 64 << 10}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res, err := Run(context.Background(), cfg)
		runtime.ReadMemStats(&after)
		if err != nil || res.Delivered != int64(sessions) || !res.Chunking {
			t.Fatalf("delivered %d of %d, chunking %v: %v", res.Delivered, sessions, res.Chunking, err)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	two, sixteen := alloc(2), alloc(16)
	per := (max(sixteen, two) - two) / 14
	if per > length/8 {
		t.Errorf("%d KiB allocated a session, want at most %d", per>>10, length/8>>10)
	}
	t.Logf("%d KiB allocated a session (%d MiB with 2 sessions)", per>>10, two>>20)
}

// TestLengthRangeMemory: with ranged lengths (smtp-source -l 0:N) every
// message is a piece of one body of N bytes and its encoding, which the
// run makes once: 16 sessions sending messages of up to 4 MiB allocate
// little more than 2, by DATA or by BDAT in chunks.
func TestLengthRangeMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's allocations")
	}
	srv := startSmtpsinkCfg(t, smtpsink.Config{})
	const length = 4 << 20
	for _, chunking := range []bool{false, true} {
		alloc := func(sessions int) uint64 {
			cfg := Config{Addr: srv.Addr().String(), Sessions: sessions, Messages: 4 * sessions, LengthMax: length, Body: "mail", Reuse: true, Chunking: chunking, ChunkSize: 64 << 10}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			res, err := Run(context.Background(), cfg)
			runtime.ReadMemStats(&after)
			if err != nil || res.Delivered != int64(cfg.Messages) || res.Chunking != chunking {
				t.Fatalf("delivered %d of %d, chunking %v: %v", res.Delivered, cfg.Messages, res.Chunking, err)
			}
			return after.TotalAlloc - before.TotalAlloc
		}
		two, sixteen := alloc(2), alloc(16)
		per := (max(sixteen, two) - two) / 14
		if per > length/8 {
			t.Errorf("chunking %v: %d KiB allocated a session, want at most %d", chunking, per>>10, length/8>>10)
		}
		t.Logf("chunking %v: %d KiB allocated a session (%d MiB with 2 sessions)", chunking, per>>10, two>>20)
	}
}

// TestChunksNoEncoding: a run that sends its messages with BDAT only
// does not make their dot-stuffed encodings for DATA: it allocates at
// least three quarters of the body less than the same run with DATA
// into the same smtpsink.
func TestChunksNoEncoding(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's allocations")
	}
	addr := startSmtpsinkCfg(t, smtpsink.Config{}).Addr().String()
	const length = 4 << 20
	for _, c := range []Config{{Length: length}, {LengthMax: length}} {
		alloc := func(chunking bool) uint64 {
			cfg := c
			cfg.Addr, cfg.Body, cfg.Chunking, cfg.ChunkSize = addr, "mail", chunking, 64<<10
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			res, err := Run(context.Background(), cfg)
			runtime.ReadMemStats(&after)
			if err != nil || res.Delivered != 1 || res.Chunking != chunking {
				t.Fatalf("delivered %d, chunking %v: %v", res.Delivered, res.Chunking, err)
			}
			return after.TotalAlloc - before.TotalAlloc
		}
		data, bdat := alloc(false), alloc(true)
		if data < bdat+length*3/4 {
			t.Errorf("-l %d:%d: %d KiB allocated with DATA, %d KiB with BDAT", c.Length, c.LengthMax, data>>10, bdat>>10)
		}
		t.Logf("-l %d:%d: %d KiB allocated with DATA, %d KiB with BDAT", c.Length, c.LengthMax, data>>10, bdat>>10)
	}
}

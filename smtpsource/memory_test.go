package smtpsource

import (
	"bytes"
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

// TestBodyMemory: a run with -l N holds one copy of the body and small
// buffers, by DATA or by BDAT, for one length or a range, with 4
// sessions as with 1: going from -l N to -l 2N it allocates about N
// bytes more, not 2N (a dot-stuffed copy for DATA) nor 3N (the pattern
// body's lines made apart too), as it did before 2026-12-06.
func TestBodyMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's allocations")
	}
	addr := startSmtpsinkCfg(t, smtpsink.Config{}).Addr().String()
	const length = 8 << 20
	for _, c := range []struct {
		Config
		ranged bool // -l 0:N
	}{
		{}, {Config: Config{Chunking: true}}, {Config: Config{Body: "mail"}}, {Config: Config{Body: "mail", Chunking: true}},
		{ranged: true}, {Config: Config{Body: "mail"}, ranged: true}, {Config: Config{Sessions: 4, Messages: 4, Reuse: true}},
	} {
		alloc := func(n int) uint64 {
			cfg := c.Config
			cfg.Addr, cfg.ChunkSize = addr, 64<<10
			if c.ranged {
				cfg.LengthMax = n
			} else {
				cfg.Length = n
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			res, err := Run(context.Background(), cfg)
			runtime.ReadMemStats(&after)
			if err != nil || res.Delivered != int64(max(cfg.Messages, 1)) || res.Chunking != cfg.Chunking {
				t.Fatalf("%+v: delivered %d, chunking %v: %v", cfg, res.Delivered, res.Chunking, err)
			}
			return after.TotalAlloc - before.TotalAlloc
		}
		one, two := alloc(length), alloc(2*length)
		copies := float64(int64(two)-int64(one)) / length
		if copies > 1.25 {
			t.Errorf("body %q, chunking %v, ranged %v, %d sessions: %.2f copies of the body", c.Body, c.Chunking, c.ranged, c.Sessions, copies)
		}
		t.Logf("body %q, chunking %v, ranged %v, %d sessions: %.2f copies of the body", c.Body, c.Chunking, c.ranged, c.Sessions, copies)
	}
}

// TestMessageMemory: a run sends Config.Message and MessageSet's
// messages whose lines all end with CRLF from the caller's slices, not
// from a CRLF-ended copy (smtp-source -F held a 500 MB mbox twice): going
// from N bytes of messages to 2N the run allocates little more, where it
// allocated N more before 2026-12-06. Messages with LF line ends still
// cost one copy, made once for all the sessions.
func TestMessageMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's allocations")
	}
	srv := startSmtpsinkCfg(t, smtpsink.Config{})
	const length = 8 << 20
	for _, c := range []struct {
		set, chunking, lf bool
		want              float64 // at most this many copies
	}{
		{want: 0.25}, {chunking: true, want: 0.25}, {set: true, want: 0.25}, {set: true, chunking: true, want: 0.25},
		{lf: true, want: 1.25}, {set: true, lf: true, want: 1.25},
	} {
		alloc := func(n int) uint64 {
			cfg := Config{Addr: srv.Addr().String(), Sessions: 4, Messages: 8, Reuse: true, Chunking: c.chunking, ChunkSize: 64 << 10}
			msg := MakeBody("mail", n-2)
			if c.lf {
				msg = bytes.ReplaceAll(msg, []byte("\r\n"), []byte("\n"))
			} else if got := CRLFLines(msg); &got[0] != &msg[0] {
				t.Fatal("CRLFLines copied a message of CRLF lines")
			}
			if c.set {
				for rest := msg; len(rest) > 0; { // four messages, cut at line ends
					n := min(len(rest), len(msg)/4)
					n += bytes.IndexByte(rest[n-1:], '\n')
					cfg.MessageSet, rest = append(cfg.MessageSet, rest[:n]), rest[n:]
				}
			} else {
				cfg.Message = msg
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			res, err := Run(context.Background(), cfg)
			runtime.ReadMemStats(&after)
			if err != nil || res.Delivered != int64(cfg.Messages) || res.Chunking != cfg.Chunking {
				t.Fatalf("%+v: delivered %d, chunking %v: %v", c, res.Delivered, res.Chunking, err)
			}
			return after.TotalAlloc - before.TotalAlloc
		}
		one, two := alloc(length), alloc(2*length)
		copies := float64(int64(two)-int64(one)) / length
		if copies > c.want {
			t.Errorf("set %v, chunking %v, LF lines %v: %.2f copies of the messages, want at most %.2f", c.set, c.chunking, c.lf, copies, c.want)
		}
		t.Logf("set %v, chunking %v, LF lines %v: %.2f copies of the messages", c.set, c.chunking, c.lf, copies)
	}
}

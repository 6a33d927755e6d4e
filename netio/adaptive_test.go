package netio

import (
	"io"
	"testing"
	"time"
)

// The adaptive window shrinks to about drain rate × TargetDelay for a slow
// peer and stays at MaxQueued for a fast one.
func TestAdaptiveWindow(t *testing.T) {
	const max = 1 << 20
	opt := &Options{MaxQueued: max, TargetDelay: 10 * time.Millisecond, MinWindow: 4 << 10}

	t.Run("slow", func(t *testing.T) {
		cli, srv := tcpPair(t)
		SetSendBuffer(cli, 16<<10)
		SetRecvBuffer(srv, 16<<10)
		go func() { // about 2 MB/s
			b := make([]byte, 8<<10)
			for {
				if _, err := io.ReadFull(srv, b); err != nil {
					return
				}
				time.Sleep(4 * time.Millisecond)
			}
		}()
		w := NewWriter(cli, opt)
		msg := make([]byte, 512)
		// Write until the window has adapted, or for at most 15s (a loaded
		// machine may slow the peer down, never speed it up).
		for end := time.Now().Add(15 * time.Second); time.Now().Before(end); {
			w.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			for {
				if _, err := w.Write(msg); err != nil {
					break // deadline
				}
			}
			if s := w.Stats(); s.Window <= max/4 && s.Written > 256<<10 {
				break
			}
		}
		s := w.Stats()
		t.Logf("slow peer: %+v", s)
		checkWindowFollowsRate(t, s, opt)
		if s.Window > max/4 {
			t.Errorf("window %d for a peer draining ~2 MB/s with a 10ms target, want well under %d", s.Window, max/4)
		}
		// The estimate follows the peer, whatever the machine's load makes
		// of its ~2 MB/s: far below loopback speed.
		if s.DrainRate <= 0 || s.DrainRate > 50e6 {
			t.Errorf("drain rate %.0f B/s, want about 2e6", s.DrainRate)
		}
		cli.Close()
		w.Close()
	})
	t.Run("fast", func(t *testing.T) {
		// Loopback drains at GB/s even on a loaded machine; the window stays
		// at least max/2 above about 52 MB/s. A long stall of the reading
		// goroutine while the flusher runs can still drag one estimate down
		// (the rate is bytes over time spent in writev, and a full socket
		// makes writev wait): measure up to three times, on fresh
		// connections. A window that does not follow the rate fails all
		// three.
		var tries []Stats
		for attempt := 0; attempt < 3; attempt++ {
			s := fastPeerStats(t, opt)
			t.Logf("fast peer: %+v", s)
			checkWindowFollowsRate(t, s, opt)
			if s.Window >= max/2 {
				return
			}
			tries = append(tries, s)
		}
		t.Errorf("windows %v for a peer draining at loopback speed, want about %d", windows(tries), max)
	})
}

// fastPeerStats writes 512-byte messages for 200ms to a peer that reads as
// fast as it can, and returns the writer's stats after Close.
func fastPeerStats(t *testing.T, opt *Options) Stats {
	cli, srv := tcpPair(t)
	go io.Copy(io.Discard, srv)
	w := NewWriter(cli, opt)
	msg := make([]byte, 512)
	for start := time.Now(); time.Since(start) < 200*time.Millisecond; {
		for i := 0; i < 1000; i++ {
			w.Write(msg)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Stats()
}

// checkWindowFollowsRate checks that the window is the measured drain rate
// times TargetDelay, within [MinWindow, MaxQueued].
func checkWindowFollowsRate(t *testing.T, s Stats, opt *Options) {
	t.Helper()
	if s.DrainRate <= 0 {
		t.Fatalf("no drain rate measured: %+v", s)
	}
	want := int(min(s.DrainRate*opt.TargetDelay.Seconds(), float64(opt.MaxQueued)))
	if want = max(want, opt.MinWindow); s.Window != want {
		t.Fatalf("window %d for a drain rate of %.0f B/s and a target delay of %v, want %d", s.Window, s.DrainRate, opt.TargetDelay, want)
	}
}

func windows(ss []Stats) []int {
	var ws []int
	for _, s := range ss {
		ws = append(ws, s.Window)
	}
	return ws
}

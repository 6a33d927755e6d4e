package tcpperf

import (
	"testing"
	"time"
)

const µsec = int64(time.Microsecond)

// TestWaitPlan: each mode's decision at the points around a send and a
// response, on a clock the test sets.
func TestWaitPlan(t *testing.T) {
	next := 1000 * µsec // the next send
	for _, tc := range []struct {
		mode        Wait
		spin        int64
		now         int64
		outstanding bool
		poll        bool
		wake        int64
	}{
		// Far from the send, nothing outstanding: sleep until Spin before it.
		{WaitAdaptive, 30 * µsec, 100 * µsec, false, false, 970 * µsec},
		{WaitSend, 30 * µsec, 100 * µsec, false, false, 970 * µsec},
		{WaitSleep, 30 * µsec, 100 * µsec, false, false, 1000 * µsec},
		{WaitSpin, 30 * µsec, 100 * µsec, false, true, 0},
		// A response outstanding and not overdue (sent at 0, bound 10+4*2 µs
		// = 18 µs): adaptive polls, keeping its timer.
		{WaitAdaptive, 30 * µsec, 10 * µsec, true, true, 970 * µsec},
		{WaitSend, 30 * µsec, 10 * µsec, true, false, 970 * µsec},
		{WaitSleep, 30 * µsec, 10 * µsec, true, false, 1000 * µsec},
		// Overdue: adaptive sleeps too.
		{WaitAdaptive, 30 * µsec, 19 * µsec, true, false, 970 * µsec},
		// Within Spin + minNap of the send: poll, except when sleeping.
		{WaitAdaptive, 30 * µsec, 930 * µsec, false, true, 0},
		{WaitSend, 30 * µsec, 930 * µsec, false, true, 0},
		{WaitSleep, 30 * µsec, 930 * µsec, false, false, 1000 * µsec},
		{WaitSleep, 30 * µsec, 1000 * µsec, false, true, 1000 * µsec},
		// A negative Spin never polls before a send.
		{WaitSend, -1, 990 * µsec, false, false, 1000 * µsec},
	} {
		p := waitPolicy{mode: tc.mode, spin: tc.spin, srtt: 10 * µsec, rttvar: 2 * µsec}
		poll, wake := p.plan(tc.now, next, tc.outstanding)
		if poll != tc.poll || wake != tc.wake {
			t.Errorf("%s spin %dµs at %dµs (outstanding %v): poll %v wake %dµs, want %v %dµs",
				tc.mode, tc.spin/µsec, tc.now/µsec, tc.outstanding, poll, wake/µsec, tc.poll, tc.wake/µsec)
		}
	}
}

// TestWaitEstimate: the bound follows the round trips (RFC 6298's
// smoothing), within its limits, and a loop that has seen none polls up
// to the upper limit.
func TestWaitEstimate(t *testing.T) {
	var p waitPolicy
	if got := p.overdue(); got != maxOverdue {
		t.Fatalf("no samples: overdue at %d, want %d", got, maxOverdue)
	}
	p.sample(100 * µsec)
	if p.srtt != 100*µsec || p.rttvar != 50*µsec {
		t.Fatalf("first sample: srtt %d rttvar %d", p.srtt, p.rttvar)
	}
	if got := p.overdue(); got != 300*µsec {
		t.Fatalf("overdue %dµs after the send, want 300", got/µsec)
	}
	for range 200 {
		p.sample(40 * µsec)
	}
	if p.srtt < 39*µsec || p.srtt > 41*µsec || p.rttvar > 2*µsec {
		t.Fatalf("after steady 40µs: srtt %d rttvar %d", p.srtt, p.rttvar)
	}
	if got := p.overdue(); got < 40*µsec || got > 50*µsec {
		t.Fatalf("steady 40µs: overdue at %dµs", got/µsec)
	}
	for range 200 {
		p.sample(1)
	}
	if got := p.overdue(); got != minOverdue {
		t.Fatalf("tiny round trips: overdue at %d, want the floor %d", got, minOverdue)
	}
	for range 200 {
		p.sample(int64(time.Second))
	}
	if got := p.overdue(); got != maxOverdue {
		t.Fatalf("slow round trips: overdue at %d, want the ceiling %d", got, maxOverdue)
	}
	p.lastSend = 7 * µsec
	if got := p.overdue(); got != 7*µsec+maxOverdue {
		t.Fatalf("overdue counts from the last send: %d", got)
	}
}

// TestBatchWake: a batching loop wakes when its next send is Batch late,
// less the wake-up delay it learned, which follows the delays seen and
// stays within 0 and half the window.
func TestBatchWake(t *testing.T) {
	p := waitPolicy{mode: WaitBatch, batch: 400 * µsec}
	if got := p.batchWake(1000 * µsec); got != 1400*µsec {
		t.Fatalf("no delay learned: wake at %dµs, want 1400", got/µsec)
	}
	for range 100 {
		target := p.batchWake(1000 * µsec)
		p.woke(target, target+60*µsec) // each sleep ends 60µs late
	}
	if p.lead < 55*µsec || p.lead > 60*µsec {
		t.Fatalf("steady 60µs late: lead %dµs", p.lead/µsec)
	}
	if got := p.batchWake(1000 * µsec); got != 1400*µsec-p.lead {
		t.Fatalf("wake at %dµs with lead %dµs", got/µsec, p.lead/µsec)
	}
	for range 100 {
		p.woke(0, 10*int64(time.Millisecond)) // a machine busy elsewhere
	}
	if p.lead != 200*µsec {
		t.Fatalf("long delays: lead %dµs, want half the window, 200", p.lead/µsec)
	}
	for range 100 {
		p.woke(1000*µsec, 900*µsec) // early (a signal)
	}
	if p.lead != 0 {
		t.Fatalf("early wake-ups: lead %dµs, want 0", p.lead/µsec)
	}
}

// pollTime runs a loop's wait policy on a clock the test moves, as
// tcpperf's loop uses it (open loop, WaitAdaptive), over sends every
// interval from 0 to end, none answered unless answer says when: it
// returns how long the loop polled for responses (Spin is negative: it
// never polls before a send), and the times at which answers came while
// it polled.
func pollTime(p *waitPolicy, interval, end int64, answer func(sent int64) int64) (polled int64, caught []int64) {
	const step = µsec // a poll of the sockets
	type pending struct{ sent, at int64 }
	var out []pending
	next := int64(0)
	for now := int64(0); now < end; {
		for next <= now {
			p.lastSend = now
			if answer != nil {
				out = append(out, pending{now, answer(now)})
			}
			next += interval
		}
		poll, wake := p.plan(now, next, true)
		// Responses due by now arrive: each read gives the policy its
		// round trip.
		arrived := false
		for i := 0; i < len(out); {
			if out[i].at > now {
				i++
				continue
			}
			p.sample(out[i].at - out[i].sent)
			out, arrived = append(out[:i], out[i+1:]...), true
		}
		if arrived && poll {
			caught = append(caught, now)
		}
		if poll {
			polled += step
			now += step
			continue
		}
		// Asleep until the timer or the next response.
		to := next
		if wake > now {
			to = min(to, wake)
		}
		for _, o := range out {
			to = min(to, o.at)
		}
		now = to
	}
	return polled, caught
}

// A server that never answers: WaitAdaptive polled for the response to
// every send until it was overdue (1ms without a round trip), so with a
// send every 2ms the loop polled half the time, every 0.5ms all of it,
// for a server that sent nothing. Now it polls once for a bound's length
// without any response, then sleeps until one comes; a server that
// answers again is polled for again from the next send on.
func TestWaitAdaptiveSilentServer(t *testing.T) {
	for _, interval := range []int64{2000 * µsec, 500 * µsec, 100 * µsec} {
		p := waitPolicy{mode: WaitAdaptive, spin: -1}
		polled, _ := pollTime(&p, interval, int64(time.Second), nil)
		if polled > maxOverdue+interval {
			t.Errorf("a send every %dµs to a silent server: polled %dµs of 1s, want at most %dµs", interval/µsec, polled/µsec, (maxOverdue+interval)/µsec)
		}
		// The server answers again, in 100µs: the first response wakes
		// the loop, and it polls for the ones after it.
		_, caught := pollTime(&p, 2000*µsec, int64(20*time.Millisecond), func(sent int64) int64 { return sent + 100*µsec })
		if len(caught) < 9 {
			t.Errorf("after a silence, a send every 2ms answered in 100µs: %d of 10 responses polled for, want 9 (all but the first)", len(caught))
		}
	}
	// A server that answers each send keeps its loop polling for each
	// response, though one in four is late (1.5ms, past the bound).
	p := waitPolicy{mode: WaitAdaptive, spin: -1}
	n := 0
	_, caught := pollTime(&p, 500*µsec, int64(20*time.Millisecond), func(sent int64) int64 {
		n++
		if n%4 == 0 {
			return sent + 1500*µsec
		}
		return sent + 100*µsec
	})
	if len(caught) < 39 {
		t.Errorf("a server answering in 100µs but one in 4 in 1.5ms: %d responses polled for of 40, want 39 (as before the silent server's back-off)", len(caught))
	}
	p = waitPolicy{mode: WaitAdaptive, spin: -1}
	if _, caught := pollTime(&p, 500*µsec, int64(20*time.Millisecond), func(sent int64) int64 { return sent + 100*µsec }); len(caught) != 40 {
		t.Errorf("a server answering in 100µs: %d responses polled for of 40, want all", len(caught))
	}
}

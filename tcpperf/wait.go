package tcpperf

import (
	"time"
)

// Wait is how an open-loop run's loops wait between their sends.
type Wait string

const (
	// WaitAdaptive sleeps in epoll between sends, but polls without
	// sleeping Spin before each send and while a response is outstanding
	// and not yet overdue: due within srtt + 4·rttvar of the last send
	// (TCP's retransmission bound, RFC 6298, over the loop's recent round
	// trips, within 10µs to 1ms). So a response that comes when expected
	// does not pay for waking the loop, and the loop spins only for about
	// a round trip per send. Once no response at all has come for 1ms
	// after a send (a server that stopped answering), it polls for none
	// until one comes, which wakes it: a silent server does not keep the
	// loop polling (it polled up to 1ms after every send, a whole core
	// from 1000 msg/s a loop up).
	WaitAdaptive Wait = "adaptive"
	// WaitSend polls only Spin before each send, and sleeps otherwise.
	WaitSend Wait = "send"
	// WaitSleep never polls: the loop sleeps until the next send is due
	// or a response arrives.
	WaitSleep Wait = "sleep"
	// WaitSpin always polls: each loop takes a whole core.
	WaitSpin Wait = "spin"
	// WaitBatch sleeps until the loop's next send is Config.Batch late
	// (less the wake-up delay the loop has learned), then sends every
	// message due at once and reads the responses that came meanwhile,
	// timed by the kernel's receive timestamps (Config.Arrival). So a loop
	// wakes once per Batch, not once per send and per response: the send
	// lateness, from each message's intended time, is at most about
	// Batch, and it is part of the latencies (they are measured from the
	// intended time, so no coordinated omission).
	WaitBatch Wait = "batch"
)

func (w Wait) check() error {
	switch w {
	case WaitAdaptive, WaitSend, WaitSleep, WaitSpin, WaitBatch:
		return nil
	}
	return configErr("Wait", "wait %q is none of adaptive, send, sleep, spin, batch", w)
}

// minNap is the shortest sleep before a send: shorter waits are spun. A
// sleep costs a timer, a context switch and a wake-up, about 15µs of CPU
// on a virtual machine (an exit for each) and as much in lateness, so
// napping for less would cost more than it saves (measured at 30k msg/s
// over 10,000 connections: a loop that slept before every send spent 29µs
// of CPU per message, one that spun 15µs of busy time; see the README).
const minNap = 50 * time.Microsecond

// The bounds of the time a loop polls for a response after a send.
const (
	minOverdue = int64(10 * time.Microsecond)
	maxOverdue = int64(time.Millisecond)
)

// A waitPolicy decides, before each poll of a loop's sockets, whether the
// loop sleeps or polls, from the times of its sends and the round trips
// of its responses. Times are nanoseconds on the run's clock.
type waitPolicy struct {
	mode         Wait
	spin         int64 // poll this long before a send (Config.Spin; negative: never)
	srtt, rttvar int64 // smoothed round trip and its variation; srtt 0: none yet
	lastSend     int64
	// quiet: responses are outstanding and none has come since the send
	// at quietFrom, the first after the last response (heard: one came,
	// after the send at heardSend). A loop whose server has sent nothing
	// for maxOverdue since stops polling for responses until one comes:
	// a silent server would otherwise keep it polling after every send.
	quiet, heard         bool
	quietFrom, heardSend int64
	batch                int64 // WaitBatch: how late a send may be (Config.Batch)
	lead                 int64 // WaitBatch: how much later than asked a sleep ends, smoothed
}

// sample feeds one response's round trip to the estimate (RFC 6298's
// gains, 1/8 and 1/4).
func (p *waitPolicy) sample(rtt int64) {
	p.quiet, p.heard, p.heardSend = false, true, p.lastSend
	if p.srtt == 0 {
		p.srtt, p.rttvar = max(rtt, 1), rtt/2
		return
	}
	d := p.srtt - rtt
	if d < 0 {
		d = -d
	}
	p.rttvar += (d - p.rttvar) / 4
	p.srtt += (rtt - p.srtt) / 8
	p.srtt = max(p.srtt, 1)
}

// overdue is when the response to the last send is late.
func (p *waitPolicy) overdue() int64 {
	if p.srtt == 0 {
		return p.lastSend + maxOverdue
	}
	return p.lastSend + min(max(p.srtt+4*p.rttvar, minOverdue), maxOverdue)
}

// plan decides how the loop waits at now for its next send, due at next
// (open loop), with responses outstanding or not: poll (do not sleep), or
// sleep with a timer for wake (0: no timer needed).
func (p *waitPolicy) plan(now, next int64, outstanding bool) (poll bool, wake int64) {
	wait := next - now
	switch p.mode {
	case WaitSpin:
		return true, 0
	case WaitSleep:
		return wait <= 0, next
	}
	if p.spin >= 0 && wait <= p.spin+int64(minNap) {
		return true, 0
	}
	wake = next - max(p.spin, 0)
	if !outstanding {
		p.quiet = false
	} else if !p.quiet && (!p.heard || p.lastSend != p.heardSend) {
		p.quiet, p.quietFrom = true, p.lastSend
	}
	if p.mode == WaitAdaptive && outstanding && now < p.overdue() && (!p.quiet || now < p.quietFrom+maxOverdue) {
		return true, wake
	}
	return false, wake
}

// batchWake is when a batching loop whose next send is due at next wakes:
// once that send is batch late, less the learned wake-up delay.
func (p *waitPolicy) batchWake(next int64) int64 {
	return next + p.batch - p.lead
}

// woke learns the wake-up delay from a sleep asked to end at target that
// ended at at: a moving average (gain 1/8) of the delays, within 0 and
// half the batch window (a longer delay is the machine being busy, which
// the loop should not answer by waking ever earlier).
func (p *waitPolicy) woke(target, at int64) {
	p.lead += (at - target - p.lead) / 8
	p.lead = min(max(p.lead, 0), p.batch/2)
}

package textproto

import (
	stdtp "net/textproto"
	"sync"
	"testing"
)

// TestPipelineOrder starts requests and responses in reverse order from
// many goroutines: each must run in id order.
func TestPipelineOrder(t *testing.T) {
	var p Pipeline
	const n = 50
	ids := make([]uint, n)
	for i := range ids {
		ids[i] = p.Next()
		if ids[i] != uint(i) {
			t.Fatalf("Next() = %d, want %d", ids[i], i)
		}
	}
	var mu sync.Mutex
	var reqs, resps []uint
	var wg sync.WaitGroup
	for i := n - 1; i >= 0; i-- {
		wg.Add(1)
		go func(id uint) {
			defer wg.Done()
			p.StartRequest(id)
			mu.Lock()
			reqs = append(reqs, id)
			mu.Unlock()
			p.EndRequest(id)
			p.StartResponse(id)
			mu.Lock()
			resps = append(resps, id)
			mu.Unlock()
			p.EndResponse(id)
		}(ids[i])
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		if reqs[i] != uint(i) || resps[i] != uint(i) {
			t.Fatalf("order: requests %v, responses %v", reqs, resps)
		}
	}
}

// TestPipelineOutOfSync checks the panic of an End out of turn, as
// net/textproto's.
func TestPipelineOutOfSync(t *testing.T) {
	catch := func(f func()) (v any) {
		defer func() { v = recover() }()
		f()
		return nil
	}
	var p Pipeline
	var sp stdtp.Pipeline
	got := catch(func() { p.EndRequest(1) })
	want := catch(func() { sp.EndRequest(1) })
	if got == nil || got != want {
		t.Errorf("EndRequest out of turn: panic %v, net/textproto %v", got, want)
	}
	got = catch(func() { p.EndResponse(3) })
	want = catch(func() { sp.EndResponse(3) })
	if got == nil || got != want {
		t.Errorf("EndResponse out of turn: panic %v, net/textproto %v", got, want)
	}
	// The in-turn id still works afterwards.
	p.StartRequest(0)
	p.EndRequest(0)
	p.StartRequest(1)
	p.EndRequest(1)
}

package gosmtp

import (
	"hash/fnv"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// FuzzDATA runs the differential of TestDATA on fuzzed payloads, against a
// go-smtp server on net.Pipe connections.
func FuzzDATA(f *testing.F) {
	tooltest.LimitMinimizing(f, 5000)
	for _, c := range handPayloads() {
		if len(c.data) < 1<<10 {
			f.Add([]byte(c.data))
		}
	}
	for seed := range uint64(20) {
		f.Add(randomPayload(seed))
	}
	p := startPeer(f, true)
	f.Fuzz(func(t *testing.T, payload []byte) {
		h := fnv.New64a()
		h.Write(payload)
		differential(t, p, payload, h.Sum64())
	})
}

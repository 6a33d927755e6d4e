package textproto

import (
	"math/rand/v2"
	"testing"
)

// fuzzCase turns the control byte of FuzzReader into a bufio size, a feed
// and a sequence of calls.
func fuzzCase(ctl byte) (size int, f feed, ops []op) {
	rng := rand.New(rand.NewPCG(uint64(ctl), 0x5eed))
	size = diffSizes[int(ctl)%len(diffSizes)]
	f = feeds[int(ctl/8)%len(feeds)]
	ops = make([]op, 1+rng.IntN(5))
	for i := range ops {
		ops[i] = op{kind: opKind(rng.IntN(int(numOps))), arg: expectCodes[rng.IntN(len(expectCodes))]}
	}
	return size, f, ops
}

// FuzzReader compares the line and header methods with net/textproto:
// data is the input, ctl chooses the bufio size, how the input is fed
// (chunk sizes, errors) and the calls made. See diffRun.
//
//	go test -fuzz FuzzReader -fuzztime 60s ./textproto
func FuzzReader(f *testing.F) {
	for i, in := range diffInputs {
		for _, ctl := range []byte{0, 1, 2, 3, 4, 43, 97, 130, 171, 255} {
			f.Add([]byte(in), ctl+byte(i))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, ctl byte) {
		size, fd, ops := fuzzCase(ctl)
		var st diffStats
		if err := diffRun(data, size, fd, ops, Limits{}, &st); err != nil {
			t.Fatalf("bufio size %d, feed %s, ops %v:\n%v", size, fd.name, ops, err)
		}
	})
}

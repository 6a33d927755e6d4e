package textproto

import (
	"math/rand/v2"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
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
	tooltest.LimitMinimizing(f, 10000)
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

// fuzzLimits turns a control byte into small limits.
func fuzzLimits(c byte) Limits {
	return Limits{
		MaxLineBytes:    []int{0, 1, 5, 20, 100}[int(c)%5],
		MaxHeaderBytes:  []int64{0, 10, 50, 300}[int(c/5)%4],
		MaxHeaderFields: []int{0, 1, 3}[int(c/20)%3],
		MaxDotBytes:     []int64{0, 10, 100}[int(c/60)%3],
	}
}

// FuzzReaderLimits runs the calls of FuzzReader on a Reader with small
// limits (chosen by lim): up to the first limit error every result must be
// net/textproto's; the limit error must come only when the limit was
// exceeded; and reading on after it must neither fail nor hang.
func FuzzReaderLimits(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	for i, in := range diffInputs {
		if len(in) > 512 {
			continue
		}
		for _, c := range []byte{0, 1, 2, 77, 200} {
			f.Add([]byte(in), c+byte(i), byte(i)*7+c)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, ctl, lim byte) {
		size, fd, ops := fuzzCase(ctl)
		l := fuzzLimits(lim)
		var st diffStats
		if err := diffRun(data, size, fd, ops, l, &st); err != nil {
			t.Fatalf("bufio size %d, feed %s, ops %v, limits %+v:\n%v", size, fd.name, ops, l, err)
		}
	})
}

package dot

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// Fuzz targets comparing every SIMD kernel this CPU has with the generic
// kernel, call by call (see kernel_test.go). go test runs them on their
// seeds; go test -fuzz FuzzKernelDecode explores further.

func kernelSeeds() [][]byte {
	seeds := [][]byte{
		nil,
		[]byte(".\r\n"),
		[]byte("a\r\n.\r\n"),
		[]byte("..\r\n.\n"),
		[]byte("\n.\n"),
		[]byte("\r\n.\r"),
		[]byte("x\r\r\n\n\r.\r\n"),
		[]byte("\x00.\r\n"),
		[]byte("hey\r\n\n.\nthis is a test\r\n.\r\n"),
		[]byte("a\n.\r\nb\r\n.\r\n"),
		[]byte("a\r\r\n.\r\n"),
	}
	r := rand.New(rand.NewPCG(7, 8))
	for style := range 5 {
		for _, n := range []int{31, 64, 65, 200} {
			seeds = append(seeds, kInput(r, n, style))
		}
	}
	seeds = append(seeds, kInput(r, 700, 4), kInput(r, 1200, 5))
	return seeds
}

// longSeeds are inputs long enough for the long-line loops (some five
// blocks), with line ends at the ends of blocks (see lineStartInputs),
// for runs with all of the input in src and room for all of the output.
func longSeeds() [][]byte {
	ins := lineStartInputs()
	return [][]byte{ins[0], ins[10], ins[20], ins[len(ins)-1]}
}

// fuzzRun is the run a fuzz target makes of its arguments. Mutating a few
// bytes seldom grows an input past the four or five blocks the long-line
// loops need, and the fuzzer's coverage does not reach into the assembly:
// so the targets take a run of fill bytes to insert, and the alignments of
// src and dst on their own.
func fuzzRun(in []byte, fill byte, at, runLen, srcStep, dstLen uint16, srcAlign, dstAlign uint8) ([]byte, kRun) {
	if n := int(runLen) % 1536; n > 0 {
		p := int(at) % (len(in) + 1)
		in = slices.Concat(in[:p], bytes.Repeat([]byte{fill}, n), in[p:])
	}
	return in, kRun{
		srcStep:  int(srcStep)%(len(in)+1) + 1,
		dstLen:   int(dstLen)%(2*len(in)+2) + 1,
		srcAlign: int(srcAlign % 64),
		dstAlign: int(dstAlign % 64),
	}
}

func FuzzKernelDecode(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	for i, s := range kernelSeeds() {
		f.Add(s, uint8(i), uint8(i/3), uint16(i%3*40), uint16(i%5*33), uint16(i*37), uint16(i*53), uint8(i*11), uint8(i*7), byte(".x\n"[i%3]), uint16(i*13), uint16(i%4*150))
	}
	for i, s := range longSeeds() {
		f.Add(s, uint8(i), uint8(i), uint16(0), uint16(0), uint16(len(s)-1), uint16(2*len(s)), uint8(i*9), uint8(i*17), byte('.'), uint16(0), uint16(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, mode, bare uint8, max, maxLine, srcStep, dstLen uint16, srcAlign, dstAlign, fill byte, at, runLen uint16) {
		cfg := modelConfig{mode: Mode(mode % 3), bare: BarePolicy(bare % 3), maxSize: int64(max), maxLine: int(maxLine)}
		in, run := fuzzRun(in, fill, at, runLen, srcStep, dstLen, srcAlign, dstAlign)
		for _, k := range kernels() {
			if k.name == "generic" {
				continue
			}
			diffDecodeCfg(t, k, cfg, in, run)
		}
	})
}

func FuzzKernelEncode(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	for i, s := range kernelSeeds() {
		f.Add(s, uint8(i), uint16(i*37), uint16(i*53), uint8(i*11), uint8(i*7), byte(".x\n"[i%3]), uint16(i*13), uint16(i%4*150))
	}
	for i, s := range longSeeds() {
		f.Add(s, uint8(0), uint16(len(s)-1), uint16(2*len(s)), uint8(i*9), uint8(i*17), byte('.'), uint16(0), uint16(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, mode uint8, srcStep, dstLen uint16, srcAlign, dstAlign, fill byte, at, runLen uint16) {
		m := Mode(mode % 3)
		in, run := fuzzRun(in, fill, at, runLen, srcStep, dstLen, srcAlign, dstAlign)
		for _, k := range kernels() {
			if k.name == "generic" {
				continue
			}
			diffEncode(t, k, m, in, run)
		}
	})
}

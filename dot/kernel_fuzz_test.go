package dot

import (
	"math/rand/v2"
	"testing"
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
	return seeds
}

func FuzzKernelDecode(f *testing.F) {
	for i, s := range kernelSeeds() {
		f.Add(s, uint8(i), uint8(i/3), uint16(i%3*40), uint16(i%5*33), uint16(i*37), uint16(i*53), uint8(i*11))
	}
	f.Fuzz(func(t *testing.T, in []byte, mode, bare uint8, max, maxLine, srcStep, dstLen uint16, align uint8) {
		cfg := modelConfig{mode: Mode(mode % 3), bare: BarePolicy(bare % 3), maxSize: int64(max), maxLine: int(maxLine)}
		for _, k := range kernels() {
			if k.name == "generic" {
				continue
			}
			run := kRun{
				srcStep:  int(srcStep)%(len(in)+1) + 1,
				dstLen:   int(dstLen)%(2*len(in)+2) + 1,
				srcAlign: int(align % 64),
				dstAlign: int(align/4) % 64,
				exact:    k.name == "generic",
			}
			diffDecodeCfg(t, k, cfg, in, run)
		}
	})
}

func FuzzKernelEncode(f *testing.F) {
	for i, s := range kernelSeeds() {
		f.Add(s, uint8(i), uint16(i*37), uint16(i*53), uint8(i*11))
	}
	f.Fuzz(func(t *testing.T, in []byte, mode uint8, srcStep, dstLen uint16, align uint8) {
		m := Mode(mode % 3)
		for _, k := range kernels() {
			if k.name == "generic" {
				continue
			}
			run := kRun{
				srcStep:  int(srcStep)%(len(in)+1) + 1,
				dstLen:   int(dstLen)%(2*len(in)+2) + 1,
				srcAlign: int(align % 64),
				dstAlign: int(align/4) % 64,
				exact:    k.name == "generic",
			}
			diffEncode(t, k, m, in, run)
		}
	})
}

package dot

import (
	"bytes"
	"testing"
)

// TestKernels64 puts one, two or three line endings (CRLF, or a bare CR or
// LF, some followed by a line-leading dot) at every pair of positions of a
// 64-byte block, at several offsets from the start of src, for every mode
// and a few line limits: the cases the AVX2 kernels' 64-byte path takes
// itself (at most two CRs to delete) or hands to the 32-byte path.
func TestKernels64(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		if k.name == "generic" {
			t.Skip("the reference")
		}
		stride := 1
		if testing.Short() || raceEnabled {
			stride = 5
		}
		endings := []string{"\r\n", "\r\n", "\r\n.", "\n", "\r"}
		for a := 0; a < 64; a += stride {
			for b := a + 2; b < 66; b += stride {
				x := a*67 + b
				pre := x % 7
				in := bytes.Repeat([]byte{'y'}, pre+200)
				put := func(p int, e string) { copy(in[pre+p:], e) }
				put(a, "\r\n")
				put(b, endings[x%len(endings)])
				if x%3 == 0 && b+4 < 128 {
					put(b+3, "\r\n") // a third deletion
				}
				in = append(in, "\r\n.\r\n"...)
				run := kRun{srcStep: len(in), dstLen: len(in) + 1, srcAlign: x % 64, dstAlign: (x * 5) % 64}
				mode := kModes[x%3]
				diffDecode(t, k, mode, 0, in, run)
				cfg := modelConfig{mode: mode, bare: barePolicies[x/3%3], maxLine: []int{0, 64, 70, 100}[x%4]}
				diffDecodeCfg(t, k, cfg, in, run)
				diffEncode(t, k, mode, in[:len(in)-5], run)
			}
		}
	})
}

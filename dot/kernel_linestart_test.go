package dot

import (
	"os"
	"strings"
	"testing"
)

// Tests of the line state the AVX-512 Compat kernels carry out of their
// long-line loop. Their block loops compare the bytes before a block in
// memory and leave the line-start and CR bits of the general path (cbol,
// ccr) as they were, so the long-line loop entered from them with those
// bits still saying "after an LF" (or "after a CR") for the block that
// ended the line before. Where that loop ran into the end of src or dst,
// the general path took its first byte for a line start: the encoder
// doubled a dot there and wrote a bare LF without its CR, the decoder
// deleted a dot. These tests put line ends at the ends of blocks, long
// lines after them and dots (or an LF) where the loop stops, at every
// alignment of src and dst.

// TestKernelsStaleLineStart is the case that found it: the second call
// of an encode in 854-byte windows into 3132-byte dst chunks, src at 13
// and dst at 54 bytes from a 64-byte boundary. The call's first block
// ends in a bare LF; the long-line loop after it ran to the end of src and
// the general path doubled the dot at src[840] ("..dcde" for ".dcde").
func TestKernelsStaleLineStart(t *testing.T) {
	in, err := os.ReadFile("testdata/kernel/stale-line-start.bin")
	if err != nil {
		t.Fatal(err)
	}
	forKernels(t, func(t *testing.T, k kernel) {
		diffEncode(t, k, Compat, in, kRun{srcStep: 854, dstLen: 3132, srcAlign: 13, dstAlign: 54})
		// The same input around it: every alignment, dst lengths around
		// the failing one.
		stride := 1
		if testing.Short() || raceEnabled {
			stride = 7
		}
		for sa := 0; sa < 64; sa += stride {
			for da := (sa * 5) % stride; da < 64; da += stride {
				for _, dl := range []int{3131, 3132, 3133} {
					run := kRun{srcStep: 854, dstLen: dl, srcAlign: sa, dstAlign: da}
					diffEncode(t, k, Compat, in, run)
				}
				diffDecode(t, k, Compat, 0, append(in, ".\r\n"...), kRun{srcStep: 854, dstLen: 3132, srcAlign: sa, dstAlign: da})
			}
		}
	})
}

// lineStartInputs returns inputs in which a line ends at the end of a
// 64-byte block (counted from the start of the input) and a long line
// follows, made of dots (so that wherever a long-line loop stops, the
// next byte is a dot) or of letters ending in a bare LF.
func lineStartInputs() [][]byte {
	var ins [][]byte
	ends := []string{"\r\n", "\n", "\r"} // LF at the block's last byte, or CR with its LF next
	for _, blocks := range []int{1, 2, 3} {
		for _, end := range ends {
			head := strings.Repeat("a", 64*blocks-len(end)) + end
			if end == "\r" {
				head += "\n"
			}
			for _, l := range []int{300, 333, 700} {
				ins = append(ins,
					[]byte(head+"x"+strings.Repeat(".", l)),
					[]byte(head+"x"+strings.Repeat("y", l)+"\n"),
					[]byte(head+"x"+strings.Repeat("y", l)+"\n.z\r\n"),
				)
			}
		}
	}
	// A line start inside the first block too (its dot goes through the
	// mask path).
	ins = append(ins, []byte("..a\r\n"+strings.Repeat("b", 57)+"\r\nx"+strings.Repeat(".", 400)))
	return ins
}

// TestKernelsLongLineExit runs lineStartInputs at every alignment of src
// and dst (each input at every dst alignment), with src ending at the end of the input or one byte after the
// LF of a letter line, and dst as long as the output or a little shorter
// (so that the long-line loop meets the end of src or of dst), or around
// multiples of 64.
func TestKernelsLongLineExit(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		if k.name == "generic" {
			t.Skip("the reference")
		}
		// Each input at every dst alignment (which sets where the
		// long-line loop's stores, and so its last block, fall) and an
		// eighth of the src alignments.
		stride := 8
		if testing.Short() || raceEnabled {
			stride = 40
		}
		ins := lineStartInputs()
		for sa := 0; sa < 64; sa++ {
			for da := 0; da < 64; da++ {
				for x := (sa + da) % stride; x < len(ins); x += stride {
					in := ins[x]
					pos := sa*64 + da + x
					want := encodedLen(in)
					dls := []int{2*len(in) + 2, want - 1, want - 63, want - 64,
						(want/64)*64 - 1, (want / 64) * 64, (want/64)*64 + 1, want - 130}
					dl := dls[pos%len(dls)]
					steps := []int{len(in), len(in) - 1, strings.LastIndexByte(string(in), '\n') + 1}
					step := max(steps[pos/3%len(steps)], 1)
					run := kRun{srcStep: step, dstLen: max(dl, 1), srcAlign: sa, dstAlign: da}
					diffEncode(t, k, kModes[pos%2*(pos/2%2+1)], in, run) // Compat twice as often
					diffEncode(t, k, Compat, in, kRun{srcStep: len(in), dstLen: 2*len(in) + 2, srcAlign: sa, dstAlign: da})
					din := append(in[:len(in):len(in)], "\r\n.\r\n"...)
					diffDecode(t, k, kModes[pos%3], 0, din, run)
					diffDecode(t, k, Compat, 0, din, kRun{srcStep: len(din), dstLen: len(din) + 1, srcAlign: sa, dstAlign: da})
				}
			}
		}
	})
}

// encodedLen is the length of in encoded in Compat mode.
func encodedLen(in []byte) int {
	e := Encoder{Mode: Compat}
	var n int
	withKernel(genericKernel, func() {
		dst := make([]byte, 2*len(in)+2)
		n, _, _ = e.Transform(dst, in, false)
	})
	return n
}

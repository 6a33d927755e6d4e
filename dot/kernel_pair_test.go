package dot

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// pairBase returns about n bytes of CRLF lines of up to lineMax letters,
// one in 8 stuffed with a leading "..".
func pairBase(seed uint64, n int, lineMax int) []byte {
	r := rand.New(rand.NewPCG(seed, seed+1))
	var b []byte
	for len(b) < n {
		l := r.IntN(lineMax)
		if r.IntN(8) == 0 {
			b = append(b, '.', '.')
		}
		for range l {
			b = append(b, byte('a'+r.IntN(26)))
		}
		b = append(b, '\r', '\n')
	}
	return b
}

// pairSpecials are the cases pairInputs places in clean text.
var pairSpecials = []struct {
	s       string
	replace bool // overwrite instead of insert
}{
	{"\r", true},         // bare CR
	{"\n", true},         // bare LF
	{"\r\n.\r\n", false}, // end marker
	{"\r\n..x", false},   // line-leading (stuffed) dot
	{"\r\n.x", false},    // line-leading unstuffed dot
	{".\r\n", false},     // dot before CR (not at a line start mostly)
	{"\r\n", false},      // a CRLF (LF at byte 0 of a block when the CR ends one)
	{"\r\n.\n", false},
	{"\r\r\n", false},
	{"\r\n\n", false},
}

// pairInputs returns base with each of pairSpecials, and each of a few
// CR-less runs, placed at offset p.
func pairInputs(base []byte, p int) [][]byte {
	var ins [][]byte
	for _, sp := range pairSpecials {
		in := append([]byte(nil), base[:p]...)
		if sp.replace {
			in = append(in, sp.s...)
			in = append(in, base[p+len(sp.s):]...)
		} else {
			in = append(in, sp.s...)
			in = append(in, base[p:]...)
		}
		ins = append(ins, in)
	}
	// CR-less runs (two, three, four blocks, and around) starting at p.
	for _, n := range []int{127, 128, 129, 190, 191, 192, 193, 255, 256, 257, 320} {
		in := append([]byte(nil), base[:p]...)
		in = append(in, strings.Repeat("q", n)...)
		in = append(in, base[p:]...)
		ins = append(ins, in)
	}
	return ins
}

// TestKernelsPairSpecials puts each special case at every offset of a few
// hundred bytes of clean CRLF text, so at both blocks of the AVX-512
// decoders' two-block turn whatever block the loop was entered at, and at
// every place in the AVX2 loops' blocks, and compares each kernel with
// the generic one.
func TestKernelsPairSpecials(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		if k.name == "generic" {
			t.Skip("the reference")
		}
		pairSpecials1(t, k)
	})
}

func pairSpecials1(t *testing.T, k kernel) {
	cfgs := []modelConfig{
		{mode: Compat}, {mode: Strict}, {mode: Raw},
		{mode: Compat, maxLine: 998}, {mode: Strict, maxLine: 998}, {mode: Raw, maxLine: 998},
		{mode: Compat, maxLine: 200}, {mode: Strict, maxLine: 200, bare: BareKeep}, {mode: Raw, maxLine: 200, bare: BareNormalize},
		{mode: Strict, bare: BareKeep}, {mode: Raw, bare: BareNormalize},
	}
	step := 1
	if testing.Short() || raceEnabled {
		step = 13
	}
	for bi, lineMax := range []int{70, 20, 130} {
		base := pairBase(uint64(bi+1), 900, lineMax)
		for p := 0; p < 520; p += step {
			for x, in := range pairInputs(base, p) {
				in = append(in[:len(in):len(in)], "\r\n.\r\n"...)
				for ci, cfg := range cfgs {
					run := kRun{srcStep: len(in), dstLen: len(in) + 1, srcAlign: (p + x) % 64, dstAlign: (p*3 + ci) % 64}
					diffDecodeCfg(t, k, cfg, in, run)
					if (p+x+ci)%4 == 0 {
						c := cfg
						c.maxSize = int64(p + 100)
						diffDecodeCfg(t, k, c, in, run)
					}
				}
			}
		}
	}
}

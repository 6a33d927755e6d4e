package dot

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// Differential tests of the SIMD kernels against the generic kernel, the
// reference. Every test runs once per kernel as subtest impl=<name>, and
// skips the kernels this CPU or build lacks. A kernel must give, call by
// call, the same nDst, nSrc, error and output as the generic kernel, and
// leave the Decoder or Encoder in the same state.

var kernelNames = []string{"generic", "avx2", "avx512"}

// forKernels runs f for each kernel as subtest impl=<name>.
func forKernels(t *testing.T, f func(t *testing.T, k kernel)) {
	for _, name := range kernelNames {
		t.Run("impl="+name, func(t *testing.T) {
			k, ok := kernelByName(name)
			if !ok {
				t.Skipf("no %s kernel on this CPU or build", name)
			}
			f(t, k)
		})
	}
}

func kernelByName(name string) (kernel, bool) {
	for _, k := range kernels() {
		if k.name == name {
			return k, true
		}
	}
	return kernel{}, false
}

// withKernel runs f with k active.
func withKernel(k kernel, f func()) {
	restore, ok := useKernel(k.name)
	if !ok {
		panic("no kernel " + k.name)
	}
	defer restore()
	f()
}

// kCall is what one Transform call shows: its results, its output and the
// transformer's state after it.
type kCall struct {
	nDst, nSrc int
	err        error
	out        string
	state      kState
}

// kState is the state of a Decoder or Encoder.
type kState struct {
	st, tail     uint8
	soft         bool
	found        uint8
	line         int
	off, n       int64
	dropped      int64
	lfOff, crOff int64
	err          error
}

func (c kCall) String() string {
	return fmt.Sprintf("{nDst=%d nSrc=%d err=%v out=%q state=%+v}", c.nDst, c.nSrc, c.err, c.out, c.state)
}

func kSameErr(a, b error) bool { return sameErr(a, b) }

func (c kCall) equal(o kCall) bool {
	a, b := c.state, o.state
	sa, sb := a, b
	sa.err, sb.err = nil, nil
	return c.nDst == o.nDst && c.nSrc == o.nSrc && kSameErr(c.err, o.err) && c.out == o.out &&
		sa == sb && kSameErr(a.err, b.err)
}

func (d *Decoder) snapshot() kState {
	return kState{st: d.state, soft: d.soft, found: d.found, line: d.line, off: d.off, n: d.n,
		dropped: d.dropped, lfOff: d.lfOff, crOff: d.crOff, err: d.err}
}
func (e *Encoder) snapshot() kState { return kState{st: e.state, tail: e.tail, off: e.off, err: e.err} }

// A kRun describes how input is fed to a transformer: src arrives in
// windows of srcStep bytes (unconsumed bytes stay in the window), each
// call gets a fresh dst of dstLen bytes, and both slices sit at the given
// offsets from a 64-byte boundary with guard bytes after them.
type kRun struct {
	srcStep, dstLen int
	srcAlign        int
	dstAlign        int
}

const (
	guardLen  = 80
	dstGuard  = 0xEE
	srcGuard  = '\n' // a byte that would change decisions if it were read
	maxKCalls = 1 << 20
)

// alignedBuf returns n bytes at offset align from a 64-byte boundary,
// followed by guardLen bytes of g (in cap but outside len and cap of the
// returned slice), and the whole backing array.
func alignedBuf(n, align int, g byte) (b, whole []byte) {
	whole = make([]byte, n+align+guardLen+64)
	base := 0
	for (kAddr(whole)+uintptr(base))%64 != 0 {
		base++
	}
	for i := range whole {
		whole[i] = g
	}
	start := base + align
	return whole[start : start+n : start+n], whole[start:]
}

// kAddr returns the address of b's first byte.
func kAddr(b []byte) uintptr { return reflect.ValueOf(b).Pointer() }

// transformer is the Transform method of a Decoder or Encoder.
type transformer interface {
	Transform(dst, src []byte, atEOF bool) (int, int, error)
	snapshot() kState
}

// kTrace runs t over in as r says and returns every call. what describes
// the run in failure messages.
func kTrace(tb testing.TB, what func() string, tr transformer, in []byte, r kRun) []kCall {
	tb.Helper()
	var calls []kCall
	pos, end := 0, 0
	dstLen := r.dstLen
	for len(calls) < maxKCalls {
		if end-pos < r.srcStep && end < len(in) {
			end = min(len(in), pos+r.srcStep)
		}
		src, srcWhole := alignedBuf(end-pos, r.srcAlign, srcGuard)
		copy(src, in[pos:end])
		dst, dstWhole := alignedBuf(dstLen, r.dstAlign, dstGuard)
		nd, ns, err := tr.Transform(dst, src, end == len(in))
		if nd < 0 || nd > len(dst) || ns < 0 || ns > len(src) {
			tb.Fatalf("%s: Transform returned nDst=%d nSrc=%d for len(dst)=%d len(src)=%d", what(), nd, ns, len(dst), len(src))
		}
		for i := len(dst); i < len(dstWhole); i++ {
			if dstWhole[i] != dstGuard {
				tb.Fatalf("%s: call %d: write past dst: byte %d of %d overwritten", what(), len(calls), i, len(dst))
			}
		}
		for i := len(src); i < len(srcWhole); i++ {
			if srcWhole[i] != srcGuard {
				tb.Fatalf("%s: write into src guard", what())
			}
		}
		if !bytes.Equal(src, in[pos:end]) {
			tb.Fatalf("%s: src modified", what())
		}
		calls = append(calls, kCall{nd, ns, err, string(dst[:nd]), tr.snapshot()})
		pos += ns
		switch err {
		case nil:
			if end == len(in) {
				return calls // the encoder has finished
			}
		case ErrShortDst:
			if nd == 0 && ns == 0 {
				dstLen = 2*dstLen + 1
			}
		default:
			if nd == 0 && ns == 0 {
				return calls
			}
		}
	}
	tb.Fatalf("%s: no progress after %d calls", what(), maxKCalls)
	return nil
}

// diffDecode compares kernel k with the generic kernel on one decoding run.
func diffDecode(tb testing.TB, k kernel, mode Mode, max int64, in []byte, r kRun) {
	tb.Helper()
	diffDecodeCfg(tb, k, modelConfig{mode: mode, maxSize: max}, in, r)
}

// diffDecodeCfg is diffDecode for a Decoder set up as cfg says.
func diffDecodeCfg(tb testing.TB, k kernel, cfg modelConfig, in []byte, r kRun) {
	tb.Helper()
	what := func() string { return fmt.Sprintf("decode %+v run=%+v in=%q", cfg, r, clip(in)) }
	var want, got []kCall
	withKernel(genericKernel, func() {
		want = kTrace(tb, func() string { return what() + " (generic)" }, cfg.decoder(), in,
			r)
	})
	withKernel(k, func() { got = kTrace(tb, what, cfg.decoder(), in, r) })
	compareTraces(tb, what, got, want)
}

// kConfig picks a decoder set-up from x: every mode and policy, with and
// without a line limit (small, around the block sizes, or large).
func kConfig(x int, max int64) modelConfig {
	lines := []int{0, 0, 1, 3, 31, 64, 65, 100, 128, 129, 200, 998}
	return modelConfig{
		mode:    kModes[x%3],
		bare:    barePolicies[x/3%3],
		maxSize: max,
		maxLine: lines[x/9%len(lines)],
	}
}

// diffEncode compares kernel k with the generic kernel on one encoding run.
func diffEncode(tb testing.TB, k kernel, mode Mode, in []byte, r kRun) {
	tb.Helper()
	what := func() string { return fmt.Sprintf("encode %v run=%+v in=%q", mode, r, clip(in)) }
	var want, got []kCall
	withKernel(genericKernel, func() {
		want = kTrace(tb, func() string { return what() + " (generic)" }, &Encoder{Mode: mode}, in,
			r)
	})
	withKernel(k, func() { got = kTrace(tb, what, &Encoder{Mode: mode}, in, r) })
	compareTraces(tb, what, got, want)
}

func clip(b []byte) []byte {
	if len(b) > 400 {
		return b[:400]
	}
	return b
}

func compareTraces(tb testing.TB, what func() string, got, want []kCall) {
	tb.Helper()
	for i := range min(len(got), len(want)) {
		if !got[i].equal(want[i]) {
			tb.Fatalf("%s\ncall %d:\n got %v\nwant %v", what(), i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		tb.Fatalf("%s\n%d calls, want %d", what(), len(got), len(want))
	}
}

var kModes = []Mode{Compat, Strict, Raw}

// kInput returns n random bytes in one of several styles: mail-like lines,
// lines with many dots and line ends, or noise over the special bytes.
func kInput(r *rand.Rand, n, style int) []byte {
	b := make([]byte, 0, n)
	switch style % 7 {
	case 0: // CRLF lines, some dot-stuffed
		for len(b) < n {
			l := r.IntN(90)
			if r.IntN(4) == 0 {
				b = append(b, '.', '.')
			}
			for range l {
				b = append(b, byte('a'+r.IntN(26)))
			}
			b = append(b, '\r', '\n')
		}
	case 1: // short lines with every kind of ending and leading dots
		ends := []string{"\r\n", "\r\n", "\r\n", "\n", "\r", "\r\r\n"}
		for len(b) < n {
			switch r.IntN(5) {
			case 0:
				b = append(b, '.')
			case 1:
				b = append(b, '.', '.')
			}
			for range r.IntN(6) {
				b = append(b, "ab.\x00"[r.IntN(4)])
			}
			b = append(b, ends[r.IntN(len(ends))]...)
		}
	case 2: // noise over the special bytes
		const alphabet = "..\r\r\r\n\n\nab\x00"
		for len(b) < n {
			b = append(b, alphabet[r.IntN(len(alphabet))])
		}
	case 4: // long lines: copied whole by the SIMD kernels' copy loops
		ends := []string{"\r\n", "\r\n", "\n", "\r", "\r\n.", "\r\n..", "\r\n.\r\n"}
		for len(b) < n {
			for range 60 + r.IntN(300) {
				b = append(b, "abc.de"[r.IntN(6)])
			}
			b = append(b, ends[r.IntN(len(ends))]...)
		}
	case 5: // very long lines, past the two-block copy loops
		for len(b) < n {
			for range 200 + r.IntN(2000) {
				b = append(b, "abcdefgh."[r.IntN(9)])
			}
			b = append(b, "\r\n\n\r"[r.IntN(3):][:1+r.IntN(2)]...)
		}
	case 6: // mail: CRLF lines, some dot-stuffed, with a rare fault
		// anywhere in a line: a bare CR or LF, a CR before a CRLF, an
		// end marker or a look-alike, an unstuffed leading dot
		faults := []string{"\r", "\n", "\r\r\n", "\r\n.\r\n", "\r\n.\n", "\n.\r\n", "\r\n.", "\n\n", "\r\n\n"}
		for len(b) < n {
			if r.IntN(10) == 0 {
				b = append(b, '.', '.')
			}
			l := r.IntN(80)
			f := -1
			if r.IntN(25) == 0 {
				f = r.IntN(l + 1)
			}
			for i := range l + 1 {
				if i == f {
					b = append(b, faults[r.IntN(len(faults))]...)
				}
				if i < l {
					b = append(b, byte('a'+r.IntN(26)))
				}
			}
			b = append(b, '\r', '\n')
		}
	case 3: // long ordinary stretches with rare special bytes
		for len(b) < n {
			c := byte('a' + r.IntN(26))
			switch r.IntN(40) {
			case 0:
				c = '\r'
			case 1:
				c = '\n'
			case 2:
				c = '.'
			}
			b = append(b, c)
		}
	}
	return b[:n]
}

// TestKernelsEdges runs every length from 0 to 300 at every alignment of
// src, whole and in windows, against the generic kernel.
func TestKernelsEdges(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		if k.name == "generic" {
			t.Skip("the reference")
		}
		r := rand.New(rand.NewPCG(1, 2))
		stride := 1 // of alignments and window sizes
		if raceEnabled || testing.Short() {
			stride = 9
		}
		for n := 0; n <= 300; n++ {
			for align := n % stride; align < 64; align += stride {
				in := kInput(r, n, n+align)
				if r.IntN(3) == 0 && n > 3 {
					in = append(in[:n-3], ".\r\n"...)
				}
				run := kRun{srcStep: n + 1, dstLen: n + 1, srcAlign: align, dstAlign: (align * 7) % 64}
				for _, mode := range kModes {
					diffDecode(t, k, mode, 0, in, run)
					diffEncode(t, k, mode, in, run)
				}
				diffDecodeCfg(t, k, kConfig(n*7+align, 0), in, run)
			}
			// Small windows and small dst, around the block size.
			for si, step := range []int{1, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129} {
				for di, dl := range []int{1, 2, 5, 32, 63, 64, 65, 96, 100, 129, 2*n + 3} {
					if (n+si+di)%stride != 0 {
						continue
					}
					in := kInput(r, n, step+dl)
					run := kRun{srcStep: step, dstLen: dl, srcAlign: (n + step) % 64, dstAlign: (n + dl) % 64}
					mode := kModes[(step+dl+n)%3]
					max := int64(r.IntN(2*n+2)) * int64(r.IntN(2))
					diffDecode(t, k, mode, max, in, run)
					diffEncode(t, k, mode, in, run)
					diffDecodeCfg(t, k, kConfig(r.IntN(81), max), in, run)
				}
			}
		}
	})
}

// TestKernelsRandom compares longer random inputs under random windows,
// dst sizes and limits.
func TestKernelsRandom(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		if k.name == "generic" {
			t.Skip("the reference")
		}
		r := rand.New(rand.NewPCG(3, 4))
		rc := rand.New(rand.NewPCG(30, 40))
		iters := 3000
		if testing.Short() {
			iters = 300
		}
		for i := range iters {
			n := r.IntN(3000)
			in := kInput(r, n, i)
			if r.IntN(2) == 0 {
				in = append(in, ".\r\n"...)
			}
			run := kRun{
				srcStep:  1 + r.IntN(n+1),
				dstLen:   1 + r.IntN(2*n+1),
				srcAlign: r.IntN(64),
				dstAlign: r.IntN(64),
			}
			var max int64
			if r.IntN(3) == 0 {
				max = int64(r.IntN(n + 1))
			}
			mode := kModes[r.IntN(3)]
			diffDecode(t, k, mode, max, in, run)
			diffEncode(t, k, mode, in, run)
			// (A stream of its own, so that the runs above stay as they were.)
			cfg := kConfig(rc.IntN(81), max)
			if rc.IntN(3) == 0 {
				cfg.maxLine = 1 + rc.IntN(2500)
			}
			diffDecodeCfg(t, k, cfg, in, run)
		}
	})
}

// TestKernelsLarge runs inputs longer than one assembly call (asmChunk),
// with special bytes placed around the chunk and window edges.
func TestKernelsLarge(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		if k.name == "generic" {
			t.Skip("the reference")
		}
		r := rand.New(rand.NewPCG(5, 6))
		// Short CRLF lines, and long lines.
		bases := [][]byte{kInput(r, 2*asmChunk+100, 0), kInput(r, 2*asmChunk+100, 4), kInput(r, 2*asmChunk+100, 5)}
		specials := []string{".\r\n", "\r\n..", "\n\n", "\r", "\r\r\n", "\r\n.\n"}
		for pi, pos := range []int{asmChunk - 2, asmChunk - 1, asmChunk, 2*asmChunk - 1, 4095} {
			for si, sp := range specials {
				in := append([]byte(nil), bases[(pi+si)%3]...)
				copy(in[pos:], sp)
				in = append(in, "\r\n.\r\n"...)
				for mi, mode := range kModes {
					runs := []kRun{
						{srcStep: len(in), dstLen: len(in) + 1},
						{srcStep: 4096, dstLen: 32 << 10},
					}
					run := runs[(si+mi)%2]
					diffDecode(t, k, mode, 0, in, run)
					diffEncode(t, k, mode, in, run)
					if mode == Compat {
						diffDecode(t, k, mode, int64(pos), in, run)
					}
					cfg := modelConfig{mode: mode, bare: barePolicies[(pi+si)%3], maxLine: []int{998, 2100, asmChunk - 1, asmChunk + 1}[(pi+mi)%4]}
					diffDecodeCfg(t, k, cfg, in, run)
				}
			}
		}
	})
}

// TestKernelsFastEntry puts a fault into clean mail (which the SIMD
// kernels' fast loops take), then an LF-starting line ("\n\n.x": the dot
// is text, since net/textproto does not start a line at the second LF)
// at every position of the next few hundred bytes: the fast loops are
// left at the fault, and entered again a few blocks on, one of them right
// after the first of the LFs.
func TestKernelsFastEntry(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		if k.name == "generic" {
			t.Skip("the reference")
		}
		r := rand.New(rand.NewPCG(7, 8))
		base := kInput(r, 3000, 0)
		for _, fault := range []string{"\r", "\n", "\n\n"} {
			for q := 1024; q < 1400; q++ {
				in := append([]byte(nil), base...)
				copy(in[1000:], fault)
				copy(in[q:], "\n\n.x")
				in = append(in, "\r\n.\r\n"...)
				run := kRun{srcStep: len(in), dstLen: len(in) + 1, srcAlign: q % 64}
				for _, mode := range kModes {
					diffDecode(t, k, mode, 0, in, run)
					diffEncode(t, k, mode, in, run)
					// The line-limit twins' entries too.
					diffDecodeCfg(t, k, modelConfig{mode: mode, maxLine: 998}, in, run)
					if mode == Compat {
						continue
					}
					// A bare CR or LF ends the SIMD kernels' part of the
					// data under BareReject; under the other policies they
					// go on after it, and enter their loops again.
					for _, bare := range []BarePolicy{BareKeep, BareNormalize} {
						diffDecodeCfg(t, k, modelConfig{mode: mode, bare: bare}, in, run)
						diffDecodeCfg(t, k, modelConfig{mode: mode, bare: bare, maxLine: 998}, in, run)
					}
				}
			}
		}
	})
}

// TestKernelsCRAtBlockEnd puts a CR at every offset of the blocks after
// some mail, followed by an LF or by something else (a bare CR, the
// loops' way out): the AVX-512 Strict encoder's loop takes a block whose
// last byte is a CR and must give it back when the next byte shows it
// bare.
func TestKernelsCRAtBlockEnd(t *testing.T) {
	const line = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ\r\n" // 64 bytes
	forKernels(t, func(t *testing.T, k kernel) {
		if k.name == "generic" {
			t.Skip("the reference")
		}
		for off := range 130 {
			for _, next := range []string{"x", "\n", ".", "\r", "\r\n"} {
				in := []byte(strings.Repeat(line, 4) + strings.Repeat("p", off) + "\r" + next + strings.Repeat("y", 100) + "\r\n" + line)
				run := kRun{srcStep: len(in), dstLen: 2*len(in) + 2}
				for _, m := range []Mode{Compat, Strict} {
					diffEncode(t, k, m, in, run)
				}
				for _, bare := range []BarePolicy{BareReject, BareKeep, BareNormalize} {
					for _, m := range []Mode{Strict, Raw} {
						diffDecodeCfg(t, k, modelConfig{mode: m, bare: bare}, append(in, ".\r\n"...), run)
					}
				}
			}
		}
	})
}

// TestKernelsCRNearEnd puts a CR, bare or not, at the last, second-last
// or first byte of every block near the end of src, so that the encoders'
// loops end (by src or by dst) right after the block it ends, or leave it
// for the mask path. (From the review of the AVX-512 Strict encoder.)
func TestKernelsCRNearEnd(t *testing.T) {
	const line = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ\r\n" // 64 bytes
	forKernels(t, func(t *testing.T, k kernel) {
		if k.name == "generic" {
			t.Skip("the reference")
		}
		step := 1 // of lengths
		if raceEnabled || testing.Short() {
			step = 7
		}
		for _, body := range []string{line, "ab\r\ncd\r\n" + line[8:], strings.Repeat("q", 64)} {
			for n := 250; n <= 400; n += step {
				for cr := 60; cr < n-1; cr++ {
					if c := cr % 64; c != 63 && c != 62 && c != 0 {
						continue
					}
					for _, next := range []byte{'x', '\r', '\n', '.'} {
						in := []byte(strings.Repeat(body, n/64+1)[:n])
						in[cr], in[cr+1] = '\r', next
						for _, run := range []kRun{
							{srcStep: n, dstLen: 2*n + 2},
							{srcStep: n, dstLen: n - 40},
							{srcStep: n, dstLen: n + 1, srcAlign: 1, dstAlign: 5},
						} {
							diffEncode(t, k, Strict, in, run)
							diffEncode(t, k, Raw, in, run)
						}
					}
				}
			}
		}
	})
}

// TestKernelsLeanDots puts a line-leading dot at every offset of a block
// the lean loops take (the AVX-512 encoders stuff a block's one dot
// there, the decoders delete the dots there):
// alone, two in a block, and in three blocks in a row (at offsets 63 and
// 0 among them), followed by mail, a line that leaves for the long-line
// loop, or a bare LF that leaves for the mask path, with dst and src
// ending around the block.
func TestKernelsLeanDots(t *testing.T) {
	const line = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ\r\n" // 64 bytes
	mail := strings.Repeat(line, 8)
	long := strings.Repeat("y", 300) + "\r\n"
	forKernels(t, func(t *testing.T, k kernel) {
		if k.name == "generic" {
			t.Skip("the reference")
		}
		step := 1 // of dst and src sizes
		if raceEnabled || testing.Short() {
			step = 7
		}
		for off := range 64 {
			for _, shape := range []string{"one", "two", "63+0"} {
				for _, after := range []string{mail, long + mail, "zz\nq\r\n" + mail} {
					b := []byte(mail)
					pre := strings.Repeat("p", 64+off)
					b = append(b, pre[:len(pre)-2]...)
					b = append(b, "\r\n"...) // the dot is at offset off of its block
					switch shape {
					case "one":
						b = append(b, ".dot line\r\n"...)
					case "two":
						b = append(b, ".\r\n.x\r\n"...)
					case "63+0": // dots at off, off+64 and off+127
						b = append(b, ("." + strings.Repeat("d", 61) + "\r\n")...)
						b = append(b, ("." + strings.Repeat("e", 60) + "\r\n.")...)
					}
					in := append(b, after...)
					n := len(in)
					runs := []kRun{{srcStep: n, dstLen: 2*n + 2}}
					for d := 512 + off - 70; d <= 512+off+200; d += step {
						runs = append(runs, kRun{srcStep: n, dstLen: d, dstAlign: d % 64})
					}
					for s := 512 + off - 70; s <= 512+off+200; s += 3 * step {
						runs = append(runs, kRun{srcStep: s, dstLen: 2*n + 2, srcAlign: s % 64})
					}
					for n, run := range runs {
						diffEncode(t, k, Compat, in, run)
						if n%5 == 0 { // the decoders' loops delete the dots
							for _, mode := range kModes {
								diffDecode(t, k, mode, 0, append(in, ".\r\n"...), run)
							}
						}
					}
				}
			}
		}
	})
}

// TestKernelsLongDotLine puts a line of a stuffed dot and 190 bytes at a
// block boundary after mail of 62-byte lines, at every offset: the AVX2
// Compat fast loop can take it unchecked through its side path (the dot
// at a block's first byte), one block without a line ending and the CR
// in the next, so its line-limit entry must allow for 191 bytes.
func TestKernelsLongDotLine(t *testing.T) {
	const text = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ\r\n"
	forKernels(t, func(t *testing.T, k kernel) {
		if k.name == "generic" {
			t.Skip("the reference")
		}
		for _, max := range []int{190, 191, 224, 253, 254} {
			for off := range 128 {
				var in []byte
				for len(in) < 1024+off {
					in = append(in, text...)
				}
				in = append(in[:1024+off-2], "\r\n."+strings.Repeat("x", max)+"\r\n"...)
				for range 8 {
					in = append(in, text...)
				}
				in = append(in, ".\r\n"...)
				for _, mode := range kModes {
					run := kRun{srcStep: len(in), dstLen: len(in) + 1, srcAlign: off % 3 * 17}
					diffDecodeCfg(t, k, modelConfig{mode: mode, maxLine: max}, in, run)
					diffDecodeCfg(t, k, modelConfig{mode: mode, maxLine: max - 1}, in, run)
				}
			}
		}
	})
}

// TestKernelsMaxLine puts lines of MaxLine-1, MaxLine and MaxLine+1 bytes
// (CRLF lines, with or without a stuffed dot) at every position around
// the vector widths and the ends of src and dst, for every kernel.
func TestKernelsMaxLine(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		if k.name == "generic" {
			t.Skip("the reference")
		}
		// (The kernels keep limits of two blocks or more themselves: 64
		// and 128 bytes.)
		limits := []int{1, 2, 5, 31, 32, 33, 63, 64, 65, 127, 128, 129, 191, 192, 998, 5000}
		if testing.Short() || raceEnabled {
			limits = []int{2, 33, 64, 128, 998}
		}
		for _, max := range limits {
			for _, delta := range []int{-1, 0, 1} {
				l := max + delta
				if l < 1 {
					continue
				}
				for _, pre := range []int{0, 1, 7, 31, 32, 33, 64, 100} {
					var b []byte
					for range pre {
						b = append(b, "ab\r\n"[len(b)%4])
					}
					if len(b) > 0 && b[len(b)-1] == '\r' {
						b = append(b, '\n')
					}
					line := strings.Repeat("x", l)
					if pre%2 == 1 {
						line = "." + line[1:]
						if l == 1 {
							line = ".."
						}
					}
					in := append(b, line+"\r\n"+line+"\r\n.\r\n"...)
					for x, run := range []kRun{
						{srcStep: len(in), dstLen: len(in) + 1},
						{srcStep: 64, dstLen: 100},
						{srcStep: len(in), dstLen: l + 3},
						{srcStep: 7, dstLen: 65},
					} {
						cfg := modelConfig{mode: kModes[x%3], bare: barePolicies[(pre+x)%3], maxLine: max}
						diffDecodeCfg(t, k, cfg, in, run)
						cfg.maxSize = int64(len(in) / 2)
						diffDecodeCfg(t, k, cfg, in, run)
					}
				}
			}
		}
	})
}

// TestKernelsStrictOffsets checks that every kernel reports a bare CR or LF
// at its exact offset, wherever it is.
func TestKernelsStrictOffsets(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		line := strings.Repeat("x", 70) + "\r\n"
		body := []byte(strings.Repeat(line, 10))
		for pos := 0; pos < len(body); pos += 7 {
			for _, bad := range []byte{'\r', '\n'} {
				in := append([]byte(nil), body...)
				if in[pos] == '\r' || in[pos] == '\n' {
					continue
				}
				in[pos] = bad
				in = append(in, ".\r\n"...)
				var derr error
				withKernel(k, func() {
					d := Decoder{Mode: Strict}
					dst := make([]byte, len(in))
					_, _, derr = d.Transform(dst, in, true)
				})
				var se *SyntaxError
				if !errors.As(derr, &se) || se.Offset != int64(pos) {
					t.Fatalf("decode: bare %q at %d: err %v", bad, pos, derr)
				}
				var eerr error
				withKernel(k, func() {
					e := Encoder{Mode: Strict}
					dst := make([]byte, 2*len(in)+10)
					_, _, eerr = e.Transform(dst, in[:len(in)-3], true)
				})
				if !errors.As(eerr, &se) || se.Offset != int64(pos) {
					t.Fatalf("encode: bare %q at %d: err %v", bad, pos, eerr)
				}
			}
		}
	})
}

// TestKernelsAllocs checks that no kernel allocates.
func TestKernelsAllocs(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		in := []byte(strings.Repeat("hello world\r\n..dot\r\n\r\n", 400) + ".\r\n")
		dst := make([]byte, 2*len(in))
		withKernel(k, func() {
			for _, mode := range kModes {
				d := Decoder{Mode: mode}
				if a := testing.AllocsPerRun(50, func() {
					d.Reset()
					d.Transform(dst, in, true)
				}); a != 0 {
					t.Errorf("decode %v: %v allocs", mode, a)
				}
				e := Encoder{Mode: mode}
				if a := testing.AllocsPerRun(50, func() {
					e.Reset()
					e.Transform(dst, in, true)
				}); a != 0 {
					t.Errorf("encode %v: %v allocs", mode, a)
				}
			}
		})
	})
}

func TestKernelName(t *testing.T) {
	name := Kernel()
	if _, ok := kernelByName(name); !ok {
		t.Fatalf("Kernel() = %q, not one of this CPU's kernels", name)
	}
	ks := kernels()
	if best := ks[len(ks)-1].name; name != best {
		t.Errorf("Kernel() = %q, want the best available, %q", name, best)
	}
	for _, k := range ks {
		restore, ok := useKernel(k.name)
		if !ok || Kernel() != k.name {
			t.Errorf("useKernel(%q): ok=%v Kernel()=%q", k.name, ok, Kernel())
		}
		restore()
	}
	if Kernel() != name {
		t.Errorf("restore left %q, want %q", Kernel(), name)
	}
	if _, ok := useKernel("nonesuch"); ok {
		t.Error("useKernel accepted an unknown kernel")
	}
}

func TestLastIndexLF(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for n := 0; n < 80; n++ {
		for range 200 {
			b := make([]byte, n)
			for i := range b {
				b[i] = "\n\x0a\x8a\x0b\x09\xff\x00a"[r.IntN(8)]
			}
			if got, want := lastIndexLF(b), bytes.LastIndexByte(b, '\n'); got != want {
				t.Fatalf("lastIndexLF(%q) = %d, want %d", b, got, want)
			}
		}
	}
}

// TestKernelsMaxLineDeep is TestKernelsMaxLine deep in the input, where the
// SIMD kernels have gone into their fast loops (after some blocks of
// short lines): lines of MaxLine-1, MaxLine and MaxLine+1 bytes at every
// offset in a block, for limits around one, two and three blocks.
func TestKernelsMaxLineDeep(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		if k.name == "generic" {
			t.Skip("the reference")
		}
		// (Up to 191 bytes, a line can pass through the AVX2 Compat fast
		// loop without a check of its own, and up to 254 through the
		// AVX-512 loops: see decodeCompatFastY and decodeBody512.)
		limits := []int{64, 65, 100, 127, 128, 129, 150, 160, 170, 180, 190, 191, 192, 200, 230, 254, 255, 256, 998}
		offsets := 64
		if testing.Short() || raceEnabled {
			limits, offsets = []int{65, 128, 150, 170, 191, 230}, 8
		}
		for _, max := range limits {
			for _, delta := range []int{-1, 0, 1} {
				line := strings.Repeat("x", max+delta)
				for off := range offsets {
					var b []byte
					for len(b) < 1024+off {
						b = append(b, "ab\r\n"...)
					}
					b = append(b[:1024+off-2], "\r\n"...)
					in := append(b, line+"\r\nab\r\n"+line+"\r\n"...)
					for len(in) < 1600+off {
						in = append(in, "ab\r\n"...)
					}
					in = append(in, ".\r\n"...)
					for x, run := range []kRun{
						{srcStep: len(in), dstLen: len(in) + 1},
						{srcStep: 1500, dstLen: 700},
						// A call that starts in the long line, 192 to 252
						// bytes before its end.
						{srcStep: 1024 + off + len(line) - 192 - off%61, dstLen: len(in) + 1},
					} {
						cfg := modelConfig{mode: kModes[(off+x)%3], bare: barePolicies[off%3], maxLine: max}
						diffDecodeCfg(t, k, cfg, in, run)
					}
				}
			}
		}
	})
}

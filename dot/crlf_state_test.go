package dot

import (
	"bytes"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestCleanOddStates compares every kernel's Clean with the generic
// kernel's from states no Clean call produces with the same maxLine: a
// negative Line (with which the AVX2 and AVX-512 kernels took whole
// blocks whose lines broke maxLine), a Line past maxLine, and Lines near
// the ends of int (Line math.MaxInt with a CR pending overflowed their
// count, with the same effect).
func TestCleanOddStates(t *testing.T) {
	lines := []int{-1, -2, -7, -8, -9, -63, -64, -65, -100, -1000, -1 << (bits.UintSize - 24), math.MinInt + 1, math.MinInt,
		0, 1, 62, 63, 64, 65, 129, 200, 997, 998, 999, 2000, 1 << (bits.UintSize - 24), math.MaxInt - 64, math.MaxInt - 1, math.MaxInt}
	r := rand.New(rand.NewPCG(3, 4))
	var texts [][]byte
	texts = append(texts, bytes.Repeat([]byte("x"), 300), bytes.Repeat([]byte("abcdefg\r\n"), 40),
		append([]byte("\n"), bytes.Repeat([]byte("x"), 300)...), append([]byte("\n"), bytes.Repeat([]byte("ab\r\n"), 80)...))
	for range 6 {
		texts = append(texts, crlfText(r, 400, []int{1, 10, 70, 130, 300}, false))
	}
	forKernels(t, func(t *testing.T, k kernel) {
		for _, maxLine := range []int{0, 1, 8, 64, 65, 128, 200, 998} {
			for _, line := range lines {
				for _, cr := range []bool{false, true} {
					for ti, text := range texts {
						for _, off := range []int{0, 1, 2, 7, 8, 9} {
							s0 := LineState{Line: line, CR: cr}
							want := s0
							var w int
							withKernel(genericKernel, func() { w = want.Clean(text[off:], maxLine) })
							got := s0
							var g int
							withKernel(k, func() { g = got.Clean(text[off:], maxLine) })
							if g != w || got != want {
								t.Fatalf("maxLine %d, from %+v, text %d at %d: Clean = %d, %+v; generic %d, %+v", maxLine, s0, ti, off, g, got, w, want)
							}
							if line < 0 {
								// A negative Line counts as 0.
								model := LineState{CR: cr}
								if m := cleanModel(&model, text[off:], maxLine); g != m || got != model {
									t.Fatalf("maxLine %d, from %+v, text %d at %d: Clean = %d, %+v; model from Line 0 %d, %+v", maxLine, s0, ti, off, g, got, m, model)
								}
							}
						}
					}
				}
			}
		}
	})
}

// TestCleanHugeLine starts Clean from a Line near the top of int, or past
// maxLine, and compares every kernel with the model: the kernels counted
// such a line past the top of int and then took the bytes after it as
// if the line were short, past maxLine, and left a negative Line.
func TestCleanHugeLine(t *testing.T) {
	lines := []int{999, 5000, math.MaxInt/2 - 1, math.MaxInt / 2, math.MaxInt/2 + 1, math.MaxInt - 100, math.MaxInt - 3, math.MaxInt}
	var texts [][]byte
	for _, n := range []int{7, 8, 63, 64, 65, 200} {
		texts = append(texts, bytes.Repeat([]byte("a"), n), append(bytes.Repeat([]byte("a"), n), "\r\nbc\r\n"...))
	}
	texts = append(texts, []byte("\r\nabc"), []byte("\r"), bytes.Repeat([]byte("abcdefg\r\n"), 40))
	forKernels(t, func(t *testing.T, k kernel) {
		withKernel(k, func() {
			for _, maxLine := range []int{0, 10, 998, math.MaxInt - 1} {
				for _, line := range lines {
					for _, cr := range []bool{false, true} {
						for ti, text := range texts {
							s0 := LineState{Line: line, CR: cr}
							got, want := s0, s0
							g := got.Clean(text, maxLine)
							w := cleanModel(&want, text, maxLine)
							if g != w || got != want {
								t.Fatalf("maxLine %d, from %+v, text %d %q: Clean = %d, %+v; want %d, %+v", maxLine, s0, ti, clip(text), g, got, w, want)
							}
						}
					}
				}
			}
		})
	})
}

package dot

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// cleanModel is LineState.Clean one byte at a time, written from its
// documentation: the oracle for every kernel.
func cleanModel(s *LineState, text []byte, maxLine int) int {
	for i, c := range text {
		switch {
		case s.CR && c == '\n':
			*s = LineState{}
		case s.CR:
			return i // the CR before c is bare
		case c == '\n':
			return i // a bare LF
		case c == '\r':
			s.CR = true
		case maxLine > 0 && s.Line >= maxLine:
			return i // a byte too many
		case s.Line < math.MaxInt: // (Line counts up to there)
			s.Line++
		}
	}
	return len(text)
}

// crlfText returns CRLF text of about n bytes whose lines are near the
// lengths in lens, with a bare CR or LF now and then if bad.
func crlfText(r *rand.Rand, n int, lens []int, bad bool) []byte {
	var b []byte
	for len(b) < n {
		l := max(lens[r.IntN(len(lens))]+r.IntN(3)-1, 0)
		for range l {
			b = append(b, "abcdefgh."[r.IntN(9)])
		}
		if bad && r.IntN(40) == 0 {
			b = append(b, "\r\n"[r.IntN(2)])
			continue
		}
		b = append(b, '\r', '\n')
	}
	return b
}

// TestCleanKernels compares every kernel's Clean with the model on the
// same pieces of text, for lines around the word and block sizes and the
// limit.
func TestCleanKernels(t *testing.T) {
	limits := []int{0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200, 998}
	forKernels(t, func(t *testing.T, k kernel) {
		withKernel(k, func() {
			r := rand.New(rand.NewPCG(1, 2))
			rounds := 3000
			if testing.Short() || raceEnabled {
				rounds = 300
			}
			for round := range rounds {
				maxLine := limits[round%len(limits)]
				lens := []int{maxLine, maxLine, r.IntN(80), 1 + r.IntN(3)}
				text := crlfText(r, 50+r.IntN(700), lens, round%3 == 0)
				var got, want LineState
				for i := 0; i < len(text); {
					n := min(len(text)-i, 1+r.IntN(300))
					if round%7 == 0 {
						n = len(text) - i
					}
					piece := text[i : i+n]
					g := got.Clean(piece, maxLine)
					w := cleanModel(&want, piece, maxLine)
					if g != w || got != want {
						t.Fatalf("maxLine %d, text %q, piece at %d %q: Clean = %d, %+v; want %d, %+v", maxLine, text, i, piece, g, got, w, want)
					}
					if w < n {
						break
					}
					i += n
				}
			}
		})
	})
}

// TestCleanEdges puts one bad byte, or a line of the limit's length or one
// more, at every offset around the block sizes.
func TestCleanEdges(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		withKernel(k, func() {
			for _, maxLine := range []int{0, 64, 128, 129, 200} {
				for at := 0; at < 200; at++ {
					for _, bad := range []string{"\n", "\r", "x\r\n", "\r\r\n"} {
						good := bytes.Repeat([]byte("abcdefg\r\n"), 40)
						text := append(append(append([]byte{}, good[:at]...), bad...), good[at:]...)
						for _, pre := range []LineState{{}, {Line: 5}, {CR: true}} {
							got, want := pre, pre
							g := got.Clean(text, maxLine)
							w := cleanModel(&want, text, maxLine)
							if g != w || got != want {
								t.Fatalf("maxLine %d, from %+v, %q: Clean = %d, %+v; want %d, %+v", maxLine, pre, text, g, got, w, want)
							}
						}
					}
					if maxLine > 0 {
						for _, l := range []int{maxLine, maxLine + 1} {
							text := append(bytes.Repeat([]byte("ab\r\n"), at/4), bytes.Repeat([]byte("y"), l)...)
							text = append(text, "\r\nzz\r\n"...)
							var got, want LineState
							g := got.Clean(text, maxLine)
							w := cleanModel(&want, text, maxLine)
							if g != w || got != want {
								t.Fatalf("maxLine %d, line %d at %d: Clean = %d, %+v; want %d, %+v", maxLine, l, at, g, got, w, want)
							}
						}
					}
				}
			}
		})
	})
}

func TestCleanAllocs(t *testing.T) {
	text := bytes.Repeat([]byte("a line of text\r\n"), 1000)
	var s LineState
	if n := testing.AllocsPerRun(10, func() { s = LineState{}; s.Clean(text, 998) }); n != 0 {
		t.Errorf("Clean allocates %v times", n)
	}
}

func FuzzClean(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	f.Add([]byte("a\r\nbc\r\n\r\n"), uint16(0), uint16(3), false, uint16(2))
	f.Add(bytes.Repeat([]byte("x"), 300), uint16(5), uint16(200), true, uint16(100))
	f.Fuzz(func(t *testing.T, text []byte, line, maxLine uint16, cr bool, step uint16) {
		// A state Clean leaves, and one with a negative Line, which
		// counts as 0.
		starts := []LineState{{Line: int(line) % (int(maxLine) + 1), CR: cr}, {Line: -int(line) - 1, CR: cr}}
		for _, k := range kernels() {
			for _, s0 := range starts {
				fuzzCleanFrom(t, k, s0, text, int(maxLine), int(step))
			}
		}
	})
}

// fuzzCleanFrom runs Clean with kernel k from s0 on text in pieces of
// step+1 bytes, and compares it with the model.
func fuzzCleanFrom(t *testing.T, k kernel, s0 LineState, text []byte, maxLine, step int) {
	withKernel(k, func() {
		got, want := s0, s0
		want.Line = max(want.Line, 0)
		for i := 0; i < len(text); {
			n := min(len(text)-i, step+1)
			g := got.Clean(text[i:i+n], maxLine)
			w := cleanModel(&want, text[i:i+n], maxLine)
			if g != w || got != want {
				t.Fatalf("%s: from %+v, %q at %d: Clean = %d, %+v; want %d, %+v", k.name, s0, text, i, g, got, w, want)
			}
			if w < n {
				break
			}
			i += n
		}
	})
}

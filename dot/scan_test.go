package dot

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// lineInput returns about n bytes of CRLF lines of 0 to 2*avg letters, with
// a few of the things cleanLines must stop at: a leading dot, a bare CR or
// LF, a line of long bytes, an end marker (each with probability about
// 1/odd per line; odd 0 means none).
func lineInput(r *rand.Rand, n, avg, long, odd int) []byte {
	var b []byte
	for len(b) < n {
		k := r.IntN(2*avg + 1)
		if odd > 0 && r.IntN(odd) == 0 {
			switch r.IntN(5) {
			case 0:
				b = append(b, '.')
			case 1:
				b = append(b, "ab\rc"...)
			case 2:
				b = append(b, "ab\nc"...)
			case 3:
				k = long
			case 4:
				b = append(b, ".\r\n"...)
				continue
			}
		}
		for range k {
			b = append(b, byte('a'+r.IntN(26)))
		}
		b = append(b, '\r', '\n')
	}
	return b
}

// cleanPrefix is cleanLines' rule one line at a time: the length of the
// longest prefix of b made of whole lines that end in CRLF, hold no other
// CR or LF, start with no dot and (maxLine > 0) have at most maxLine bytes.
func cleanPrefix(b []byte, maxLine int) int {
	n := 0
	for {
		lf := bytes.IndexByte(b[n:], '\n')
		if lf < 1 {
			return n
		}
		line := b[n : n+lf-1]
		if b[n+lf-1] != '\r' || bytes.ContainsAny(line, "\r\n") ||
			bytes.HasPrefix(line, []byte(".")) || maxLine > 0 && len(line) > maxLine {
			return n
		}
		n += lf + 1
	}
}

// TestCleanLines checks cleanLines against cleanPrefix: it may stop early
// (in the 32 bytes that hold a problem, or at a line within 64 bytes of
// maxLine) but never takes more.
func TestCleanLines(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for iter := range 3000 {
		maxLine := []int{0, 0, 40, 64, 100, 200, 998}[iter%7]
		b := lineInput(r, r.IntN(600), 1+r.IntN(40), 64+r.IntN(200), r.IntN(20))
		b = b[:r.IntN(len(b)+1)]
		n, next := cleanLines(b, maxLine)
		want := cleanPrefix(b, maxLine)
		if n > want || next < n || next > len(b) {
			t.Fatalf("cleanLines(%q, %d) = %d, %d; the clean prefix is %d", b, maxLine, n, next, want)
		}
		// Where no line comes near maxLine, it takes every line that ends
		// before the 32 bytes of the first problem.
		if maxLine != 0 && maxLine != 998 {
			continue
		}
		if least := cleanPrefix(b[:want&^31], 0); n < least {
			t.Fatalf("cleanLines(%q, %d) = %d, short of %d", b, maxLine, n, least)
		}
	}
}

// TestLineRuns decodes and encodes line-shaped input, where the generic
// kernels copy runs of clean lines in bulk, through every chunking,
// against the model (decoding) and the oracles (encoding).
func TestLineRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	n := 600
	if testing.Short() || raceEnabled {
		n = 100
	}
	for range n {
		in := lineInput(r, 50+r.IntN(1500), []int{1, 4, 30, 60}[r.IntN(4)], 900+r.IntN(200), r.IntN(40))
		if r.IntN(2) == 0 {
			in = append(in, ".\r\n"...)
		}
		srcStep, dstStep := 1+r.IntN(400), 1+r.IntN(400)
		cfg := modelConfig{mode: Mode(r.IntN(3)), bare: BarePolicy(r.IntN(3)), maxLine: []int{0, 0, 10, 64, 65, 998, 1000}[r.IntN(7)]}
		want := modelDecode(cfg, in)
		if got := decodeChunkedCfg(cfg, in, srcStep, dstStep); !got.equal(want) {
			t.Fatalf("%+v %q src=%d dst=%d:\n got %v\nwant %v", cfg, in, srcStep, dstStep, got, want)
		}
		plain := in
		if cfg.mode == Compat && r.IntN(2) == 0 {
			plain = []byte(strings.ReplaceAll(string(in), "\r\n", "\n"))
		}
		checkEncode(t, cfg.mode, plain, srcStep, dstStep)
	}
}

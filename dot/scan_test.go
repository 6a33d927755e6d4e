package dot

import (
	"bytes"
	"encoding/binary"
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
		for j := range k {
			// Mid-line, a few bytes next to those searched for (masks'
			// false positives are a 0x01 more than a match above one),
			// and bytes from 0x80 up (those searched for plus 0x80, and
			// UTF-8), which the ASCII masks must not see.
			const near = "./\x0b\x0c/.\x8d\x8a\xae\x8e\x8b\xc3\xa9\xff\x80"
			if j > 0 && r.IntN(16) == 0 {
				b = append(b, near[r.IntN(len(near))])
				continue
			}
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
		b := lineInput(r, r.IntN(4000), 1+r.IntN(40), 64+r.IntN(200), r.IntN(60))
		b = b[:r.IntN(len(b)+1)]
		n := cleanLines(b, maxLine)
		want := cleanPrefix(b, maxLine)
		if n > want {
			t.Fatalf("cleanLines(%q, %d) = %d; the clean prefix is %d", b, maxLine, n, want)
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

// TestCleanLinesMaxLine puts a line of maxLine-70 to maxLine+3 bytes at
// every offset in a block, after short lines and before more: cleanLines
// must never take it if it is too long, and (from maxLine 96) must take
// the lines before it.
func TestCleanLinesMaxLine(t *testing.T) {
	short := strings.Repeat("abcdef\r\n", 40)
	for _, maxLine := range []int{64, 65, 95, 96, 97, 100, 128, 998} {
		for k := max(maxLine-70, 0); k <= maxLine+3; k++ {
			for off := range 32 {
				b := []byte(strings.Repeat("y", off) + "\r\n" + short + strings.Repeat("x", k) + "\r\n" + short)
				n := cleanLines(b, maxLine)
				if want := cleanPrefix(b, maxLine); n > want {
					t.Fatalf("maxLine %d, line of %d at %d: took %d, the clean prefix is %d", maxLine, k, off, n, want)
				}
				// (Under 96, a block with no LF is already too many.)
				if least := (off + 2 + len(short)) &^ 31; maxLine >= 96 && n < cleanPrefix(b[:least], 0) {
					t.Fatalf("maxLine %d, line of %d at %d: took %d, short of the lines before it", maxLine, k, off, n)
				}
			}
		}
	}
}

// TestLineRuns decodes and encodes line-shaped input, where the generic
// kernels copy runs of clean lines in bulk, in random chunks and with
// random limits (MaxSize too: the bulk runs stop short of its quota),
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
		cfg := modelConfig{
			mode:    Mode(r.IntN(3)),
			bare:    BarePolicy(r.IntN(3)),
			maxSize: []int64{0, 0, 1, 100, 700, 1200, 1 << 20}[r.IntN(7)],
			maxLine: []int{0, 0, 10, 64, 65, 998, 1000}[r.IntN(7)],
		}
		if cfg.maxSize > 1 && cfg.maxSize < 1<<20 && r.IntN(2) == 0 {
			// The first call's dst ends near the quota.
			dstStep = int(cfg.maxSize) + r.IntN(21) - 10
		}
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

// TestLineRunsQuota puts MaxSize a few bytes either side of where the
// first call's dst ends, at a line end of input made of equal lines, the
// one place where whole lines could pass the quota.
func TestLineRunsQuota(t *testing.T) {
	in := []byte(strings.Repeat("abcdefgh\r\n", 60) + ".\r\n")
	for _, mode := range []Mode{Compat, Strict, Raw} {
		for room := 9; room <= 200; room++ {
			for _, quota := range []int{room - 2, room - 1, room, room + 1, room + 2} {
				cfg := modelConfig{mode: mode, maxSize: int64(quota)}
				want := modelDecode(cfg, in)
				if got := decodeChunkedCfg(cfg, in, len(in), room); !got.equal(want) {
					t.Fatalf("%+v dst=%d:\n got %v\nwant %v", cfg, room, got, want)
				}
			}
		}
	}
}

// FuzzCleanLines holds cleanLines to cleanPrefix on any bytes, as
// TestCleanLines does on line-shaped ones.
func FuzzCleanLines(f *testing.F) {
	f.Add([]byte("abc\r\n.de\r\n\x8d\x8a\r\n"), uint16(0))
	f.Add([]byte(strings.Repeat("w\xc3\xa9\r\n", 20)+"\n."), uint16(998))
	f.Fuzz(func(t *testing.T, b []byte, maxLine uint16) {
		n := cleanLines(b, int(maxLine))
		want := cleanPrefix(b, int(maxLine))
		if n > want {
			t.Fatalf("cleanLines(%q, %d) = %d; the clean prefix is %d", b, maxLine, n, want)
		}
		if least := cleanPrefix(b[:want&^31], 0); maxLine == 0 && n < least {
			t.Fatalf("cleanLines(%q, 0) = %d, short of %d", b, n, least)
		}
	})
}

// TestWordChecks holds ascii and check to the rule on every word that
// matters: a byte x[j] with the byte before it p[j] breaks it if it is an
// LF and p[j] no CR, if p[j] is a CR and it no LF, or if it is a dot and
// p[j] an LF. Both may stop where the rule does not (bad set on a clean
// word), but never pass a word that breaks it, and on a word they pass,
// l flags an LF exactly when there is one. The masks tell bytes apart
// only by their xor with LF, CR and dot being 0, 1 or more (check), so
// LF, CR, dot, each plus 1 and one other byte stand for all 256 of them,
// and nine bytes (p[0] and x) for every word; ascii is held to this for
// bytes under 0x80, its domain.
func TestWordChecks(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("40 million words, twice")
	}
	for _, c := range []struct {
		name  string
		f     func(x, p uint64) (uint64, uint64)
		alpha string
	}{
		{"ascii", ascii, "\n\x0b\x0c\r./a"},
		{"check", check, "\n\x0b\x0c\r./\xa9"},
	} {
		n := len(c.alpha)
		total := 1
		for range 9 {
			total *= n
		}
		var q [9]byte // p[0], then x; p is q[:8]
		for idx := range total {
			v := idx
			for k := range q {
				q[k] = c.alpha[v%n]
				v /= n
			}
			breaks, hasLF := false, false
			for j := range 8 {
				x, p := q[j+1], q[j]
				breaks = breaks || (x == '\n') != (p == '\r') || x == '.' && p == '\n'
				hasLF = hasLF || x == '\n'
			}
			bad, l := c.f(binary.LittleEndian.Uint64(q[1:]), binary.LittleEndian.Uint64(q[:8]))
			if bad&hi8 != 0 {
				continue
			}
			if breaks {
				t.Fatalf("%s passes %q (the byte before, then the word), which breaks the rule", c.name, q)
			}
			if (l&hi8 != 0) != hasLF {
				t.Fatalf("%s: %q has an LF: %v, l says %v", c.name, q, hasLF, l&hi8 != 0)
			}
		}
	}
}

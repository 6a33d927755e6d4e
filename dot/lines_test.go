package dot

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	stdtp "net/textproto"
	"slices"
	"strings"
	"testing"
)

// lfOffsetsWant is lfOffsets' rule a byte at a time: the offsets of b's
// LFs.
func lfOffsetsWant(b []byte) []uint16 {
	var want []uint16
	for k, c := range b {
		if c == '\n' {
			want = append(want, uint16(k))
		}
	}
	return want
}

// TestLFOffsets holds lfOffsets to lfOffsetsWant on chunks of every size
// it takes, full of LFs, without any, and with VTs and bytes that differ
// from LF in one bit, ASCII only and not.
func TestLFOffsets(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const alphabet = "\n\n\v\v\x0a\x8a\x0b\x8b\x0e\x02\x00\x7f\xffab"
	for iter := range 3000 {
		size := 64 * (1 + r.IntN(lfChunk/64))
		b := make([]byte, size)
		switch iter % 4 {
		case 0: // all LFs: the most offsets a chunk can have
			for k := range b {
				b[k] = '\n'
			}
		case 1: // none
			for k := range b {
				b[k] = 'a' + byte(r.IntN(26))
			}
		case 2: // ASCII only, as lfOffsets' shorter test takes, but
			// in some words a byte from 0x80 up before an LF
			for k := range b {
				b[k] = alphabet[r.IntN(len(alphabet))] & 0x7f
			}
			for range r.IntN(3) {
				k := r.IntN(len(b) - 1)
				b[k], b[k+1] = 0x80|byte(r.IntN(128)), '\n'
			}
		default:
			for k := range b {
				b[k] = alphabet[r.IntN(len(alphabet))]
			}
		}
		var at lfList
		n := lfOffsets(&at, b)
		if want := lfOffsetsWant(b); !slices.Equal(at[:n], want) {
			t.Fatalf("lfOffsets(%q) = %v, want %v", b, at[:n], want)
		}
	}
}

// compatOddLines returns about n bytes of mail-like lines of 0 to 2*avg
// bytes, with what lfLines must leave to lineByLine or get right
// itself mixed in: leading dots (stuffed, and end markers), empty lines,
// bare LFs (also at a line start), bare CRs, CRs before a CRLF, VTs after
// an LF, bytes from 0x80 up, and lines around move80's 80 bytes.
func compatOddLines(r *rand.Rand, n, avg int) []byte {
	var b []byte
	odd := []string{".", "..", "\r\n", "\n", "ab\nc", "ab\rc", "\r", "\v", "\v\v", "\xc3\xa9", ".\r\n", ".\n", "\r\r", ".\r", ".\r\r"}
	for len(b) < n {
		k := r.IntN(2*avg + 1)
		if r.IntN(8) == 0 {
			k = 76 + r.IntN(8)
		}
		if r.IntN(6) == 0 {
			b = append(b, odd[r.IntN(len(odd))]...)
		}
		for range k {
			b = append(b, byte('a'+r.IntN(26)))
		}
		if r.IntN(20) == 0 {
			b = append(b, '\n')
		} else {
			b = append(b, '\r', '\n')
		}
	}
	return b
}

// TestLFLines holds decodeLines (lfLines in Compat and Strict mode, rawRun
// and cleanLines in Raw) to lineByLine, which takes a line at a time, in
// every mode: the same output, and the same place to stop, from the start
// of src and from the middle of it, with dst of every kind of size,
// MaxLine and the guess carried over from a call before.
func TestLFLines(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for iter := range 4000 {
		avg := []int{4, 20, 40, 60, 200}[iter%5]
		src := compatOddLines(r, r.IntN(6000), avg)
		if iter%3 == 0 {
			src = lineInput(r, r.IntN(6000), avg, 300, 30)
		}
		dstLen := len(src) + 100
		if iter%2 == 1 {
			dstLen = r.IntN(len(src) + 1)
		}
		maxLine := []int{0, 0, 0, 10, 79, 80, 998}[r.IntN(7)]
		i := 0
		if r.IntN(3) == 0 { // from a line start in the middle
			p := r.IntN(len(src) + 1)
			if lf := bytes.IndexByte(src[p:], '\n'); lf >= 0 {
				i = p + lf + 1
			}
		}
		span := []int{0, 0, 78, -128, 3}[r.IntN(5)]
		mode := []Mode{Compat, Strict, Raw}[iter/5%3]
		got, want := make([]byte, dstLen), make([]byte, dstLen)
		o1, i1 := decodeLines(mode, maxLine, &span, got, src, 0, i)
		o2, i2, _ := lineByLine(mode, maxLine, 0, want, src, 0, i)
		if o1 != o2 || i1 != i2 || !bytes.Equal(got[:o1], want[:o2]) {
			t.Fatalf("decodeLines(%v, maxLine %d, dst %d, src %q from %d) = %d, %d %q; lineByLine: %d, %d %q",
				mode, maxLine, dstLen, src, i, o1, i1, got[:o1], o2, i2, want[:o2])
		}
	}
}

// FuzzLFLines is TestLFLines on any bytes.
func FuzzLFLines(f *testing.F) {
	f.Add([]byte(strings.Repeat("abc\r\n.de\r\n\n\v\r\n", 30)), uint16(0), uint16(0))
	f.Add([]byte(strings.Repeat("w\xc3\xa9 x\r\n", 100)+".\r\n"), uint16(998), uint16(300))
	f.Fuzz(func(t *testing.T, src []byte, maxLine, dstLen uint16) {
		for _, mode := range []Mode{Compat, Strict, Raw} {
			span := 0
			got, want := make([]byte, dstLen), make([]byte, dstLen)
			o1, i1 := decodeLines(mode, int(maxLine), &span, got, src, 0, 0)
			o2, i2, _ := lineByLine(mode, int(maxLine), 0, want, src, 0, 0)
			if o1 != o2 || i1 != i2 || !bytes.Equal(got[:o1], want[:o2]) {
				t.Fatalf("decodeLines(%v, maxLine %d, dst %d, %q) = %d, %d %q; lineByLine: %d, %d %q",
					mode, maxLine, dstLen, src, o1, i1, got[:o1], o2, i2, want[:o2])
			}
		}
	})
}

// TestEncodeRun holds encodeRun to net/textproto's DotWriter: what it
// writes to dst, then the bytes it leaves pending, are the encoding of
// the lines it took; in Strict and Raw mode those hold no bare CR or LF;
// and it stops only at a line a Compat encoder changes otherwise than by
// a dot, one that does not fit in dst, one past its last whole 64-byte
// block, or (Strict and Raw) before a bare CR or LF.
func TestEncodeRun(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for iter := range 3000 {
		src := compatOddLines(r, r.IntN(5000), []int{4, 20, 40, 200}[iter%4])
		dstLen := len(src) + 100
		if iter%2 == 1 {
			dstLen = r.IntN(len(src) + 1)
		}
		checkEncodeRun(t, []Mode{Compat, Strict, Raw}[iter/4%3], src, dstLen)
	}
	// Every room, on mail with many stuffed dots.
	for iter := range 30 {
		var src []byte
		for len(src) < 300 {
			src = append(src, ".abcdefghijklmnopqrstuvwxyz"[:1+r.IntN(20)]...)
			src = append(src, '\r', '\n')
		}
		for dstLen := range len(src) + 2 {
			checkEncodeRun(t, []Mode{Compat, Strict, Raw}[iter%3], src, dstLen)
		}
	}
}

func checkEncodeRun(t *testing.T, mode Mode, src []byte, dstLen int) {
	t.Helper()
	dst := make([]byte, dstLen)
	o, v, i := encodeRun(mode, dst, src, 0, 0, 0)
	got := append(append([]byte(nil), dst[:o]...), src[v:i]...)
	var want bytes.Buffer
	bw := bufio.NewWriter(&want)
	dw := stdtp.NewWriter(bw).DotWriter()
	dw.Write(src[:i])
	dw.Close()
	bw.Flush()
	if i == 0 {
		got = nil
	} else {
		got = append(got, ".\r\n"...)
	}
	if i > 0 && !bytes.Equal(got, want.Bytes()) || o+i-v > dstLen {
		t.Fatalf("encodeRun(%v, dst %d, %q) took %d: %q; net/textproto: %q", mode, dstLen, src, i, got, want.Bytes())
	}
	bare := func(b []byte) bool { // a CR not before an LF, or an LF after no CR
		crlf := bytes.Count(b, []byte("\r\n"))
		return bytes.Count(b, []byte{'\r'}) != crlf || bytes.Count(b, []byte{'\n'}) != crlf
	}
	if mode != Compat && bare(src[:i]) {
		t.Fatalf("encodeRun(%v, dst %d, %q) took %d, a bare CR or LF among them", mode, dstLen, src, i)
	}
	// Why it stopped.
	end := min(len(src), dstLen)
	end -= end % 64 // blocks from the start
	lf := bytes.IndexByte(src[i:], '\n')
	// In Strict and Raw mode a chunk with a bare CR or LF is not taken:
	// the line at i has its LF in that chunk (an LF before it would have
	// been in the chunk before), and the chunk ends at most lfChunk
	// bytes on.
	if lf < 0 || i+lf >= end || mode != Compat && bare(src[i:min(end, i+lf+lfChunk)]) {
		return // past the blocks, or stopped by a bare CR or LF in its chunk
	}
	line := src[i : i+lf+1]
	plain := lf >= 1 && line[lf-1] == '\r' && (lf < 2 || line[lf-2] != '\r')
	fits := o+(i-v)+len(line)+int(flag(line[0] == '.')) <= dstLen
	if plain && fits {
		t.Fatalf("encodeRun(%v, dst %d, %q) stopped at %d, before %q", mode, dstLen, src, i, line)
	}
}

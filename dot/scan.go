package dot

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Line scanning for the generic kernels: line ends are found with
// bytes.IndexByte, which is vectorised; an inline word-at-a-time search of
// a line's first bytes made mail's lines 12-18% slower on Zen 5.

const (
	lo8 = 0x0101010101010101
	lo7 = 0x7f7f7f7f7f7f7f7f
	hi8 = 0x8080808080808080
	cr8 = '\r' * lo8
	lf8 = '\n' * lo8
)

// eqBytes returns x with bit 7 of each byte set where that byte equals
// c8's (c8 holds one byte value in all eight), and every other bit clear.
// Unlike masks, it has no false positives (no borrows cross bytes).
func eqBytes(x, c8 uint64) uint64 {
	y := x ^ c8
	return ^((y&lo7 + lo7) | y | lo7)
}

// indexLF returns the index of the first '\n' in b, or -1.
func indexLF(b []byte) int { return bytes.IndexByte(b, '\n') }

// indexCRLF returns the index of the first '\r' or '\n' in b, or len(b).
func indexCRLF(b []byte) int {
	n := bytes.IndexByte(b, '\n')
	if n < 0 {
		n = len(b)
	}
	if r := bytes.IndexByte(b[:n], '\r'); r >= 0 {
		return r
	}
	return n
}

// lastIndexLF returns the index of the last '\n' in b, or -1. It is
// searched a word at a time from the end: bytes has no vectorised
// LastIndexByte, and the line-length check looks back only a line's
// length or so.
func lastIndexLF(b []byte) int {
	i := len(b)
	for ; i >= 8; i -= 8 {
		if y := eqBytes(binary.LittleEndian.Uint64(b[i-8:]), lf8); y != 0 {
			return i - 8 + 7 - bits.LeadingZeros64(y)>>3
		}
	}
	for i > 0 {
		i--
		if b[i] == '\n' {
			return i
		}
	}
	return -1
}

// cleanLines scans b, which starts a line, 32 bytes at a time, for lines
// that every mode and kernel passes through unchanged: each ends in CRLF,
// holds no other CR or LF and does not start with a dot. It returns the
// length of the prefix of b made of whole such lines, up to the 32 bytes
// where it found a problem. With maxLine > 0 it also stops at a run of
// more than about maxLine-64 bytes without an LF, so that no line it takes
// is longer than maxLine (below 64, it takes none).
//
// Each 8-byte word x is checked against p, the same bytes one earlier:
// an LF in x must sit where p has a CR, and a CR in p where x has an LF
// (so every CR precedes an LF and every LF follows a CR), and no dot in x
// where p has an LF. No branch depends on where lines end, so lines of
// random length cost no mispredictions. The masks come from masks, whose
// false positives lie only right above a true match: an LF or CR one
// finds is then one that breaks the pairing, and a dot one finds never
// sits at a line start, so every mistake it makes is a stop. A block of
// ASCII (its bytes and the one before it), as most mail is, is checked
// with cheaper masks (ascii); others again with masks (exactBlock).
func cleanLines(b []byte, maxLine int) int {
	limit := len(b) // 32-byte blocks without an LF that make a run too long
	if maxLine > 0 {
		limit = maxLine/32 - 2
	}
	prev := uint64('\n') // the byte before the block (b starts a line)
	blocks := 0          // blocks since the last one with an LF
	rest := b
	for len(rest) >= 32 {
		// Two blocks at a time while both are ASCII and clean and do not
		// reach the limit; the loop below takes the block that is not.
		for len(rest) >= 64 {
			w := (*[64]byte)(rest)
			x0 := binary.LittleEndian.Uint64(w[:8])
			x1 := binary.LittleEndian.Uint64(w[8:16])
			x2 := binary.LittleEndian.Uint64(w[16:24])
			x3 := binary.LittleEndian.Uint64(w[24:32])
			x4 := binary.LittleEndian.Uint64(w[32:40])
			x5 := binary.LittleEndian.Uint64(w[40:48])
			x6 := binary.LittleEndian.Uint64(w[48:56])
			x7 := binary.LittleEndian.Uint64(w[56:])
			high := prev | x0 | x1 | x2 | x3 | x4 | x5 | x6 | x7
			b0, l0 := ascii(x0, x0<<8|prev)
			b1, l1 := ascii(x1, binary.LittleEndian.Uint64(w[7:15]))
			b2, l2 := ascii(x2, binary.LittleEndian.Uint64(w[15:23]))
			b3, l3 := ascii(x3, binary.LittleEndian.Uint64(w[23:31]))
			b4, l4 := ascii(x4, binary.LittleEndian.Uint64(w[31:39]))
			b5, l5 := ascii(x5, binary.LittleEndian.Uint64(w[39:47]))
			b6, l6 := ascii(x6, binary.LittleEndian.Uint64(w[47:55]))
			b7, l7 := ascii(x7, binary.LittleEndian.Uint64(w[55:63]))
			if (b0|b1|b2|b3|b4|b5|b6|b7|high)&hi8 != 0 {
				break
			}
			n := blocks + 1
			if (l0|l1|l2|l3)&hi8 != 0 {
				n = 0
			}
			if n > limit {
				break
			}
			n++
			if (l4|l5|l6|l7)&hi8 != 0 {
				n = 0
			}
			if n > limit {
				break
			}
			blocks, prev = n, uint64(w[63])
			rest = rest[64:]
		}
		if len(rest) < 32 {
			break
		}
		w := (*[32]byte)(rest)
		// The block's words and their bytes one earlier, checked with
		// ascii's masks, and the bytes from 0x80 up they do not handle.
		x0 := binary.LittleEndian.Uint64(w[:8])
		x1 := binary.LittleEndian.Uint64(w[8:16])
		x2 := binary.LittleEndian.Uint64(w[16:24])
		x3 := binary.LittleEndian.Uint64(w[24:])
		high := prev | x0 | x1 | x2 | x3
		b0, l0 := ascii(x0, x0<<8|prev)
		b1, l1 := ascii(x1, binary.LittleEndian.Uint64(w[7:15]))
		b2, l2 := ascii(x2, binary.LittleEndian.Uint64(w[15:23]))
		b3, l3 := ascii(x3, binary.LittleEndian.Uint64(w[23:31]))
		bad, lf := b0|b1|b2|b3|high, l0|l1|l2|l3
		if bad&hi8 != 0 {
			// A problem, or a byte from 0x80 up: the exact check.
			if bad, lf = exactBlock(w, prev); bad&hi8 != 0 {
				break
			}
		}
		prev = uint64(w[31])
		blocks++
		if lf&hi8 != 0 {
			blocks = 0
		}
		if blocks > limit {
			break
		}
		rest = rest[32:]
	}
	return lastIndexLF(b[:len(b)-len(rest)]) + 1
}

// exactBlock checks the 32 bytes of w, after a byte prev: bad has bit 7
// set where a line breaks cleanLines' rule, lf where an LF is. Both have
// noise in the other bits. It is cleanLines' check for a block with a byte
// from 0x80 up, and out of line to leave the registers to the other.
//
//go:noinline
func exactBlock(w *[32]byte, prev uint64) (bad, lf uint64) {
	x0 := binary.LittleEndian.Uint64(w[:8])
	x1 := binary.LittleEndian.Uint64(w[8:16])
	x2 := binary.LittleEndian.Uint64(w[16:24])
	x3 := binary.LittleEndian.Uint64(w[24:])
	b0, l0 := check(x0, x0<<8|prev)
	b1, l1 := check(x1, x1<<8|x0>>56)
	b2, l2 := check(x2, x2<<8|x1>>56)
	b3, l3 := check(x3, x3<<8|x2>>56)
	return b0 | b1 | b2 | b3, l0 | l1 | l2 | l3
}

// check checks the 8 bytes of x, whose bytes one earlier are p. Every LF
// must follow a CR, every CR precede an LF, and no dot follow an LF;
// where one does not, bad has bit 7 of that byte set. l has bit 7 of each
// LF's byte set. Both have noise in the other bits.
func check(x, p uint64) (bad, l uint64) {
	l, _, d := masks(x)
	lp, cp, _ := masks(p)
	return cp ^ l | d&lp, l
}

// ascii is check for x and p without a byte from 0x80 up. Its masks are
// masks' without the &^ y: for a byte under 0x80, y - 1 sets bit 7 only
// where the byte is 0 or borrows, as masks' do. A dot after an LF is one
// mask: where x^dot8 | p^lf8 is 0, and a borrow from there meets a byte
// of p that is a dot, so it finds no more.
func ascii(x, p uint64) (bad, l uint64) {
	const dot8 = '.' * lo8
	l, cp := (x^lf8)-lo8, (p^cr8)-lo8
	ld := ((x ^ dot8) | (p ^ lf8)) - lo8
	return cp ^ l | ld, l
}

// masks returns the LFs, CRs and dots in x as (y - lo8) &^ y of x xor
// each: bit 7 of a byte is set where the byte matches, and where the byte
// below it matches and it is one more than a match (a borrow). The low
// seven bits of each byte are noise until the result is masked with hi8,
// and shifts by whole bytes keep them apart.
func masks(x uint64) (lf, cr, dot uint64) {
	const dot8 = '.' * lo8
	lf, cr, dot = x^lf8, x^cr8, x^dot8
	return (lf - lo8) &^ lf, (cr - lo8) &^ cr, (dot - lo8) &^ dot
}

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
// It has no branch that depends on where lines end, so lines of random
// length cost no mispredictions. The masks come from masks, whose false
// positives lie only right above a true match: an LF or CR one finds is
// then one that breaks the CRLF pairing, and a dot one finds never sits
// at a line start, so every mistake it makes is a stop.
func cleanLines(b []byte, maxLine int) int {
	limit := len(b) // 32-byte blocks without an LF that make a run too long
	if maxLine > 0 {
		limit = maxLine/32 - 2
	}
	var cr, lf uint64 = 0, 0x80 // the byte before: a CR, an LF (b starts a line)
	blocks := 0                 // blocks since the last one with an LF
	i := 0
	for ; i+32 <= len(b); i += 32 {
		w := (*[32]byte)(b[i : i+32])
		var b0, b1, b2, b3, l0, l1, l2, l3 uint64
		b0, l0, cr, lf = pairs(binary.LittleEndian.Uint64(w[:8]), cr, lf)
		b1, l1, cr, lf = pairs(binary.LittleEndian.Uint64(w[8:16]), cr, lf)
		b2, l2, cr, lf = pairs(binary.LittleEndian.Uint64(w[16:24]), cr, lf)
		b3, l3, cr, lf = pairs(binary.LittleEndian.Uint64(w[24:]), cr, lf)
		bad, any := b0|b1|b2|b3, l0|l1|l2|l3
		if bad&hi8 != 0 {
			break
		}
		blocks++
		if any&hi8 != 0 {
			blocks = 0
		}
		if blocks > limit {
			break
		}
	}
	return lastIndexLF(b[:i]) + 1
}

// pairs checks the 8 bytes of x, after a byte that was a CR or an LF as
// cr and lf say (in bit 7), and returns them for the byte after x (ncr,
// nlf). Every LF must follow a CR, every CR precede an LF, and no dot
// follow an LF; where one does not, bad has bit 7 of that byte set. l has
// bit 7 of each LF's byte set. Both have noise in the other bits.
func pairs(x, cr, lf uint64) (bad, l, ncr, nlf uint64) {
	l, c, d := masks(x)
	bad = (c<<8 | cr) ^ l | d&(l<<8|lf)
	return bad, l, c >> 56, l >> 56
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

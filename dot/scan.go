package dot

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Line scanning for the generic kernels. Short lines dominate mail, so the
// first bytes are searched a word at a time (SWAR) with no call; longer lines
// go to bytes.IndexByte, which is vectorised.

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
	cr8 = '\r' * lo8
	lf8 = '\n' * lo8
)

// swarWords is how many 8-byte words are searched inline before handing
// over to bytes.IndexByte.
const swarWords = 1

// zeroByte returns a word whose lowest set bit is the high bit of the first
// zero byte of x (borrows may set bits above it, never below).
func zeroByte(x uint64) uint64 { return (x - lo8) &^ x & hi8 }

// indexLF returns the index of the first '\n' in b, or -1.
func indexLF(b []byte) int {
	i := 0
	for w := 0; w < swarWords && i+8 <= len(b); w++ {
		if m := zeroByte(binary.LittleEndian.Uint64(b[i:]) ^ lf8); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
		return i + j
	}
	return -1
}

// indexCRLF returns the index of the first '\r' or '\n' in b, or len(b).
func indexCRLF(b []byte) int {
	i := 0
	for w := 0; w < swarWords && i+8 <= len(b); w++ {
		x := binary.LittleEndian.Uint64(b[i:])
		if m := zeroByte(x^lf8) | zeroByte(x^cr8); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	n := bytes.IndexByte(b[i:], '\n')
	if n < 0 {
		n = len(b)
	} else {
		n += i
	}
	if r := bytes.IndexByte(b[i:n], '\r'); r >= 0 {
		return i + r
	}
	return n
}

// lastIndexLF returns the index of the last '\n' in b, or -1. It is
// searched a word at a time from the end: bytes has no vectorised
// LastIndexByte, and the line-length check looks back only a line's
// length or so.
func lastIndexLF(b []byte) int {
	const lo7 = 0x7f7f7f7f7f7f7f7f
	i := len(b)
	for ; i >= 8; i -= 8 {
		x := binary.LittleEndian.Uint64(b[i-8:]) ^ lf8
		// The high bit of each byte of y is set exactly where x has a zero
		// byte (no borrows, unlike zeroByte).
		if y := ^((x&lo7 + lo7) | x | lo7); y != 0 {
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

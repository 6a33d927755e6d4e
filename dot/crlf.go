package dot

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// A LineState follows CRLF text that is not dot-encoded, such as the data
// of BDAT chunks (RFC 3030), from one piece to the next, for the line rules
// of Strict mode: see [LineState.Clean]. The zero value is the start of the
// text. A negative Line, which no Clean call leaves, counts as 0: Clean
// sets it to 0 first.
type LineState struct {
	Line int  // bytes of the current line so far, a CR at the end not counted
	CR   bool // the last byte so far is a CR, whose LF is yet to come
}

// Clean returns the length of the longest prefix of text that goes on
// with CRLF line endings only (no LF but right after a CR, no CR but right
// before an LF; a CR at the end of text is not yet bare) and no line longer
// than maxLine bytes, the CRLF not counted (0: no limit), and advances s
// over it. Where it stops short of len(text), text[n] (or, for n == 0 and a
// CR pending, the CR before text) breaks the rules. It allocates nothing,
// and runs the SIMD kernels where the CPU has them.
func (s *LineState) Clean(text []byte, maxLine int) int {
	maxLine = max(maxLine, 0)
	// The SIMD kernels take a block only while the line so far is at
	// most maxLine less the block's size, so that no line in it can
	// break maxLine: a negative Line would let the block's later lines
	// through.
	s.Line = max(s.Line, 0)
	i := 0
	for {
		// The blocks count a line's bytes in an int, which a Line set
		// near its top would overflow (taking bytes past maxLine, and
		// leaving a negative Line): such a line, or one past maxLine,
		// where the blocks could take nothing, goes byte by byte.
		if s.Line <= math.MaxInt/2 && (maxLine == 0 || s.Line <= maxLine) {
			i += s.cleanBlocks(text[i:], maxLine)
		}
		// Byte by byte to the end of the line, where the blocks stopped.
		for i < len(text) {
			c := text[i]
			if s.CR {
				if c != '\n' {
					return i
				}
				s.CR, s.Line = false, 0
				i++
				break
			}
			switch c {
			case '\n':
				return i
			case '\r':
				s.CR = true
			default:
				if maxLine > 0 && s.Line >= maxLine {
					return i
				}
				if s.Line < math.MaxInt { // (it only counts up to there)
					s.Line++
				}
			}
			i++
		}
		if i == len(text) {
			return i
		}
	}
}

// cleanWords is the generic kernel of Clean: it advances s over whole
// 8-byte words of b while they are clean and hold no byte past maxLine
// (0: none), and returns how many bytes it took, a multiple of 8.
func (s *LineState) cleanWords(b []byte, maxLine int) int {
	limit := maxLine
	if limit == 0 {
		limit = int(^uint(0) >> 1)
	} else if limit < 8 {
		return 0 // several lines per word: the byte loop counts them
	}
	var carry uint64 // 0x80: the byte before the word is a CR
	if s.CR {
		carry = 0x80
	}
	start := -s.Line - int(carry>>7) // where the current line starts
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		cr, lf := eqBytes(x, cr8), eqBytes(x, lf8)
		if lf != cr<<8|carry {
			break // a bare CR or LF
		}
		next := cr >> 56 // 0x80 if the word ends in a CR
		if lf == 0 {
			if i+8-start-int(next>>7) > limit {
				break
			}
		} else {
			if first := i + bits.TrailingZeros64(lf)>>3; first-start-1 > limit {
				break
			}
			// The other lines in the word are shorter than 8 bytes.
			start = i + 7 - bits.LeadingZeros64(lf)>>3 + 1
		}
		carry = next
	}
	s.CR = carry != 0
	s.Line = i - start - int(carry>>7)
	return i
}

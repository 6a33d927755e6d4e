//go:build !purego

package dot

import "math"

// cleanBlocks advances s over a prefix of b that is clean (see Clean),
// with the SIMD kernel where there is one: whole blocks while they are
// CRLF text and cannot break maxLine. It returns how many bytes it took.
func (s *LineState) cleanBlocks(b []byte, maxLine int) int {
	size := 0
	switch activeKernel() {
	case kAVX512:
		size = 64
	case kAVX2:
		size = 32
	default:
		return s.cleanWords(b, maxLine)
	}
	if len(b) < size || !useLZCNT || s.CR && s.Line == math.MaxInt {
		// (The kernels count the pending CR in the line: the count
		// would overflow.)
		return s.cleanWords(b, maxLine)
	}
	limFast := math.MaxInt
	if maxLine > 0 {
		limFast = maxLine - size
	}
	var cr uint64
	if s.CR {
		cr = 1
	}
	r := s.Line + int(cr)
	var n int
	if size == 64 {
		n = crlfAVX512(b, limFast, &r, &cr)
	} else {
		n = crlfAVX2(b, limFast, &r, &cr)
	}
	s.CR = cr != 0
	s.Line = r - int(cr)
	return n + s.cleanWords(b[n:], maxLine)
}

package dot

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// Whole-line fast paths of the generic kernels. At the start of a line,
// with no error, room in dst and no MaxSize quota within reach, they
// decode or encode complete ordinary lines in one step each: one scan for
// the line end, one copy. In Raw decoding, which needs both CR and LF
// found, runs of lines that pass through unchanged (CRLF endings, no
// stuffed dot) are found 32 bytes at a time by cleanLines instead. The
// Compat and Strict decoders, and the encoder in every mode, find the
// LFs of a chunk first (lfLines, encodeRun). They return at the first
// line they do not fully understand (an open line at the end of src, a
// possible end marker, a bare CR or LF, a Compat quirk, not enough room),
// always at the start of that line, and leave it to the one-byte state
// machine, so every subtle case has one implementation.

// decodeLines decodes complete lines from src[i:], which starts a line,
// into dst[o:]. It returns the new o and i; both stop at a line start. If
// maxLine is positive, it stops in front of a line longer than that.
// *span carries a guess at the shape of the lines to come from one call to
// the next (see lfLines, and Raw's loop below).
func decodeLines(mode Mode, maxLine int, span *int, dst, src []byte, o, i int) (int, int) {
	switch mode {
	case Strict, Compat:
		return lfLines(mode, maxLine, span, dst, src, o, i)
	}
	// Raw output is its input less the stuffed dots: runs of lines are
	// copied in bulk, found by their LFs (rawRun) where lines are not
	// short, else 32 bytes at a time without a dot (cleanLines), and the
	// line that ends a run goes on its own. Where rawRun found short lines
	// or a bare CR or LF, *span counts the runs that cleanLines takes
	// before it tries again.
	for i < len(src) {
		if *span > 0 {
			*span--
		} else {
			o2, i2, back := rawRun(maxLine, dst, src, o, i)
			if back {
				*span = 64
			}
			if i2 != i {
				o, i = o2, i2
				continue
			}
		}
		n := cleanLines(src[i:min(len(src), i+len(dst)-o)], maxLine)
		o, i = o+copy(dst[o:], src[i:i+n]), i+n
		lf := indexLF(src[i:min(len(src), i+len(dst)-o+2)]) // no longer line fits
		if lf < 0 {
			break
		}
		o2, i2, _ := lineByLine(Raw, maxLine, 0, dst, src[:i+lf+1], o, i)
		if i2 == i {
			break
		}
		o, i = o2, i2
	}
	return o, i
}

// lfLines is decodeLines in Compat and Strict mode. Where a line ends
// there is an LF, whose CR is dropped, so lines are moved one by one; but
// where their lengths vary their ends are not searched for line by line
// (the search's end is mispredicted): lfRun finds a chunk's LFs
// first, with no branch on where they are, and then moves its lines with
// no branch but the loop's. Where lines are all one length (base64) or
// long, the search a line costs less: lfRun says so in *span, and
// lineByLine takes lines while they stay so, in this call and the next.
// Lines neither takes (a leading dot that may make the end marker, a line
// that starts with an LF, a line too long, in Strict mode a line with a
// bare CR or LF, the last bytes of src or dst) go through lineByLine, one
// at a time.
func lfLines(mode Mode, maxLine int, span *int, dst, src []byte, o, i int) (int, int) {
	for i < len(src) {
		o2, i2 := o, i
		if *span != 0 {
			var open bool
			if o2, i2, open = lineByLine(mode, maxLine, *span, dst, src, o2, i2); open {
				return o2, i2
			}
		}
		o3, i3, sp := lfRun(mode, maxLine, dst, src, o2, i2)
		if sp != 0 || i3 != i2 { // a chunk taken: its guess stands
			*span = sp
		}
		o2, i2 = o3, i3
		if i2 == i {
			lf := indexLF(src[i:min(len(src), i+len(dst)-o+2)]) // no longer line fits
			if lf < 0 {
				break
			}
			if o2, i2, _ = lineByLine(mode, maxLine, 0, dst, src[:i+lf+1], o, i); i2 == i {
				break
			}
		}
		o, i = o2, i2
	}
	return o, i
}

// lfChunk is the most bytes of src lfRun takes at a time.
const lfChunk = 1024

// An lfList holds the offsets of the LFs in a chunk, and room for
// lfOffsets' writes past the last.
type lfList [lfChunk + 2]uint16

// lfRun decodes whole lines from src[i:], which starts a line, for
// lfLines, a chunk of src at a time: 64-byte blocks that leave the
// 80 bytes move80 reads after them in src, and that dst has room for with
// 80 bytes to spare (a line never makes more output than input). It
// returns at a line start, with a span for lineByLine where the lines of
// its last chunk were long or all of one length, else 0.
func lfRun(mode Mode, maxLine int, dst, src []byte, o, i int) (_, _, span int) {
	base := i // the chunk starts at base
	if min(len(src)-80-base, len(dst)-o-80) < 64 {
		return o, i, 0
	}
	// A line it would give back at once is not worth a chunk's search.
	if c, c1 := src[i], src[i+1]; c == '\n' || c == '.' && (c1 == '\r' || c1 == '\n') || c == '\r' && c1 != '\n' {
		return o, i, 0
	}
	lim := 79 // the longest line moveLines takes: a move80 holds it
	if maxLine > 0 {
		lim = min(lim, maxLine)
	}
	var at lfList
	// Chunks grow from 128 bytes, so that what a line it gives back
	// wastes of its search is at most about what came before it.
	for chunk := 128; ; chunk = min(2*chunk, lfChunk) {
		size := min(chunk, len(src)-80-base, len(dst)-o-80-(base-i)) &^ 63
		if size <= 0 {
			return o, i, 0
		}
		n := lfOffsets(&at, src[base:base+size])
		// A Strict line holds no CR but the one before its LF: where the
		// chunk's lines hold more or fewer CRs than lines, none of them
		// is taken here, and lineByLine finds the line that breaks the
		// rule (where they hold as many, see below).
		if mode == Strict && n > 0 && bytes.Count(src[i:base+int(at[n-1])], []byte{'\r'}) != n {
			return o, i, 0
		}
		o0, i0 := o, i
		taken := n // the lines taken, if fewer than n
		for k := 0; k < n; k++ {
			var t int
			o, i, t = moveLines(mode == Strict, lim, dst, src, o, i, base, at[k:n])
			if k += t; k == n {
				break
			}
			// A line moveLines leaves is taken by lineByLine, unless
			// it stops there too.
			lf := base + int(at[k])
			i2 := i
			if o, i2, _ = lineByLine(mode, maxLine, 0, dst, src[:lf+1], o, i); i2 == i {
				taken = k
				break
			}
			i = i2
		}
		if taken < n {
			// Each line taken ended in CRLF, but as many CRs as lines
			// in the chunk is also a stray CR and a line not taken
			// with an LF after no CR: then they are given back.
			if mode == Strict && bytes.Count(src[i0:i], []byte{'\r'}) != taken {
				return o0, i0, 0
			}
			return o, i, 0
		}
		base += size
		// Where a search a line costs less, the caller searches: lines
		// of 128 bytes or more on average, or all of one length (evenly
		// spaced LFs, 8 or more).
		switch w := at[1] - at[0]; {
		case n*128 < size:
			return o, i, -128
		case n >= 8 && at[n-1]-at[n-2] == w && int(at[n-1]-at[0]) == (n-1)*int(w):
			return o, i, int(w)
		}
	}
}

// moveLines decodes the lines of src from i, which starts a line, whose
// LFs are at base+at[k] (in order, the first at or after i), to dst[o:],
// as lfRun does, while each has at most lim bytes before its line end
// (lim < 80) and is plain: it does not start with an LF, a CR that does
// not make an empty line or a dot that may make the end marker, and if
// strict, ends in CRLF. It returns the new o and i, and how many lines it
// took.
//
// Its loop moves lines with pointers, not slices: with bounds checked and
// slices resliced a line, Compat decoding of mail is 14% slower (Zen 5).
// So it checks once that what it may touch is in src and dst: the 80 bytes
// a move reads from each line start, up to the last LF, and the 80 bytes
// it writes from each line's output, which is never longer than its input.
func moveLines(strict bool, lim int, dst, src []byte, o, i, base int, at []uint16) (_, _, taken int) {
	if len(at) == 0 {
		return o, i, 0
	}
	if last := base + int(at[len(at)-1]); i < 0 || o < 0 || i > base+int(at[0]) || last+80 > len(src) || o+(last-i)+80 > len(dst) {
		panic("dot: moveLines: lines out of bounds")
	}
	s0 := unsafe.Pointer(unsafe.SliceData(src))
	d0 := unsafe.Pointer(unsafe.SliceData(dst))
	b := unsafe.Add(s0, base)
	s, d := unsafe.Add(s0, i), unsafe.Add(d0, o) // the line, its output
	taken = len(at)
	for k, a := range at {
		lf := unsafe.Add(b, a)
		n := uintptr(lf) - uintptr(s) // the line's length before its LF
		w := binary.LittleEndian.Uint16((*[2]byte)(s)[:])
		// t is the line less a stuffed dot; the test is lfRun's.
		t := s
		if c := uint8(w); flag(c <= '.')&flag(w != '\r'|'\n'<<8) != 0 {
			if c1 := uint8(w >> 8); c == '.' && c1 != '\r' && c1 != '\n' {
				t = unsafe.Add(s, 1) // the stuffed dot
			} else if c == '.' || c == '\r' || c == '\n' {
				taken = k
				break
			}
		}
		if uintptr(lf) <= uintptr(t) {
			// Not where at says a line ends: src changed under it (a
			// data race). Stopping here keeps every read and write in
			// bounds whatever the bytes.
			taken = k
			break
		}
		if *(*byte)(unsafe.Add(lf, -1)) == '\r' {
			n--
		} else if strict {
			taken = k
			break
		}
		if n > uintptr(lim) {
			taken = k
			break
		}
		// 80 bytes moved, as in lineByLine: the bytes after the line are
		// scratch.
		*(*[16]byte)(d) = *(*[16]byte)(t)
		*(*[16]byte)(unsafe.Add(d, 16)) = *(*[16]byte)(unsafe.Add(t, 16))
		*(*[16]byte)(unsafe.Add(d, 32)) = *(*[16]byte)(unsafe.Add(t, 32))
		*(*[16]byte)(unsafe.Add(d, 48)) = *(*[16]byte)(unsafe.Add(t, 48))
		*(*[16]byte)(unsafe.Add(d, 64)) = *(*[16]byte)(unsafe.Add(t, 64))
		d = unsafe.Add(d, n-(uintptr(t)-uintptr(s)))
		*(*byte)(d) = '\n'
		d = unsafe.Add(d, 1)
		s = unsafe.Add(lf, 1)
	}
	return int(uintptr(d) - uintptr(d0)), int(uintptr(s) - uintptr(s0)), taken
}

// rawRun is decodeLines' run in Raw mode: from src[i:], which starts a
// line, it copies whole lines that each end in an LF after a CR and hold
// no other CR, less their stuffed dots, finding their LFs a chunk at a
// time as lfRun does. It stops at a line start: before a line that may be
// the end marker or is longer than maxLine, at the first chunk whose lines
// break the rule or average under 16 bytes (cleanLines is cheaper there),
// or where src or dst's room ends; back says it stopped at such a chunk.
// A line never makes more output than input, so no line before end
// overflows dst.
func rawRun(maxLine int, dst, src []byte, o, i int) (_, _ int, back bool) {
	end := min(len(src), i+len(dst)-o)
	v := i // src[v:i] is decoded as it is, but not yet copied to dst
	var at lfList
	for base, chunk := i, 128; end-base >= 64; chunk = min(2*chunk, lfChunk) { // see lfRun
		size := min(chunk, end-base) &^ 63
		n := lfOffsets(&at, src[base:base+size])
		if back = n*16 > size || !crlfOnly(src, i, base, at[:n]); back {
			break
		}
		for _, a := range at[:n] {
			lf := base + int(a)
			if maxLine > 0 && lf-1-i > maxLine {
				return o + copy(dst[o:], src[v:i]), i, false
			}
			if src[i] == '.' {
				if src[i+1] == '\r' { // ".\r\n": no bare LF or CR here
					return o + copy(dst[o:], src[v:i]), i, false // the end marker
				}
				o += copy(dst[o:], src[v:i])
				v = i + 1 // the stuffed dot
			}
			i = lf + 1
		}
		base += size
	}
	return o + copy(dst[o:], src[v:i]), i, back
}

// encodeRun is encodeLines' run: from src[i:], which starts a line,
// with src[v:i] encoded as it is but not yet copied to dst[o:], it takes
// whole lines that are written as they are, or with a dot added in
// front: each ends in an LF after one CR (net/textproto adds a CR where
// there is none, and where there are two), and in Strict and Raw mode
// holds no other CR. It finds their LFs with lfOffsets, in 64-byte blocks
// that end where src ends or dst's room does, and copies what it has
// taken before each dot. It returns o, v and i as encodeLines keeps them,
// i at a line start.
func encodeRun(mode Mode, dst, src []byte, o, v, i int) (int, int, int) {
	end := min(len(src), i+len(dst)-o-(i-v)) // no line past dst's room
	if end-i < 64 {
		return o, v, i
	}
	var at lfList
	for base, chunk := i, 128; end-base >= 64; chunk = min(2*chunk, lfChunk) { // see lfRun
		size := min(chunk, end-base) &^ 63
		n := lfOffsets(&at, src[base:base+size])
		// In Strict and Raw mode a bare CR or LF is an error: where the
		// chunk has one, none of its lines is taken here, and
		// encodeLines takes them one by one to find it.
		if mode != Compat && !crlfOnly(src, i, base, at[:n]) {
			return o, v, i
		}
		for _, a := range at[:n] {
			lf := base + int(a)
			if lf == i || src[lf-1] != '\r' || lf-2 >= i && src[lf-2] == '\r' {
				return o, v, i
			}
			if src[i] == '.' {
				// The run so far and the dot go to dst, if the line
				// still fits after them.
				if len(dst)-o < i-v+1+lf+1-i {
					return o, v, i
				}
				o += copy(dst[o:], src[v:i])
				dst[o] = '.'
				o++
				v = i
			} else if len(dst)-o < lf+1-v {
				return o, v, i
			}
			i = lf + 1
		}
		base += size
	}
	return o, v, i
}

// crlfOnly reports whether the lines of src from i, a line start, to the
// LF at base+at[len(at)-1] each end in an LF after a CR and hold no other
// CR: then the CRs they hold are as many as their LFs.
func crlfOnly(src []byte, i, base int, at []uint16) bool {
	if len(at) == 0 {
		return true
	}
	for _, a := range at {
		if lf := base + int(a); lf == 0 || src[lf-1] != '\r' {
			return false
		}
	}
	return bytes.Count(src[i:base+int(at[len(at)-1])], []byte{'\r'}) == len(at)
}

// flag is 1 for true and 0 for false.
func flag(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// lfOffsets writes the offsets of the LFs in b, whose length is a
// multiple of 64 up to lfChunk, to at, in order, and returns how many
// there are. It finds them 8 bytes at a time, exactly (no borrow crosses
// a byte). Past the count, at holds noise.
func lfOffsets(at *lfList, b []byte) int {
	n := 0
	for k := range min(len(b), lfChunk) / 64 {
		off := 64 * k
		w := (*[64]byte)(b[off : off+64])
		x0, x1 := binary.LittleEndian.Uint64(w[:8]), binary.LittleEndian.Uint64(w[8:16])
		x2, x3 := binary.LittleEndian.Uint64(w[16:24]), binary.LittleEndian.Uint64(w[24:32])
		x4, x5 := binary.LittleEndian.Uint64(w[32:40]), binary.LittleEndian.Uint64(w[40:48])
		x6, x7 := binary.LittleEndian.Uint64(w[48:56]), binary.LittleEndian.Uint64(w[56:])
		var m uint64
		if (x0|x1|x2|x3|x4|x5|x6|x7)&hi8 == 0 {
			m = ^(asciiOther(x0) | asciiOther(x1)<<8 | asciiOther(x2)<<16 | asciiOther(x3)<<24 |
				asciiOther(x4)<<32 | asciiOther(x5)<<40 | asciiOther(x6)<<48 | asciiOther(x7)<<56)
		} else {
			m = ^(otherByte(x0) | otherByte(x1)<<8 | otherByte(x2)<<16 | otherByte(x3)<<24 |
				otherByte(x4)<<32 | otherByte(x5)<<40 | otherByte(x6)<<48 | otherByte(x7)<<56)
		}
		// Two offsets are written whether or not there are as many
		// (mail's 64 bytes mostly hold one or two LFs); more take a
		// loop.
		c := bits.OnesCount64(m)
		a := (*[2]uint16)(at[n : n+2])
		a[0] = uint16(off + bits.TrailingZeros64(m))
		m &= m - 1
		a[1] = uint16(off + bits.TrailingZeros64(m))
		for j := n + 2; j < n+c; j++ {
			m &= m - 1
			at[j] = uint16(off + bits.TrailingZeros64(m))
		}
		n += c
	}
	return n
}

// asciiOther is otherByte for x whose bytes are all under 0x80: y's
// bytes are too, so y + 0x7f has bit 7 of a byte set where y's is not 0,
// and no carry crosses a byte.
func asciiOther(x uint64) uint64 {
	return ((x ^ lf8) + 0x7f*lo8) & hi8 * 0x0002040810204081 >> 56
}

// otherByte returns a byte with bit k set where byte k of x is not an
// LF. Bit 7 of each byte of t is set where y's is or its low seven bits
// are not all 0 (y | hi8 has no byte under 0x80, so no borrow crosses
// bytes); it is moved to bits 56 to 63 by a multiply whose partial
// products never meet (byte k's by 49 - 7k places).
func otherByte(x uint64) uint64 {
	y := x ^ lf8
	t := (y | hi8) - lo8 | y
	return t & hi8 * 0x0002040810204081 >> 56
}

// lineByLine is decodeLines one line at a time. With span > 0 it stops at
// a line whose length (its ending included) is not span; with span < 0,
// at one shorter than -span. In Compat mode, open says it stopped where
// src holds no more whole line that can fit in dst.
func lineByLine(mode Mode, maxLine, span int, dst, src []byte, o, i int) (_, _ int, open bool) {
	// A line takes at most twice the bytes of src it writes to dst ("\r\n"
	// makes "\n"), so none that fits ends past twice the room in dst: the
	// searches stop there (a line may be most of src).
	if end := i + 2*(len(dst)-o) + 2; end < len(src) {
		src = src[:end]
	}
	lo, hi := 0, len(src) // the lengths of lines it takes
	if span > 0 {
		lo, hi = span, span
	} else if span < 0 {
		lo = -span
	}
	for i < len(src) {
		start := i
		switch src[i] {
		case '.':
			if i+1 >= len(src) || src[i+1] == '\r' || src[i+1] == '\n' {
				return o, i, false // maybe the end marker
			}
			start++ // the stuffed dot
		case '\r':
			if i+1 < len(src) && src[i+1] == '\n' { // an empty line
				if mode == Raw {
					if len(dst)-o < 2 {
						return o, i, false
					}
					dst[o] = '\r'
					o++
				} else if len(dst)-o < 1 {
					return o, i, false
				}
				dst[o] = '\n'
				o++
				i += 2
				continue
			}
			return o, i, false
		case '\n':
			return o, i, false
		}
		var end, next int // content is src[start:end]; the next line starts at next
		if mode == Compat {
			lf := indexLF(src[start:])
			if lf < 0 {
				return o, i, true
			}
			end, next = start+lf, start+lf+1
			if end > start && src[end-1] == '\r' {
				end--
			}
		} else {
			e := start + indexCRLF(src[start:])
			if e+1 >= len(src) || src[e] != '\r' || src[e+1] != '\n' {
				return o, i, false // open, or a bare CR or LF
			}
			end, next = e, e+2
		}
		if maxLine > 0 && end-i > maxLine || uint(next-i-lo) > uint(hi-lo) {
			return o, i, false
		}
		n := end - start
		need := n + 1
		if mode == Raw {
			need++
		}
		if len(dst)-o < need {
			return o, i, false
		}
		if n < 80 && len(dst)-o >= 80 && len(src)-start >= 80 {
			// A line of random length costs memmove mispredicted branches
			// on its length; a move of 80 fixed bytes has none (Compat
			// decoding of mail is 12% faster on Zen 5, base64 18%). The
			// bytes after the line are scratch.
			move80(dst[o:o+80], src[start:start+80])
			o += n
		} else {
			o = put(dst, o, src[start:end])
		}
		if mode == Raw {
			dst[o] = '\r'
			o++
		}
		dst[o] = '\n'
		o++
		i = next
	}
	return o, i, true
}

// encodeLines encodes complete lines from src[i:], which starts a line,
// into dst[o:]. It returns the new o and i; both stop at a line start.
// Lines whose encoding is the line itself (no stuffed dot, no added CR) are
// not copied one by one: a run of them is copied at once.
func encodeLines(mode Mode, dst, src []byte, o, i int) (int, int) {
	v := i     // src[v:i] is encoded as it is, but not yet copied to dst
	last := -1 // the length of the line before, taken one by one
	run := 0   // 1: try a run of clean lines here; below 1, lines to wait
	for i < len(src) {
		room := len(dst) - o - (i - v)
		if run == 1 {
			// A run of lines that end in CRLF is its own encoding in
			// every mode, with a dot stuffed where one starts: their LFs
			// found first (encodeRun), which costs less than a line at
			// a time where line lengths vary (a search's end is
			// mispredicted), and more where they do not (base64). So a
			// run is tried after a line whose length differs from the
			// one before it (both taken one by one); where none is found
			// (bare LFs), not again for 8 lines.
			if o2, v2, i2 := encodeRun(mode, dst, src, o, v, i); i2 != i {
				o, v, i = o2, v2, i2
				run = 0
				continue
			}
			run = -8
		}
		c := src[i]
		if c == '\r' && i+1 < len(src) && src[i+1] == '\n' { // an empty line, as it is
			if room < 2 {
				break
			}
			// Lines of a few bytes, such as empty ones, are cheaper
			// found in bulk, as long as they stay short.
			n := cleanLines(src[i:i+min(len(src)-i, room)], 64)
			i += max(n, 2)
			continue
		}
		if c == '\n' && mode == Compat { // an empty line, given its CR
			if room < 2 {
				break
			}
			o += copy(dst[o:], src[v:i])
			dst[o], dst[o+1] = '\r', '\n'
			o += 2
			i++
			v = i
			continue
		}
		if c == '\r' || c == '\n' {
			break
		}
		// The line is src[i:end]; the next one starts at next. No line
		// longer than the room in dst fits, so the search stops there.
		win := src[i:min(len(src), i+room+1)]
		var end, next int
		crlf := false // a CR is added before the LF
		if mode == Compat {
			lf := indexLF(win)
			if lf < 0 {
				break
			}
			end, next = i+lf, i+lf+1
			// net/textproto's CR state toggles along a run of CRs before
			// the LF; in the CR state it writes the LF alone.
			k := 0
			for end-1-k >= i && src[end-1-k] == '\r' {
				k++
			}
			crlf = k&1 == 0
		} else {
			e := i + indexCRLF(win) // not found: past the room
			if e+1 >= len(src) || src[e] != '\r' || src[e+1] != '\n' {
				break // open, or a bare CR or LF
			}
			end, next = e+2, e+2
		}
		if next-i != last && last >= 0 && run == 0 {
			run = 1
		} else if run < 0 {
			run++
		}
		last = next - i
		if c != '.' && !crlf {
			if room < next-i {
				break
			}
			i = next
			continue
		}
		need := next - i
		if c == '.' {
			need++
		}
		if crlf {
			need++
		}
		if room < need {
			break
		}
		o += copy(dst[o:], src[v:i])
		if c == '.' {
			dst[o] = '.'
			o++
		}
		o = put(dst, o, src[i:end])
		if crlf {
			dst[o] = '\r'
			o++
		}
		if end < next {
			dst[o] = '\n'
			o++
		}
		i = next
		v = i
	}
	return o + copy(dst[o:], src[v:i]), i
}

// put copies b to dst[o:] and returns the new o. Short lines are copied
// inline, without a call to memmove.
func put(dst []byte, o int, b []byte) int {
	if len(b) <= 16 {
		d := dst[o : o+len(b)]
		for k := range b {
			d[k] = b[k]
		}
		return o + len(b)
	}
	return o + copy(dst[o:], b)
}

// move80 copies s to d, 80 bytes each, in five 16-byte moves, inline.
func move80(d, s []byte) {
	_, _ = d[79], s[79]
	*(*[16]byte)(d[0:]) = *(*[16]byte)(s[0:])
	*(*[16]byte)(d[16:]) = *(*[16]byte)(s[16:])
	*(*[16]byte)(d[32:]) = *(*[16]byte)(s[32:])
	*(*[16]byte)(d[48:]) = *(*[16]byte)(s[48:])
	*(*[16]byte)(d[64:]) = *(*[16]byte)(s[64:])
}

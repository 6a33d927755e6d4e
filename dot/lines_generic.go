package dot

// Whole-line fast paths of the generic kernels. At the start of a line,
// with no error, room in dst and no MaxSize quota within reach, they
// decode or encode complete ordinary lines in one step each: one scan for
// the line end, one copy. Runs of lines that pass through unchanged (CRLF
// endings, no stuffed dot) are found 32 bytes at a time by cleanLines
// instead where that is cheaper: in Raw decoding, which needs both CR and
// LF found, and when encoding, where such lines are copied as they are.
// They return at the
// first line they do not fully understand (an open line at the end of
// src, a possible end marker, a bare CR or LF, a Compat quirk, not enough
// room), always at the start of that line, and leave it to the one-byte
// state machine, so every subtle case has one implementation.

// decodeLines decodes complete lines from src[i:], which starts a line,
// into dst[o:]. It returns the new o and i; both stop at a line start. If
// maxLine is positive, it stops in front of a line longer than that.
func decodeLines(mode Mode, maxLine int, dst, src []byte, o, i int) (int, int) {
	if mode != Raw {
		return lineByLine(mode, maxLine, dst, src, o, i)
	}
	// Raw output is its input less the stuffed dots: runs of lines without
	// one are copied in bulk, and the line that ends a run goes on its own.
	for i < len(src) {
		n := cleanLines(src[i:min(len(src), i+len(dst)-o)], maxLine)
		o, i = o+copy(dst[o:], src[i:i+n]), i+n
		lf := indexLF(src[i:])
		if lf < 0 {
			break
		}
		o2, i2 := lineByLine(Raw, maxLine, dst, src[:i+lf+1], o, i)
		if i2 == i {
			break
		}
		o, i = o2, i2
	}
	return o, i
}

// lineByLine is decodeLines one line at a time.
func lineByLine(mode Mode, maxLine int, dst, src []byte, o, i int) (int, int) {
	for i < len(src) {
		start := i
		switch src[i] {
		case '.':
			if i+1 >= len(src) || src[i+1] == '\r' || src[i+1] == '\n' {
				return o, i // maybe the end marker
			}
			start++ // the stuffed dot
		case '\r':
			if i+1 < len(src) && src[i+1] == '\n' { // an empty line
				if mode == Raw {
					if len(dst)-o < 2 {
						return o, i
					}
					dst[o] = '\r'
					o++
				} else if len(dst)-o < 1 {
					return o, i
				}
				dst[o] = '\n'
				o++
				i += 2
				continue
			}
			return o, i
		case '\n':
			return o, i
		}
		var end, next int // content is src[start:end]; the next line starts at next
		if mode == Compat {
			lf := indexLF(src[start:])
			if lf < 0 {
				return o, i
			}
			end, next = start+lf, start+lf+1
			if end > start && src[end-1] == '\r' {
				end--
			}
		} else {
			e := start + indexCRLF(src[start:])
			if e+1 >= len(src) || src[e] != '\r' || src[e+1] != '\n' {
				return o, i // open, or a bare CR or LF
			}
			end, next = e, e+2
		}
		if maxLine > 0 && end-i > maxLine {
			return o, i
		}
		n := end - start
		need := n + 1
		if mode == Raw {
			need++
		}
		if len(dst)-o < need {
			return o, i
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
	return o, i
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
			// A run of lines that end in CRLF and start with no dot is
			// its own encoding in every mode: found 32 bytes at a time,
			// which costs less than a line at a time where line lengths
			// vary (a search's end is mispredicted), and more where they
			// do not (base64). So a run is tried after a line whose
			// length differs from the one before it (both taken one by
			// one); where none is found (bare LFs, dots), not again for 8
			// lines.
			if n := cleanLines(src[i:i+min(len(src)-i, room)], 0); n > 0 {
				i += n
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
		// The line is src[i:end]; the next one starts at next.
		var end, next int
		crlf := false // a CR is added before the LF
		if mode == Compat {
			lf := indexLF(src[i:])
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
			e := i + indexCRLF(src[i:])
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

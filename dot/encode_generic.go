package dot

// encodeGeneric is the reference encoding kernel: every other kernel must
// produce the same output, consumption, state and errors. Runs of line bytes
// up to the next CR or LF are copied as they are; line starts and line ends
// go through the one-byte state machine below.
//
// It returns the bytes written to dst and consumed from src; it updates
// e.state and e.err and leaves e.off to the caller.
func encodeGeneric(e *Encoder, dst, src []byte) (o, i int) {
	strict := e.Mode != Compat
	st := e.state
	for i < len(src) {
		c := src[i]
		switch st {
		case eData:
			if c != '\r' && c != '\n' {
				// A run of line bytes is copied as it is, up to the next
				// LF (Compat) or CR or LF (Strict), or as far as dst has room.
				run := src[i:min(len(src), i+len(dst)-o)]
				if len(run) == 0 {
					goto out
				}
				var m int
				if strict {
					m = indexCRLF(run)
				} else if m = indexLF(run); m < 0 {
					m = len(run)
				}
				o += copy(dst[o:], run[:m])
				i += m
				if !strict {
					// net/textproto's CR state toggles along a run of CRs:
					// the byte after a CR is written without a look.
					k := 0
					for k < m && run[m-1-k] == '\r' {
						k++
					}
					if k&1 == 1 {
						st = eCR
					}
				}
				continue
			}
		case eBegin, eBOL:
			if o2, i2 := encodeLines(e.Mode, dst, src, o, i); i2 != i {
				o, i, st = o2, i2, eBOL
				continue
			}
			if c == '.' {
				if len(dst)-o < 2 {
					goto out
				}
				dst[o], dst[o+1] = '.', '.'
				o += 2
				i++
				st = eData
				continue
			}
		case eCR:
			if c == '\n' {
				if strict {
					// The held-back CR is written with its LF.
					if len(dst)-o < 2 {
						goto out
					}
					dst[o] = '\r'
					o++
				} else if len(dst)-o < 1 {
					goto out
				}
				dst[o] = '\n'
				o++
				i++
				st = eBOL
				continue
			}
			if strict {
				e.err = &SyntaxError{Offset: e.off + int64(i) - 1, Err: ErrBareCR}
				goto out
			}
			// net/textproto writes the byte after a CR as it is and does not
			// look at it again: "\r\r\n" becomes "\r\r\r\n".
			if len(dst)-o < 1 {
				goto out
			}
			dst[o] = c
			o++
			i++
			st = eData
			continue
		}
		// At the start of a line (not a dot) or at a CR or LF inside one.
		switch c {
		case '\r':
			if !strict {
				if len(dst)-o < 1 {
					goto out
				}
				dst[o] = '\r'
				o++
			}
			st = eCR
			i++
		case '\n':
			if strict {
				e.err = &SyntaxError{Offset: e.off + int64(i), Err: ErrBareLF}
				goto out
			}
			if len(dst)-o < 2 {
				goto out
			}
			dst[o], dst[o+1] = '\r', '\n'
			o += 2
			i++
			st = eBOL
		default:
			st = eData // c is copied as line data
		}
	}
out:
	e.state = st
	return o, i
}

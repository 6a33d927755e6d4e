package dot

// decodeGeneric is the reference decoding kernel: every other kernel must
// produce the same output, consumption, state and errors. It works line by
// line: the bytes of a line up to its first CR or LF are copied as one run
// (found with bytes.IndexByte), and only line starts and line ends go through
// the one-byte state machine below.
//
// It returns the bytes written to dst and consumed from src; it updates
// d.state and records problems with d.fail, and leaves d.off and d.n to the
// caller.
func decodeGeneric(d *Decoder, dst, src []byte) (o, i int) {
	strict := d.Mode != Compat
	st := d.state
	var stop bool
	for i < len(src) && st != dEnd {
		// Stop as soon as dst is full, before input that might produce no
		// output: this is where net/textproto's DotReader stops too.
		if o == len(dst) && d.err == nil {
			break
		}
		c := src[i]
		switch st {
		case dData:
			switch c {
			case '\r':
				st = dCR
				i++
				continue
			case '\n':
				if strict {
					d.bare(ErrBareLF, d.off+int64(i))
					i++
					continue
				}
				if o, stop = d.emit(dst, o, "\n"); stop {
					goto out
				}
				st = dBOL
				i++
				continue
			}
			// A run of line bytes is copied as it is. In Strict and Raw mode
			// it ends at the next CR or LF. In Compat mode it ends at the
			// next LF, less a CR right before it or at the end of src (it
			// may start "\r\n"): net/textproto passes other CRs through.
			// Nothing past the room left in dst (plus one byte, to see a
			// CR's successor) is looked at.
			room := len(dst) - o
			if d.err != nil {
				room = len(src) - i
			}
			run := src[i:min(len(src), i+room+1)]
			var m int
			if strict {
				m = indexCRLF(run)
			} else {
				if m = indexLF(run); m < 0 {
					m = len(run)
				}
				if run[m-1] == '\r' && (m < len(run) || i+m == len(src)) {
					m--
				}
			}
			if d.err == nil {
				quota := int64(room) + 1
				if d.MaxSize > 0 {
					quota = d.MaxSize - (d.n + int64(o))
				}
				if int64(m) > quota && quota <= int64(room) {
					// The run passes MaxSize before it fills dst.
					o += copy(dst[o:], run[:quota])
					d.fail(ErrTooLarge)
				} else if m > room {
					o += copy(dst[o:], run[:room])
					i += room
					goto out
				} else {
					o += copy(dst[o:], run[:m])
				}
			}
			i += m

		case dBOL:
			if d.err == nil && d.MaxSize == 0 {
				if o2, i2 := decodeLines(d.Mode, dst, src, o, i); i2 != i {
					o, i = o2, i2
					continue
				}
			}
			switch c {
			case '.':
				st = dDot
				i++
			case '\r':
				st = dCR
				i++
			case '\n':
				if strict {
					d.bare(ErrBareLF, d.off+int64(i))
					st = dData
					i++
					continue
				}
				// net/textproto emits an LF at the start of a line and then
				// treats what follows as the middle of a line.
				if o, stop = d.emit(dst, o, "\n"); stop {
					goto out
				}
				st = dData
				i++
			default:
				st = dData // c is copied as line data
			}

		case dDot:
			switch c {
			case '\r':
				st = dDotCR
				i++
			case '\n':
				if strict {
					d.bare(ErrBareLF, d.off+int64(i))
					st = dData
					i++
					continue
				}
				st = dEnd
				i++
			default:
				st = dData // the stuffed dot is gone; c is line data
			}

		case dDotCR, dCR:
			if c == '\n' {
				if st == dDotCR {
					st = dEnd
					i++
					continue
				}
				ending := "\n"
				if d.Mode == Raw {
					ending = "\r\n"
				}
				if o, stop = d.emit(dst, o, ending); stop {
					goto out
				}
				st = dBOL
				i++
				continue
			}
			// The CR before c is not part of a line ending. c itself is
			// decoded again in the middle of a line.
			if strict {
				d.bare(ErrBareCR, d.off+int64(i)-1)
				st = dData
				continue
			}
			if o, stop = d.emit(dst, o, "\r"); stop {
				goto out
			}
			st = dData
		}
	}
out:
	d.state = st
	return o, i
}

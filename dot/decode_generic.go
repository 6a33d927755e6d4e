package dot

// decodeGeneric is the reference decoding kernel: every other kernel must
// produce the same output, consumption, state and errors. It works line by
// line: the bytes of a line up to its first CR or LF are copied as one run
// (found with bytes.IndexByte), and only line starts and line ends go through
// the one-byte state machine below.
//
// It returns the bytes written to dst and consumed from src; it updates
// d.state, d.soft and d.line and records problems with d.problem and
// d.bare, and leaves d.off and d.n to the caller.
//
// Where a run meets several limits, the first byte past one decides: a
// byte past MaxLine or MaxSize is a problem, and output stops in front of
// it, unless dst is already full there (then Transform returns ErrShortDst
// first). For MaxSize a run full to the last byte of dst is the exception:
// the byte after it is a problem at once.
func decodeGeneric(d *Decoder, dst, src []byte) (o, i int) {
	strict := d.Mode != Compat
	bare := d.Bare
	if !strict {
		bare = BareReject // not used in Compat mode
	}
	ending := "\n"
	if d.Mode == Raw {
		ending = "\r\n"
	}
	st, soft, line := d.state, d.soft, d.line
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
				if !strict {
					if o, stop = d.emit(dst, o, "\n"); stop {
						goto out
					}
					st, line = dBOL, 0
					i++
					continue
				}
				switch bare {
				case BareReject:
					d.bare(ErrBareLF, d.off+int64(i))
					d.checkLine(line)
					line++
				case BareKeep:
					d.checkLine(line)
					if o, stop = d.emit(dst, o, "\n"); stop {
						goto out
					}
					line++
				case BareNormalize:
					if o, stop = d.emit(dst, o, ending); stop {
						goto out
					}
					st, soft, line = dBOL, true, 0
				}
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
			if d.err != nil {
				// Nothing is written any more, but the other limits are
				// still checked.
				if d.MaxLine > 0 {
					if line += m; line > d.MaxLine {
						d.problem(foundLineTooLong, ErrLineTooLong)
					}
				}
				d.drop(o, m)
				i += m
				continue
			}
			// k bytes are copied; a problem, if any, is at the byte after
			// them.
			k, kind := m, uint8(0)
			if d.MaxSize > 0 {
				if quota := d.MaxSize - (d.n + int64(o)); int64(k) > quota && quota <= int64(room) {
					k, kind = int(quota), foundTooLarge
				}
			}
			if d.MaxLine > 0 {
				if left := d.MaxLine - line; left < k && left < room {
					k, kind = left, foundLineTooLong
				}
			}
			if kind == 0 && k > room {
				// dst fills up first.
				o += copy(dst[o:], run[:room])
				i += room
				line += room
				goto out
			}
			o += copy(dst[o:], run[:k])
			i += k
			line += k
			switch kind {
			case foundTooLarge:
				d.problem(kind, ErrTooLarge)
			case foundLineTooLong:
				d.problem(kind, ErrLineTooLong)
			}

		case dBOL:
			if d.err == nil && d.MaxSize == 0 {
				if o2, i2 := decodeLines(d.Mode, d.MaxLine, dst, src, o, i); i2 != i {
					o, i, soft = o2, i2, false
					continue
				}
			}
			switch c {
			case '.':
				st = dDot
				d.checkLine(line)
				line++
				i++
			case '\r':
				st = dCR
				i++
			case '\n':
				if !strict {
					// net/textproto emits an LF at the start of a line and
					// then treats what follows as the middle of a line.
					if o, stop = d.emit(dst, o, "\n"); stop {
						goto out
					}
					st, line = dData, 0
					i++
					continue
				}
				switch bare {
				case BareReject:
					d.bare(ErrBareLF, d.off+int64(i))
					d.checkLine(line)
					st, line = dData, line+1
				case BareKeep:
					d.checkLine(line)
					if o, stop = d.emit(dst, o, "\n"); stop {
						goto out
					}
					line++
					st = dData
				case BareNormalize: // an empty line
					if o, stop = d.emit(dst, o, ending); stop {
						goto out
					}
					soft = true
				}
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
				if !strict {
					st = dEnd
					i++
					continue
				}
				// The dot was a stuffed one: "." and a bare LF is not the
				// end marker.
				switch bare {
				case BareReject:
					d.bare(ErrBareLF, d.off+int64(i))
					d.checkLine(line)
					st, line = dData, line+1
				case BareKeep:
					d.checkLine(line)
					if o, stop = d.emit(dst, o, "\n"); stop {
						goto out
					}
					line++
					st = dData
				case BareNormalize: // an empty line
					if o, stop = d.emit(dst, o, ending); stop {
						goto out
					}
					st, soft, line = dBOL, true, 0
				}
				i++
			default:
				st = dData // the stuffed dot is gone; c is line data
			}

		case dDotCR, dCR:
			if c == '\n' {
				if st == dDotCR && !soft {
					st = dEnd
					i++
					continue
				}
				// A line ending. With BareNormalize, ".\r\n" on a line
				// that a bare LF began is a stuffed dot and an empty line:
				// only a CRLF before the dot makes the end marker.
				if o, stop = d.emit(dst, o, ending); stop {
					goto out
				}
				st, soft, line = dBOL, false, 0
				i++
				continue
			}
			// The CR before c is not part of a line ending. c itself is
			// decoded again in the middle of a line.
			if strict && bare == BareReject {
				d.bare(ErrBareCR, d.off+int64(i)-1)
				d.checkLine(line)
				st, line = dData, line+1
				continue
			}
			d.checkLine(line)
			if o, stop = d.emit(dst, o, "\r"); stop {
				goto out
			}
			st, line = dData, line+1
		}
	}
out:
	// soft only matters up to the end of a line's leading dot.
	d.state, d.soft = st, soft && (st == dBOL || st == dDot || st == dDotCR)
	if d.MaxLine > 0 {
		d.line = line
	}
	return o, i
}

// checkLine records ErrLineTooLong if one more byte would make the
// current line, which has line bytes so far, longer than MaxLine.
func (d *Decoder) checkLine(line int) {
	if d.MaxLine > 0 && line >= d.MaxLine {
		d.problem(foundLineTooLong, ErrLineTooLong)
	}
}

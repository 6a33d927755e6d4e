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
				var nrm bool
				if o, st, line, nrm, stop = d.bareLF(bare, dst, o, d.off+int64(i), st, line, ending); stop {
					goto out
				}
				soft = soft || nrm
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
			// Whole lines go at once unless this call may reach MaxSize:
			// its quota is past what dst can take.
			if d.err == nil && (d.MaxSize <= 0 || d.MaxSize-d.n-int64(o) > int64(len(dst)-o)) {
				if o2, i2 := decodeLines(d.Mode, d.MaxLine, &d.span, dst, src, o, i); i2 != i {
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
				var nrm bool
				if o, st, line, nrm, stop = d.bareLF(bare, dst, o, d.off+int64(i), st, line, ending); stop {
					goto out
				}
				soft = soft || nrm
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
				var nrm bool
				if o, st, line, nrm, stop = d.bareLF(bare, dst, o, d.off+int64(i), st, line, ending); stop {
					goto out
				}
				soft = soft || nrm
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
				d.drop(o, 1) // a byte of the message all the same
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

// bareLF takes a bare LF, at input offset off, in Strict or Raw mode:
// after line bytes of a line in state st (dData; or dBOL or dDot, at its
// start). Under bare it is an error, data, or a line ending written as
// ending (normalized), and the line goes on, or a new one starts. With
// stop (dst is full) the state is as it was.
func (d *Decoder) bareLF(bare BarePolicy, dst []byte, o int, off int64, st uint8, line int, ending string) (_ int, _ uint8, _ int, normalized, stop bool) {
	switch bare {
	case BareNormalize:
		if o, stop = d.emit(dst, o, ending); stop {
			return o, st, line, false, true
		}
		return o, dBOL, 0, true, false
	case BareReject:
		d.bare(ErrBareLF, off)
		d.drop(o, 1) // a byte of the message all the same
	}
	d.checkLine(line)
	if bare == BareKeep {
		if o, stop = d.emit(dst, o, "\n"); stop {
			return o, st, line, false, true
		}
	}
	return o, dData, line + 1, false, false
}

// checkLine records ErrLineTooLong if one more byte would make the
// current line, which has line bytes so far, longer than MaxLine.
func (d *Decoder) checkLine(line int) {
	if d.MaxLine > 0 && line >= d.MaxLine {
		d.problem(foundLineTooLong, ErrLineTooLong)
	}
}

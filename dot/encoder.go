package dot

import "golang.org/x/text/transform"

var _ transform.Transformer = (*Encoder)(nil)

// Encoder states. The zero state is the start of the data.
const (
	eBegin uint8 = iota // nothing written yet
	eBOL                // at the start of a line
	eCR                 // after a "\r" (Compat: written; Strict: held back)
	eData               // inside a line
	eEnd                // the end marker has been written
)

// An Encoder dot-stuffs one data block and appends the end marker. The zero
// value is a Compat encoder; set Mode before the first call to Transform,
// and call Reset before reusing it. An Encoder implements
// golang.org/x/text/transform.Transformer.
//
// Every input byte is encoded as a whole: its output (at most two bytes)
// is written completely or not at all.
type Encoder struct {
	Mode Mode

	state uint8
	tail  uint8 // bytes of the end marker already written
	off   int64 // input bytes consumed
	err   error // sticky *SyntaxError
}

// Reset prepares e for a new block, keeping Mode.
func (e *Encoder) Reset() { *e = Encoder{Mode: e.Mode} }

// Transform encodes src into dst; it may use all of dst as scratch space
// (bytes past dst[:nDst] are not preserved). With atEOF set and src
// consumed, it then writes the end of the data: in Compat mode exactly what
// net/textproto's DotWriter writes on Close (a line ending if the last line
// is open, then ".\r\n"); in Strict and Raw modes a "\r\n" if the last
// line is open, then ".\r\n". Its error is
//   - nil: all of src was consumed (and, with atEOF, the end marker written);
//   - ErrShortDst: dst has no room for the next byte's output;
//   - a *SyntaxError (Strict and Raw): a bare CR or LF in src. nSrc stops
//     before the offending byte (after it, for a CR), and the error is sticky.
//   - ErrClosed: src is not empty but the end marker was already written.
func (e *Encoder) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
	if e.Mode > Raw {
		return 0, 0, errMode(e.Mode, BareReject)
	}
	if e.err != nil {
		return 0, 0, e.err
	}
	if e.state == eEnd || e.tail > 0 {
		if len(src) > 0 {
			return 0, 0, ErrClosed
		}
		if e.state == eEnd {
			return 0, 0, nil
		}
	}
	nDst, nSrc = encode(e, dst, src)
	e.off += int64(nSrc)
	switch {
	case e.err != nil:
		return nDst, nSrc, e.err
	case nSrc < len(src):
		return nDst, nSrc, ErrShortDst
	case !atEOF:
		return nDst, nSrc, nil
	}
	n, err := e.finish(dst[nDst:])
	return nDst + n, nSrc, err
}

// Trailers, by state, for Compat and Strict mode.
var (
	endCompat = [...]string{eBegin: "\r\n.\r\n", eBOL: ".\r\n", eCR: "\n.\r\n", eData: "\r\n.\r\n"}
	endStrict = [...]string{eBegin: ".\r\n", eBOL: ".\r\n", eData: "\r\n.\r\n"}
)

// finish writes what is left of the end marker to dst.
func (e *Encoder) finish(dst []byte) (int, error) {
	var end string
	if e.Mode == Compat {
		end = endCompat[e.state]
	} else {
		if e.state == eCR {
			e.err = &SyntaxError{Offset: e.off - 1, Err: ErrBareCR}
			return 0, e.err
		}
		end = endStrict[e.state]
	}
	n := copy(dst, end[e.tail:])
	e.tail += uint8(n)
	if int(e.tail) < len(end) {
		return n, ErrShortDst
	}
	e.state = eEnd
	return n, nil
}

package dot

import (
	"io"

	"golang.org/x/text/transform"
)

var _ transform.Transformer = (*Decoder)(nil)

// Decoder states. The zero state is the start of a line.
const (
	dBOL   uint8 = iota // at the start of a line
	dDot                // read "." at the start of a line
	dDotCR              // read ".\r" at the start of a line
	dCR                 // read "\r", not yet emitted
	dData               // inside a line
	dEnd                // consumed the end marker
)

// Kinds of problems with the data, as bits of Decoder.found.
const (
	foundTooLarge uint8 = 1 << iota
	foundLineTooLong
	foundBareLF
	foundBareCR
)

// A Decoder removes dot-stuffing from one data block. The zero value is a
// Compat decoder with no limits; set Mode, MaxSize, Bare and MaxLine before
// the first call to Transform, and call Reset before reusing it for another
// block. A Decoder implements golang.org/x/text/transform.Transformer;
// through transform.NewReader it loses the bytes after the block (see the
// package documentation).
type Decoder struct {
	Mode Mode
	// MaxSize, if positive, bounds the decoded size of the block (a bare
	// CR or LF that BareReject refuses counts as the byte it is, as BDAT
	// chunks count it). Output stops at MaxSize bytes; the decoder then
	// discards input up to the end marker and reports ErrTooLarge in
	// place of io.EOF.
	MaxSize int64
	// Bare says what a Strict or Raw decoder does with a bare CR or LF (one
	// that is not part of a CRLF); see the package documentation. Compat
	// mode ignores the policy and does what net/textproto does, but a Bare
	// that is none of the policies fails in any mode ([ErrMode]).
	Bare BarePolicy
	// MaxLine, if positive, bounds the length of every line of the block,
	// counted on the wire as textproto's Limits.MaxLineBytes counts: the
	// bytes of the line before its line ending, a stuffing dot included.
	// A line ends in CRLF, in Compat mode also in a bare LF, and with
	// BareNormalize in a bare LF; other bare CRs and LFs count as bytes of
	// the line. Output stops in front of the first byte too many; the
	// decoder then discards input up to the end marker and reports
	// ErrLineTooLong in place of io.EOF. RFC 5321 §4.5.3.1.6 allows 998
	// bytes and the CRLF, not counting a stuffing dot: MaxLine 998
	// refuses a line of 998 bytes that starts with a dot (999 on the
	// wire), which it allows; 999 takes that line, and one of 999 bytes
	// without a dot too.
	MaxLine int

	state   uint8
	soft    bool  // the line started after a bare LF taken as a line ending (BareNormalize)
	found   uint8 // the kinds of problems found
	line    int   // bytes of the current line so far (only with MaxLine)
	span    int   // the generic kernel's guess at the lines to come (see decodeLines)
	off     int64 // input bytes consumed
	n       int64 // output bytes produced
	dropped int64 // output bytes dropped after a problem, while MaxSize is not yet passed
	lfOff   int64 // offset of the first bare LF (BareReject)
	crOff   int64 // offset of the first bare CR (BareReject)
	err     error // the first problem with the data: output stopped there
	// several is the error for several kinds of problems, built by
	// dataErr for the kinds in severalOf, so that every call returns the
	// same one.
	several   error
	severalOf uint8
}

// Reset prepares d for a new block, keeping Mode, MaxSize, Bare and
// MaxLine.
func (d *Decoder) Reset() {
	*d = Decoder{Mode: d.Mode, MaxSize: d.MaxSize, Bare: d.Bare, MaxLine: d.MaxLine}
}

// Transform decodes src into dst and reports how many bytes it wrote and
// consumed. It stops when dst is full, when src is used up, or after the end
// marker. Its error is
//   - nil: all of src was consumed and the block has not ended;
//   - ErrShortDst: dst filled up before src was consumed;
//   - io.EOF: the end marker was consumed; nSrc counts it, and any bytes
//     after it in src are left alone;
//   - ErrTooLarge, ErrLineTooLong, a *SyntaxError, or an error matching
//     several of them: the block has ended, as for io.EOF, but its data
//     was rejected (see the package documentation);
//   - io.ErrUnexpectedEOF: atEOF was set and src ended inside the block.
//
// Once the block has ended, Transform consumes nothing and returns the same
// final error. A byte that cannot be decided yet (a "\r" that may start
// "\r\n", a "." that may start the end marker) is consumed and remembered,
// so nSrc is len(src) whenever dst has room.
//
// Transform may use all of dst as scratch space, as io.Reader.Read may use
// its buffer: bytes past dst[:nDst] are not preserved. So dst must not
// overlap src: decoding in place overwrites input not yet read.
//
// In Compat mode Transform consumes input exactly as far as net/textproto's
// DotReader does for a Read into the same buffer: it stops as soon as dst is
// full, even before input that would produce no output.
func (d *Decoder) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
	if d.Mode > Raw || d.Bare > BareNormalize {
		return 0, 0, errMode(d.Mode, d.Bare)
	}
	if d.state == dEnd {
		return 0, 0, d.final()
	}
	nDst, nSrc = decode(d, dst, src)
	d.off += int64(nSrc)
	d.n += int64(nDst)
	switch {
	case d.state == dEnd:
		return nDst, nSrc, d.final()
	case nSrc < len(src):
		return nDst, nSrc, ErrShortDst
	case atEOF:
		return nDst, nSrc, io.ErrUnexpectedEOF
	}
	return nDst, nSrc, nil
}

// Size returns the number of decoded bytes the block has produced so far:
// the bytes Transform has written to its dst arguments since the last
// Reset. Output stops at the first problem with the data, and so does
// Size: it is at most MaxSize.
func (d *Decoder) Size() int64 { return d.n }

// Done reports whether the end marker has been consumed.
func (d *Decoder) Done() bool { return d.state == dEnd }

// Err returns the problem found in the data so far, as Transform will
// report it when the block ends (see the package documentation), or nil.
// Transform reports it when the block ends; Err lets a caller give up
// early instead.
func (d *Decoder) Err() error {
	if d.err == nil {
		return nil
	}
	return d.dataErr()
}

// final is the error Transform returns after the end marker.
func (d *Decoder) final() error {
	if d.err == nil {
		return io.EOF
	}
	return d.dataErr()
}

// dataErr is the error for the problems found: the one problem's own
// error if there was one kind, otherwise a *dataErrors with every kind,
// in order of precedence. It builds the latter once for each set of
// kinds: once the block has ended, every call returns the same error.
func (d *Decoder) dataErr() error {
	if d.found&(d.found-1) == 0 {
		return d.err
	}
	if d.several != nil && d.severalOf == d.found {
		return d.several
	}
	e := new(dataErrors)
	errs := e.errs[:0]
	if d.found&foundTooLarge != 0 {
		errs = append(errs, ErrTooLarge)
	}
	if d.found&foundLineTooLong != 0 {
		errs = append(errs, ErrLineTooLong)
	}
	if d.found&foundBareLF != 0 {
		errs = append(errs, &SyntaxError{Offset: d.lfOff, Err: ErrBareLF})
	}
	if d.found&foundBareCR != 0 {
		errs = append(errs, &SyntaxError{Offset: d.crOff, Err: ErrBareCR})
	}
	e.n = len(errs)
	d.several, d.severalOf = e, d.found
	return e
}

// dataErrors reports several kinds of problems with one block. It matches
// each of them with errors.Is and errors.As; its text lists them in order
// of precedence.
type dataErrors struct {
	errs [4]error
	n    int
}

func (e *dataErrors) Error() string {
	s := e.errs[0].Error()
	for _, err := range e.errs[1:e.n] {
		s += "; " + err.Error()
	}
	return s
}

func (e *dataErrors) Unwrap() []error { return e.errs[:e.n] }

// problem records a problem of the given kind (one of the found bits),
// whose error is err, unless one of that kind was found already. Output
// stops at the first problem.
func (d *Decoder) problem(kind uint8, err error) {
	if d.found&kind != 0 {
		return
	}
	d.found |= kind
	if d.err == nil {
		d.err = err
	}
}

// bare records a bare CR or LF at input offset off (BareReject).
func (d *Decoder) bare(kind error, off int64) {
	if kind == ErrBareLF {
		if d.found&foundBareLF == 0 {
			d.lfOff = off
			d.problem(foundBareLF, &SyntaxError{Offset: off, Err: kind})
		}
		return
	}
	if d.found&foundBareCR == 0 {
		d.crOff = off
		d.problem(foundBareCR, &SyntaxError{Offset: off, Err: kind})
	}
}

// drop counts k bytes of output dropped after a problem, when o have been
// written in this call, and records ErrTooLarge once the block would have
// passed MaxSize.
func (d *Decoder) drop(o, k int) {
	if d.MaxSize > 0 && d.found&foundTooLarge == 0 {
		d.dropped += int64(k)
		if d.n+int64(o)+d.dropped > d.MaxSize {
			d.problem(foundTooLarge, ErrTooLarge)
			d.dropped = 0 // no longer needed
		}
	}
}

// Space verdicts for output of k bytes at dst[o:].
const (
	spaceWrite = iota // write them
	spaceDrop         // drop them: the data has been rejected
	spaceStop         // stop before consuming the input: dst is full
)

// space decides what happens to k more output bytes when o have been written
// to a dst of length dstLen in this call. It records ErrTooLarge when they
// would pass MaxSize.
func (d *Decoder) space(dstLen, o, k int) int {
	if d.err != nil {
		d.drop(o, k)
		return spaceDrop
	}
	if d.MaxSize > 0 && d.n+int64(o+k) > d.MaxSize {
		d.problem(foundTooLarge, ErrTooLarge)
		return spaceDrop
	}
	if o+k > dstLen {
		return spaceStop
	}
	return spaceWrite
}

// emit writes s, one or two bytes of output, to dst[o:] unless the data has
// been rejected, and returns the new o. It reports stop when dst has no room
// for s: the caller must stop before consuming the input that makes it.
func (d *Decoder) emit(dst []byte, o int, s string) (_ int, stop bool) {
	switch d.space(len(dst), o, len(s)) {
	case spaceStop:
		return o, true
	case spaceWrite:
		o += copy(dst[o:], s)
	}
	return o, false
}

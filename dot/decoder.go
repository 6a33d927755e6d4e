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

// A Decoder removes dot-stuffing from one data block. The zero value is a
// Compat decoder with no size limit; set Mode and MaxSize before the first
// call to Transform, and call Reset before reusing it for another block.
// A Decoder implements golang.org/x/text/transform.Transformer; through
// transform.NewReader it loses the bytes after the block (see the package
// documentation).
type Decoder struct {
	Mode Mode
	// MaxSize, if positive, bounds the decoded size of the block. Output
	// stops at MaxSize bytes; the decoder then discards input up to the
	// end marker and reports ErrTooLarge in place of io.EOF.
	MaxSize int64
	// Bare says what a Strict or Raw decoder does with a bare CR or LF (one
	// that is not part of a CRLF). Compat mode ignores it: it does what
	// net/textproto does.
	Bare BarePolicy
	// MaxLine, if positive, bounds the length of every line of the block,
	// counted on the wire: its bytes up to its line ending, a stuffing dot
	// included. A longer line is reported as ErrLineTooLong, after the
	// block, as ErrTooLarge is; output stops in front of its first byte
	// too many.
	MaxLine int

	state uint8
	off   int64 // input bytes consumed
	n     int64 // output bytes produced
	err   error // first problem with the data, reported at the end marker
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
//   - ErrTooLarge or a *SyntaxError: the block has ended, as for io.EOF, but
//     its data was rejected;
//   - io.ErrUnexpectedEOF: atEOF was set and src ended inside the block.
//
// Once the block has ended, Transform consumes nothing and returns the same
// final error. A byte that cannot be decided yet (a "\r" that may start
// "\r\n", a "." that may start the end marker) is consumed and remembered,
// so nSrc is len(src) whenever dst has room.
//
// Transform may use all of dst as scratch space, as io.Reader.Read may use
// its buffer: bytes past dst[:nDst] are not preserved.
//
// In Compat mode Transform consumes input exactly as far as net/textproto's
// DotReader does for a Read into the same buffer: it stops as soon as dst is
// full, even before input that would produce no output.
func (d *Decoder) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
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
// Reset. Once a problem with the data has been found, no more output is
// produced, so after a block rejected for ErrTooLarge Size is at most
// MaxSize.
func (d *Decoder) Size() int64 { return d.n }

// Done reports whether the end marker has been consumed.
func (d *Decoder) Done() bool { return d.state == dEnd }

// Err returns the problem found in the data so far (ErrTooLarge or a
// *SyntaxError), or nil. Transform reports it when the block ends; Err lets
// a caller give up early instead.
func (d *Decoder) Err() error { return d.err }

// final is the error Transform returns after the end marker.
func (d *Decoder) final() error {
	if d.err != nil {
		return d.err
	}
	return io.EOF
}

// fail records the first problem with the data; later output is dropped.
func (d *Decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// bare records a bare CR or LF at input offset off.
func (d *Decoder) bare(kind error, off int64) {
	d.fail(&SyntaxError{Offset: off, Err: kind})
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
		return spaceDrop
	}
	if d.MaxSize > 0 && d.n+int64(o+k) > d.MaxSize {
		d.fail(ErrTooLarge)
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

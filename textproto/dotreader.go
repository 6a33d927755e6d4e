package textproto

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/dotstop"
)

// DotReader returns a reader of the dot-encoded block that r reads next,
// the framing of SMTP DATA and NNTP articles: a series of "\r\n"-ended
// lines closed by a line holding only ".", where a line that starts with
// "." carries one more ".". Its Read returns the lines with "\n" endings
// and without the added dots, and io.EOF once it has consumed the closing
// line. It is meant to be used until the next call on r, which first reads
// what is left of the block.
//
// It decodes exactly as net/textproto does ([dot.Compat]), consumes r.R
// exactly as far, and also implements [io.WriterTo]. It is a [*DotReader]
// under the limits of r (see [Reader.DotReaderWith]).
func (r *Reader) DotReader() io.Reader {
	return r.DotReaderWith(DotOptions{})
}

// DotReaderMode is like [Reader.DotReader] but decodes in the given mode:
// [dot.Strict] accepts only "\r\n" line endings and ends only at
// "\r\n.\r\n" (the SMTP-smuggling-safe framing of RFC 5321), and [dot.Raw]
// frames the same way but keeps "\r\n" in the decoded data. A bare CR or LF
// in those modes fails the read with a [*dot.SyntaxError] once the block has
// been consumed up to its end marker, so the connection stays in step.
func (r *Reader) DotReaderMode(mode dot.Mode) io.Reader {
	return r.DotReaderWith(DotOptions{Mode: mode})
}

// DotOptions are the framing and limits of one dot-encoded block, for
// [Reader.DotReaderWith]. A zero limit takes the Reader's (see [Limits]);
// a negative one sets no limit for the block.
type DotOptions struct {
	Mode dot.Mode       // the framing: dot.Compat, dot.Strict or dot.Raw
	Bare dot.BarePolicy // what Strict and Raw do with a bare CR or LF

	// MaxBytes bounds the decoded size of the block, as
	// Limits.MaxDotBytes does: a larger block fails with dot.ErrTooLarge.
	MaxBytes int64

	// MaxLineBytes bounds the length of each line of the block on the
	// wire, as Limits.MaxLineBytes does: a longer line fails the block
	// with dot.ErrLineTooLong.
	MaxLineBytes int

	// MaxDiscardBytes bounds how much of the block is read and discarded
	// after a problem with its data, as Limits.MaxDiscardBytes does:
	// past it the block fails with an error matching ErrNotInStep.
	MaxDiscardBytes int64
}

// DotReaderWith is like [Reader.DotReader] with the framing and limits
// of opt, for one block: a server can, for example, take each
// transaction's size limit from its SIZE parameter without calling
// SetLimits. What breaks a limit or the framing's rules fails the block
// once it has been read to its end line, with an error that matches every
// kind of problem found (see the package documentation on errors). A read
// error that cuts the block short after a problem was found fails the
// Read or WriteTo with an error that matches the problems and the read
// error (io.ErrUnexpectedEOF for io.EOF), in that order.
//
// If a read error cuts the block short and r then moves on (a newer block,
// or another method of r), the reader is stale: a Compat one without
// limits reads on from r.R, wherever r has got to, as net/textproto's
// does, and any other fails with an error matching io.ErrUnexpectedEOF,
// reading nothing. After [ErrNotInStep] every reader of r that has not
// ended fails with it. A Mode
// or Bare that is none of dot's constants fails every read of the block
// with an error matching [dot.ErrMode], and reads none of it.
func (r *Reader) DotReaderWith(opt DotOptions) *DotReader {
	r.closeDot()
	maxBytes, maxLine, maxDiscard := opt.MaxBytes, opt.MaxLineBytes, opt.MaxDiscardBytes
	if maxBytes == 0 {
		maxBytes = r.lim.MaxDotBytes
	}
	if maxDiscard == 0 {
		maxDiscard = r.lim.MaxDiscardBytes
	}
	if maxLine == 0 {
		maxLine = r.lim.MaxLineBytes
	}
	// Each block gets its own reader, so that one kept past its block
	// cannot read the next: once drained it returns io.EOF.
	r.dot = &DotReader{r: r, dec: dot.Decoder{
		Mode:    opt.Mode,
		Bare:    opt.Bare,
		MaxSize: max(maxBytes, 0),
		MaxLine: max(maxLine, 0),
	}, maxDiscard: max(maxDiscard, 0), active: true, fresh: true, calls: r.calls}
	return r.dot
}

// Dot readers are io.WriterTo, so that io.Copy decodes whole windows.
var _ io.WriterTo = (*DotReader)(nil)

// A DotReader reads one dot-encoded block; see [Reader.DotReader] and
// [Reader.DotReaderWith].
type DotReader struct {
	r      *Reader
	dec    dot.Decoder
	active bool    // the block is open: the next Reader method drains it
	fresh  bool    // r.begin has not run for this block yet
	calls  uint64  // r.calls when the block was made or started (see stale)
	carry  [2]byte // room for a "\r\n" too big for the caller's buffer (Raw)
	pend   []byte  // what of carry is still to be returned

	// With maxDiscard set, discarded counts the input consumed after the
	// byte at which output stopped (dropping is set from then on), and
	// lost is the error of giving up.
	maxDiscard int64
	discarded  int64
	dropping   bool
	lost       error

	delegated bool // WriteTo has handed the block to its writer's ReadFrom
}

// Size returns the number of decoded bytes of the block read so far (at
// most the block's MaxBytes).
func (d *DotReader) Size() int64 { return d.dec.Size() - int64(len(d.pend)) }

// start runs r.begin before the first byte of the block: it returns a read
// error owed from the previous call, and skips what a limit error left
// unread. If it fails, that error ends the block, as a read error would,
// and a later Read on the block tries again, unless r has moved on since.
// A stale reader leaves r alone (see staleErr).
func (d *DotReader) start() error {
	if !d.fresh {
		return nil
	}
	if d.stale() {
		d.fresh = false
		return nil
	}
	d.active = false // r.begin's closeDot must leave this block alone
	err := d.r.begin()
	d.calls = d.r.calls
	if err != nil {
		return err
	}
	d.fresh, d.active = false, true
	return nil
}

// stale reports whether r has moved on since d's block was made or
// started: a newer block has begun, or another method of r has run (which
// drained d's block if it was open, or read on from where it stopped on a
// read error).
func (d *DotReader) stale() bool {
	return d.r.dot != d || d.r.calls != d.calls
}

// errStale ends a stale Strict, Raw or limited block that was not read to
// its end line (a read error stopped it before r moved on): what follows
// in R is no longer this block's.
var errStale = fmt.Errorf("textproto: dot block left unfinished, its Reader has read on: %w", io.ErrUnexpectedEOF)

// staleErr returns the error that keeps a stale reader whose block has not
// ended from reading R: r's ErrNotInStep if r has given up, and errStale
// unless the block is a Compat one without limits, which reads on from
// where it stopped, as net/textproto's does, so that results stay the same.
// Any other block must not take another's bytes, nor break a limit on them
// and give up, which would put r out of step behind its back.
func (d *DotReader) staleErr() error {
	if d.dec.Done() || !d.stale() {
		return nil
	}
	if d.r.lost != nil {
		return d.r.lost
	}
	if d.dec.Mode == dot.Compat && d.dec.MaxSize == 0 && d.dec.MaxLine == 0 && d.maxDiscard == 0 {
		return nil
	}
	return errStale
}

// Read decodes into b. Like net/textproto, it fills b completely unless the
// block ends or the input fails, and it reads r.R only through its buffer:
// bufio's Peek and Discard, so the bytes after the end marker stay unread.
// A Read with an empty b reads nothing: it returns 0 and nil, as
// net/textproto's does, unless the block has ended (io.EOF) or failed a
// limit, its framing or its mode (that error). A read error r owes, and
// what a limit error left to discard, wait for the next Read with room.
func (d *DotReader) Read(b []byte) (n int, err error) {
	if len(b) > 0 {
		if err := d.start(); err != nil {
			return 0, err
		}
	}
	if d.lost != nil {
		return 0, d.lost
	}
	if err := d.badMode(); err != nil {
		return 0, err
	}
	n = copy(b, d.pend)
	d.pend = d.pend[n:]
	br := d.r.R
	if n < len(b) {
		err = d.staleErr()
	}
	for err == nil && n < len(b) && !d.dec.Done() {
		if d.overBound() {
			err = d.giveUp()
			break
		}
		if br.Buffered() == 0 {
			if _, err = br.Peek(1); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				err = withReadErr(d.dec.Err(), err)
				break
			}
		}
		src := d.window(br)
		nd, ns := d.transform(b[n:], src)
		if nd == 0 && ns == 0 {
			// Raw mode writes "\r\n" whole, and b has one byte left.
			nd, ns = d.transform(d.carry[:], src)
			k := copy(b[n:], d.carry[:nd])
			d.pend = d.carry[k:nd]
			nd = k
		}
		br.Discard(ns)
		n += nd
	}
	if err == nil && d.dec.Done() && len(d.pend) == 0 {
		_, _, err = d.dec.Transform(nil, nil, false)
	}
	if err != nil {
		d.active = false
	}
	return n, err
}

// badMode returns the decoder's error, matching dot.ErrMode, if the block's
// mode or bare policy is none of dot's constants: such a decoder consumes
// nothing, so the loops of Read and WriteTo would never end. The block
// ends with the error, and its input is left unread.
func (d *DotReader) badMode() error {
	if d.dec.Mode <= dot.Raw && d.dec.Bare <= dot.BareNormalize {
		return nil
	}
	d.active = false
	_, _, err := d.dec.Transform(nil, nil, false)
	return err
}

// writeToSize is the size of the buffer WriteTo gathers decoded data in
// before each Write: the size io.Copy would use.
const writeToSize = 32 << 10

var writeToBufs = sync.Pool{New: func() any { return new([writeToSize]byte) }}

// WriteTo decodes the rest of the block into w. It makes io.Copy from a
// DotReader decode whole buffered windows at a time, and it does not
// allocate.
//
// If w is an [io.ReaderFrom] (a *bufio.Writer or *bytes.Buffer, say),
// other than io.Discard, WriteTo returns w.ReadFrom(d), which reads the
// block through Read: what io.Copy does with net/textproto's reader. So
// when w fails, the count returned and how far r.R has been read are
// net/textproto's.
func (d *DotReader) WriteTo(w io.Writer) (written int64, err error) {
	if rf, ok := w.(io.ReaderFrom); ok && w != io.Discard && !d.delegated {
		// A ReadFrom that hands the copy back to d.WriteTo (as io.Copy
		// inside *os.File's does) gets the windows written directly.
		d.delegated = true
		defer func() { d.delegated = false }()
		return rf.ReadFrom(d)
	}
	if err := d.start(); err != nil {
		return 0, err
	}
	if d.lost != nil {
		return 0, d.lost
	}
	if err := d.badMode(); err != nil {
		return 0, err
	}
	buf := writeToBufs.Get().(*[writeToSize]byte)
	defer writeToBufs.Put(buf)
	br := d.r.R
	n := copy(buf[:], d.pend)
	d.pend = nil
	err = d.staleErr()
	for err == nil && !d.dec.Done() {
		if d.overBound() {
			err = d.giveUp()
			break
		}
		if br.Buffered() == 0 {
			if _, err = br.Peek(1); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				err = withReadErr(d.dec.Err(), err)
				break
			}
		}
		src := d.window(br)
		nd, ns := d.transform(buf[n:], src)
		br.Discard(ns)
		n += nd
		// Write out a full buffer, or one without room for the "\r\n" that
		// Raw mode writes whole.
		if n == len(buf) || nd == 0 && ns == 0 {
			m, werr := writeAll(w, buf[:n])
			written += int64(m)
			if werr != nil {
				return written, werr
			}
			n = 0
		}
	}
	if err == nil {
		if _, _, err = d.dec.Transform(nil, nil, false); err == io.EOF {
			err = nil
		}
	}
	// The block has ended or the input failed: as in Read, r is free again.
	d.active = false
	if n > 0 {
		m, werr := writeAll(w, buf[:n])
		written += int64(m)
		if werr != nil {
			return written, werr
		}
	}
	return written, err
}

// window returns the buffered input to decode next: all of R's buffer, or,
// while discarding under a bound, no more than the bound leaves.
func (d *DotReader) window(br *bufio.Reader) []byte {
	src, _ := br.Peek(br.Buffered())
	if d.dropping {
		if room := d.maxDiscard - d.discarded; int64(len(src)) > room {
			src = src[:room]
		}
	}
	return src
}

// transform decodes src into dst and, under a discard bound, counts the
// input consumed after output stopped.
func (d *DotReader) transform(dst, src []byte) (nd, ns int) {
	if d.maxDiscard == 0 {
		nd, ns, _ = d.dec.Transform(dst, src, false)
		return nd, ns
	}
	if d.dropping {
		nd, ns, _ = d.dec.Transform(dst, src, false)
		d.discarded += int64(ns)
		return nd, ns
	}
	pre := d.dec
	nd, ns, _ = d.dec.Transform(dst, src, false)
	if d.dec.Err() != nil {
		d.dropping = true
		k := dotstop.Offset(pre, src[:ns])
		if int64(ns-k) > d.maxDiscard {
			// The window went past the bound: decode it again, only up to
			// the bound. Its output is the same, as it stopped at k.
			d.dec = pre
			nd, ns, _ = d.dec.Transform(dst, src[:k+int(d.maxDiscard)], false)
		}
		d.discarded = int64(ns - k)
	}
	return nd, ns
}

// overBound reports whether d has discarded all its bound allows without
// coming to the end of the block.
func (d *DotReader) overBound() bool {
	return d.dropping && d.discarded >= d.maxDiscard && !d.dec.Done()
}

// giveUp ends the block with ErrNotInStep: its reader and its Reader fail
// from now on, and nothing drains the rest. The Reader fails even if d is
// stale (which staleErr keeps from reading, so from giving up): whichever
// reader consumed R, R is out of step.
func (d *DotReader) giveUp() error {
	d.lost = notInStep(d.dec.Err(), d.maxDiscard)
	d.active = false
	if d.r.lost == nil {
		d.r.lost = d.lost
	}
	return d.lost
}

// closeDot drains the active DotReader, if any, up to its end marker.
func (r *Reader) closeDot() {
	if r.dot != nil && r.dot.active {
		// WriteTo ends at the end of the block or on a read error, as
		// draining with Read would.
		r.dot.WriteTo(io.Discard)
	}
}

// ReadDotBytes reads a whole dot-encoded block (see [Reader.DotReader])
// and returns its decoded data.
func (r *Reader) ReadDotBytes() ([]byte, error) {
	return io.ReadAll(r.DotReader())
}

// writeAll writes b to w with io.Copy's rules: a short write is an error,
// and a count below zero or above len(b) counts nothing and is an error
// with io.Copy's text.
func writeAll(w io.Writer, b []byte) (int, error) {
	n, err := w.Write(b)
	if n < 0 || n > len(b) {
		n = 0
		if err == nil {
			err = errInvalidWrite
		}
	}
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return n, err
}

// errInvalidWrite is io.Copy's error for a Write that returns an
// impossible count; its text is the same.
var errInvalidWrite = errors.New("invalid write result")

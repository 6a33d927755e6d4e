package textproto

import (
	"io"
	"sync"

	"github.com/wirespeed/wirespeed/dot"
)

// DotWriter returns a writer that dot-encodes what is written to it onto
// w (see [Reader.DotReader] for the framing): it turns "\n" line endings
// into "\r\n" and doubles a dot at the start of a line, and Close ends the
// block with a "." line and flushes w.W. Close it before the next call on
// w, which would otherwise close it.
//
// It encodes exactly as net/textproto does ([dot.Compat]), writes to w.W in
// the same pattern (the same bytes, flushed at the same points), and also
// implements [io.ReaderFrom].
func (w *Writer) DotWriter() io.WriteCloser {
	return w.DotWriterMode(dot.Compat)
}

// DotWriterMode is like [Writer.DotWriter] but encodes in the given mode.
// In [dot.Strict] and [dot.Raw] mode the input must consist of "\r\n"-ended
// lines: a bare CR or LF fails the Write with a [*dot.SyntaxError] instead
// of being turned into a line break (a CR that ends the data fails
// Close: until then an LF may follow), and Close then reports that error
// and writes no end marker (the data cannot be ended safely; drop the
// connection). Close adds a final "\r\n" if the last line is open.
//
// A Strict or Raw writer is used once: after Close, Write, ReadFrom and
// another Close fail with an error matching [dot.ErrClosed] and write
// nothing (net/textproto's writer, and a Compat one, write on). And once
// a Strict or Raw writer has failed before its end line (a bare CR or LF
// in its input, an error writing to W, or an error other than io.EOF
// from the source of its ReadFrom, as in io.Copy), the data on the wire
// is unfinished: from then on its Close writes no end line, and every
// method of w that writes (PrintfLine, DotWriter, DotWriterMode and the
// writers they return, WriteChunk, ChunkWriter) writes nothing and
// returns that error (for a source error, one that matches it with
// errors.Is). Such a connection can only be dropped; use a new Writer for
// a new one. (A source that fails is ReadFrom's to see; a caller that
// writes with Write must not Close after its own source fails.)
//
// A mode that is none of dot's constants fails every Write, ReadFrom and
// Close with an error matching [dot.ErrMode] and writes nothing, not even
// an end line; the Writer's other calls write on.
func (w *Writer) DotWriterMode(mode dot.Mode) io.WriteCloser {
	w.closeDot()
	w.closeChunks()
	// Each block gets its own writer: one used after its block, like
	// net/textproto's, goes on writing to w.W in its own state.
	w.dot = &dotWriter{w: w, enc: dot.Encoder{Mode: mode}, open: true}
	return w.dot
}

func (w *Writer) closeDot() {
	if w.dot != nil && w.dot.open {
		w.dot.Close()
	}
}

// Dot writers are io.ReaderFrom, so that io.Copy encodes whole windows.
var (
	_ io.WriteCloser = (*dotWriter)(nil)
	_ io.ReaderFrom  = (*dotWriter)(nil)
)

type dotWriter struct {
	w    *Writer
	enc  dot.Encoder
	open bool        // not yet closed
	done bool        // closed (Strict and Raw refuse to write after it)
	one  [2]byte     // room for one input byte's output
	end  [5]byte     // room for the end marker
	fin  dot.Encoder // a copy of enc that writes the end marker
}

// Write encodes b straight into the free space of w.W's buffer, and flushes
// it when it is full, as WriteByte would. When one byte of room is left, it
// writes the next input byte's output with WriteByte, as net/textproto
// does, so w.W flushes at the same points.
func (d *dotWriter) Write(b []byte) (n int, err error) {
	if err := d.refuse(); err != nil {
		return 0, err
	}
	n, err = d.write(b)
	d.fail(err)
	return n, err
}

// refuse returns the error that stops d from writing anything: the
// Writer's sticky error, or dot.ErrClosed for a Strict or Raw writer
// that has been closed.
func (d *dotWriter) refuse() error {
	if d.w.err != nil {
		return d.w.err
	}
	if d.done && (d.enc.Mode == dot.Strict || d.enc.Mode == dot.Raw) {
		return errClosed
	}
	return nil
}

// fail makes err, an error of a Strict or Raw writer, sticky on its
// Writer: the block it was writing is unfinished. A Compat writer does
// what net/textproto's does, which keeps no such state, and one of a mode
// that is none of dot's constants writes nothing (its encoder fails every
// call with dot.ErrMode), so it leaves nothing unfinished.
func (d *dotWriter) fail(err error) {
	if err != nil && (d.enc.Mode == dot.Strict || d.enc.Mode == dot.Raw) {
		d.w.err = err
	}
}

// errClosed is the error of a Strict or Raw DotWriter used after Close.
var errClosed error = &closedError{}

type closedError struct{}

func (*closedError) Error() string { return "textproto: " + dot.ErrClosed.Error() }
func (*closedError) Unwrap() error { return dot.ErrClosed }

func (d *dotWriter) write(b []byte) (n int, err error) {
	bw := d.w.W
	if len(b) > 0 {
		// A failed bufio.Writer fails every write: WriteByte would fail
		// on the first byte.
		if _, err = bw.Write(nil); err != nil {
			d.failedByte(b[0])
			return 0, err
		}
	}
	for n < len(b) {
		free := bw.Available()
		if free == 0 && bw.Buffered() > 0 {
			// The buffer is full: WriteByte would flush it before the next
			// byte, and fail the Write without counting that byte if the
			// flush fails. Do the same, without encoding a byte alone.
			if err = bw.Flush(); err != nil {
				d.failedByte(b[n])
				return n, err
			}
			continue
		}
		if free >= 2 {
			dst := bw.AvailableBuffer()[:free]
			nd, ns, terr := d.enc.Transform(dst, b[n:], false)
			if nd > 0 {
				if _, err = bw.Write(dst[:nd]); err != nil {
					return n, err
				}
			}
			n += ns
			if terr != nil && terr != dot.ErrShortDst {
				return n, terr
			}
			continue
		}
		out := d.one[:]
		nd, ns, terr := d.enc.Transform(out, b[n:n+1], false)
		if terr != nil {
			return n, terr
		}
		if nd == 2 {
			bw.WriteByte(out[0]) // an error here shows again below
		}
		if nd > 0 {
			if err = bw.WriteByte(out[nd-1]); err != nil {
				return n, err
			}
		}
		n += ns
	}
	return n, nil
}

// failedByte moves a Compat writer's state over c, a byte whose write
// failed, as net/textproto's writer does: it moves its state before it
// writes the byte, and does not count the byte. (So the two go on alike
// if the caller resets W and writes on.) A Strict or Raw writer fails for
// good instead.
func (d *dotWriter) failedByte(c byte) {
	if d.enc.Mode == dot.Compat {
		d.enc.Transform(d.one[:], []byte{c}, false)
	}
}

// readFromSize is the read size of ReadFrom: the size io.Copy would use.
const readFromSize = 32 << 10

var readFromBufs = sync.Pool{New: func() any { return new([readFromSize]byte) }}

// ReadFrom encodes everything src yields until io.EOF. It makes io.Copy
// into a DotWriter allocation-free. If src fails with another error,
// ReadFrom returns it, and a Strict or Raw writer then fails for good (see
// [Writer.DotWriterMode]).
func (d *dotWriter) ReadFrom(src io.Reader) (n int64, err error) {
	if err := d.refuse(); err != nil {
		return 0, err
	}
	buf := readFromBufs.Get().(*[readFromSize]byte)
	defer readFromBufs.Put(buf)
	for {
		nr, rerr := src.Read(buf[:])
		if nr > 0 {
			nw, werr := d.Write(buf[:nr])
			n += int64(nw)
			if werr != nil {
				return n, werr
			}
		}
		if rerr != nil {
			if rerr == io.EOF {
				return n, nil
			}
			// The data is cut short: a Strict or Raw writer must not
			// end it as if whole.
			d.fail(&sourceError{rerr})
			return n, rerr
		}
	}
}

// sourceError is the sticky error of a Strict or Raw DotWriter whose
// ReadFrom source failed: it matches the source's error.
type sourceError struct{ err error }

func (e *sourceError) Error() string {
	return "textproto: dot data cut short by its source: " + e.err.Error()
}
func (e *sourceError) Unwrap() error { return e.err }

// Close writes the end of the data, as net/textproto does: a line ending
// if the last line is open, then ".\r\n", and flushes w.W. Like
// net/textproto, it writes the end again if called again (in Compat mode;
// see [Writer.DotWriterMode] for Strict and Raw).
func (d *dotWriter) Close() error {
	if err := d.refuse(); err != nil {
		d.open = false
		return err
	}
	err := d.close()
	d.open, d.done = false, true
	d.fail(err)
	return err
}

func (d *dotWriter) close() error {
	bw := d.w.W
	d.fin = d.enc // the end marker does not change the writer's state
	n, _, err := d.fin.Transform(d.end[:], nil, true)
	if err != nil {
		return err
	}
	// Write the end as net/textproto does, the line ending a byte at a
	// time and then ".\r\n", so that a bufio.Writer smaller than the end
	// marker writes through to its writer in the same pieces. (An error
	// here shows again in Flush.)
	end := d.end[:n]
	for len(end) > len(".\r\n") {
		bw.WriteByte(end[0])
		end = end[1:]
	}
	bw.Write(end)
	return bw.Flush()
}

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
// of being turned into a line break, and Close then reports that error and
// writes no end marker (the data cannot be ended safely; drop the
// connection). Close adds a final "\r\n" if the last line is open.
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
	one  [2]byte     // room for one input byte's output
	end  [5]byte     // room for the end marker
	fin  dot.Encoder // a copy of enc that writes the end marker
}

// Write encodes b straight into the free space of w.W's buffer, and flushes
// it when it is full, as WriteByte would. When one byte of room is left, it
// writes the next input byte's output with WriteByte, as net/textproto
// does, so w.W flushes at the same points.
func (d *dotWriter) Write(b []byte) (n int, err error) {
	bw := d.w.W
	for n < len(b) {
		free := bw.Available()
		if free == 0 && bw.Buffered() > 0 {
			// The buffer is full: WriteByte would flush it before the next
			// byte, and fail the Write without counting that byte if the
			// flush fails. Do the same, without encoding a byte alone.
			if err = bw.Flush(); err != nil {
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

// readFromSize is the read size of ReadFrom: the size io.Copy would use.
const readFromSize = 32 << 10

var readFromBufs = sync.Pool{New: func() any { return new([readFromSize]byte) }}

// ReadFrom encodes everything src yields until io.EOF. It makes io.Copy
// into a DotWriter allocation-free.
func (d *dotWriter) ReadFrom(src io.Reader) (n int64, err error) {
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
				rerr = nil
			}
			return n, rerr
		}
	}
}

// Close writes the end of the data, as net/textproto does: a line ending
// if the last line is open, then ".\r\n", and flushes w.W. Like
// net/textproto, it writes the end again if called again.
func (d *dotWriter) Close() error {
	d.open = false
	bw := d.w.W
	d.fin = d.enc // the end marker does not change the writer's state
	n, _, err := d.fin.Transform(d.end[:], nil, true)
	if err != nil {
		return err
	}
	bw.Write(d.end[:n]) // an error here shows again in Flush
	return bw.Flush()
}

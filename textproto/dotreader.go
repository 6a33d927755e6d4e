package textproto

import (
	"io"
	"sync"

	"github.com/wirespeed/wirespeed/dot"
)

// DotReader returns a new [Reader] that satisfies Reads using the
// decoded text of a dot-encoded block read from r.
// The returned Reader is only valid until the next call
// to a method on r.
//
// Dot encoding is a common framing used for data blocks
// in text protocols such as SMTP.  The data consists of a sequence
// of lines, each of which ends in "\r\n".  The sequence itself
// ends at a line containing just a dot: ".\r\n".  Lines beginning
// with a dot are escaped with an additional dot to avoid
// looking like the end of the sequence.
//
// The decoded form returned by the Reader's Read method
// rewrites the "\r\n" line endings into the simpler "\n",
// removes leading dot escapes if present, and stops with error [io.EOF]
// after consuming (and discarding) the end-of-sequence line.
//
// It decodes exactly as net/textproto does ([dot.Compat]), consumes r.R
// exactly as far, and also implements [io.WriterTo]. With a
// [Limits.MaxDotBytes] limit, a larger block fails with [dot.ErrTooLarge]
// after the whole block has been consumed.
func (r *Reader) DotReader() io.Reader {
	return r.DotReaderMode(dot.Compat)
}

// DotReaderMode is like [Reader.DotReader] but decodes in the given mode:
// [dot.Strict] accepts only "\r\n" line endings and ends only at
// "\r\n.\r\n" (the SMTP-smuggling-safe framing of RFC 5321), and [dot.Raw]
// frames the same way but keeps "\r\n" in the decoded data. A bare CR or LF
// in those modes fails the read with a [*dot.SyntaxError] once the block has
// been consumed up to its end marker, so the connection stays in step.
func (r *Reader) DotReaderMode(mode dot.Mode) io.Reader {
	// begin closes an open block, and skips what a limit error left unread;
	// an error it returns (or owes from the last call) is the block's.
	err := r.begin()
	// The reader is only valid until the next call to a method on r, so
	// one allocation serves every block read through r.
	if r.dot == nil {
		r.dot = new(dotReader)
	}
	*r.dot = dotReader{r: r, dec: dot.Decoder{Mode: mode, MaxSize: r.lim.MaxDotBytes}, active: true, err: err}
	return r.dot
}

type dotReader struct {
	r      *Reader
	dec    dot.Decoder
	active bool  // not yet at the end of the block or an error
	err    error // a read error that came before the block: its first result
}

// early returns the read error that came before the block, once.
func (d *dotReader) early() error {
	err := d.err
	d.err = nil
	d.active = false
	return err
}

// Read decodes into b. Like net/textproto, it fills b completely unless the
// block ends or the input fails, and it reads r.R only through its buffer:
// bufio's Peek and Discard, so the bytes after the end marker stay unread.
func (d *dotReader) Read(b []byte) (n int, err error) {
	if d.err != nil {
		return 0, d.early()
	}
	br := d.r.R
	for n < len(b) && !d.dec.Done() {
		if br.Buffered() == 0 {
			if _, err = br.Peek(1); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				break
			}
		}
		src, _ := br.Peek(br.Buffered())
		nd, ns, _ := d.dec.Transform(b[n:], src, false)
		br.Discard(ns)
		n += nd
	}
	if err == nil && d.dec.Done() {
		_, _, err = d.dec.Transform(nil, nil, false)
	}
	if err != nil {
		d.active = false
	}
	return n, err
}

// writeToSize is the size of the buffer WriteTo gathers decoded data in
// before each Write: the size io.Copy would use.
const writeToSize = 32 << 10

var writeToBufs = sync.Pool{New: func() any { return new([writeToSize]byte) }}

// WriteTo decodes the rest of the block into w. It makes io.Copy from a
// DotReader decode whole buffered windows at a time, and it does not
// allocate.
func (d *dotReader) WriteTo(w io.Writer) (written int64, err error) {
	if d.err != nil {
		return 0, d.early()
	}
	buf := writeToBufs.Get().(*[writeToSize]byte)
	defer writeToBufs.Put(buf)
	br := d.r.R
	n := 0
	for !d.dec.Done() {
		if br.Buffered() == 0 {
			if _, err = br.Peek(1); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				break
			}
		}
		src, _ := br.Peek(br.Buffered())
		nd, ns, _ := d.dec.Transform(buf[n:], src, false)
		br.Discard(ns)
		n += nd
		if n == len(buf) {
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

// closeDot drains the active DotReader, if any, up to its end marker.
func (r *Reader) closeDot() {
	if r.dot != nil && r.dot.active {
		// WriteTo ends at the end of the block or on a read error, as
		// draining with Read would.
		r.dot.WriteTo(io.Discard)
	}
}

// ReadDotBytes reads a dot-encoding and returns the decoded data.
//
// See the documentation for the [Reader.DotReader] method for details about dot-encoding.
func (r *Reader) ReadDotBytes() ([]byte, error) {
	return io.ReadAll(r.DotReader())
}

// writeAll writes b to w with io.Copy's rules: a short write is an error.
func writeAll(w io.Writer, b []byte) (int, error) {
	n, err := w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return n, err
}

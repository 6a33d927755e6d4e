package textproto

import (
	"bytes"
	"errors"
	"io"
	"math/bits"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/dot"
)

// ChunkOptions are the rules for the data of one message sent in BDAT
// chunks (RFC 3030 CHUNKING), for [Reader.Chunks]. A zero limit takes the
// Reader's (see [Limits]); a negative one sets no limit.
type ChunkOptions struct {
	// Binary is set for a message sent with BODY=BINARYMIME: its data is
	// taken as it is, without the line rules below.
	Binary bool

	// Bare says what to do with a bare CR or LF (one that is not part of
	// a CRLF) in a message that is not Binary, as it does for dot.Strict:
	// dot.BareReject fails the message with a *dot.SyntaxError,
	// dot.BareKeep keeps it as data, dot.BareNormalize turns a bare LF
	// into a CRLF (and keeps a bare CR as data).
	Bare dot.BarePolicy

	// MaxBytes bounds the size of the message data returned, all chunks
	// together, as Limits.MaxDotBytes does for a dot block: a larger
	// message fails with dot.ErrTooLarge.
	MaxBytes int64

	// MaxLineBytes bounds the length of each line of a message that is
	// not Binary, CRLF not counted (with dot.BareNormalize, a bare LF ends
	// a line too), as Limits.MaxLineBytes does: a longer line fails the
	// message with dot.ErrLineTooLong.
	MaxLineBytes int
}

// ErrChunkAfterLast is the error of a chunk read with [Chunks.Next] after
// the LAST chunk of the message.
var ErrChunkAfterLast = errors.New("textproto: BDAT chunk after the LAST one")

// Chunks reads the data of one message sent in BDAT chunks, the
// CHUNKING of RFC 3030: the server reads each BDAT command line itself,
// then calls [Chunks.Next] with its size and LAST flag to read the chunk's
// bytes, which follow the command line exactly, with no framing.
//
// The rules of opt (and the Reader's limits) hold for the whole message:
// the size limit counts the data of all chunks, and a line may run over
// chunk boundaries. A chunk is always read to its end, even when its data
// is rejected, so the session stays in step and the next command reads
// correctly: a problem found in a chunk ends that chunk with an error in
// place of io.EOF, and every later chunk of the message is read and
// discarded and ends with an error too. The error a chunk ends with
// matches every kind of problem found up to its end, too large taking
// precedence (see the package documentation on errors), so the reply to
// the LAST chunk can name the one that matters. The data returned before stops where the
// first problem was found (at the latest at the end of its line).
//
// Data is returned as it was sent, CRLF line endings included, except
// that dot.BareNormalize turns each bare LF into CRLF.
//
// Chunks allocates once per message; its chunk readers allocate nothing.
func (r *Reader) Chunks(opt ChunkOptions) *Chunks {
	r.closeChunk()
	c := &Chunks{r: r, binary: opt.Binary, bare: opt.Bare}
	c.maxBytes, c.maxLine = opt.MaxBytes, opt.MaxLineBytes
	if c.maxBytes == 0 {
		c.maxBytes = r.lim.MaxDotBytes
	}
	if c.maxLine == 0 {
		c.maxLine = r.lim.MaxLineBytes
	}
	c.maxBytes, c.maxLine = max(c.maxBytes, 0), max(c.maxLine, 0)
	c.scan = !c.binary && (c.bare != dot.BareKeep || c.maxLine > 0)
	if c.scan && c.bare != dot.BareNormalize {
		c.useDec = true
		c.dec = dot.Decoder{Mode: dot.Raw, Bare: c.bare, MaxLine: c.maxLine}
	}
	if c.scan && c.bare == dot.BareNormalize {
		c.det = dot.Decoder{Mode: dot.Raw, MaxLine: c.maxLine}
		c.detSync = true
	}
	c.chunk.c = c
	return c
}

// Chunks reads one message's BDAT chunks; see [Reader.Chunks].
type Chunks struct {
	r        *Reader
	chunk    Chunk // the current chunk, reused for every chunk
	binary   bool
	bare     dot.BarePolicy
	maxBytes int64 // 0: none
	maxLine  int   // 0: none
	scan     bool  // the line rules must be checked
	useDec   bool  // by dec (all but BareNormalize)
	dec      dot.Decoder
	decBase  int64              // the offset in the data where dec started
	scratch  *[writeToSize]byte // from writeToBufs, for the message
	det      dot.Decoder        // BareNormalize: finds windows without a bare CR or LF
	detSync  bool               // det is at the current position, from a line start

	size  int64 // data bytes returned
	off   int64 // data bytes consumed, of all chunks
	extra int64 // bytes added by normalization: the data is off+extra bytes
	ended bool  // the LAST chunk has been read
	rerr  error // the read error that cut a chunk short
	derr  error // the problems with the data, as of the end of the last chunk
	dfor  uint8 // the problems derr reports

	// The line rules' state.
	found        uint8 // the kinds of problems found (dot's precedence)
	line         int64 // bytes of the current line so far, a pending CR not counted
	cr           bool  // the last byte consumed was a CR
	lfOff, crOff int64 // offsets of the first bare LF and bare CR
}

// Problems with the data, as bits of Chunks.found.
const (
	chunkTooLarge uint8 = 1 << iota
	chunkLineTooLong
	chunkBareLF
	chunkBareCR
)

// A Chunk reads the data of one BDAT chunk: see [Chunks.Next]. It
// implements [io.WriterTo], which writes straight out of the Reader's
// buffer.
type Chunk struct {
	c         *Chunks
	left      int64 // bytes of the chunk not yet consumed
	last      bool
	afterLast bool    // the message had ended before it
	open      bool    // not yet ended
	carry     [2]byte // room for a CRLF too big for the caller's buffer (BareNormalize)
	pend      []byte  // what of carry is still to be returned
}

var _ io.WriterTo = (*Chunk)(nil)

// Next returns the reader of the next chunk of the message: size bytes,
// the LAST one if last is set. It first reads what is left of the chunk
// before, which Next thus ends. The reader is valid until the next call
// to Next or to another method of the Reader, which also reads what is
// left of the chunk first.
//
// A chunk after the LAST one is read and discarded, and fails with
// [ErrChunkAfterLast]. A negative size is taken as 0.
func (c *Chunks) Next(size int64, last bool) *Chunk {
	// Finish what came before, as every Reader call does: the chunk
	// before, an open dot block, what a limit error left unread. An error
	// owed from before ends this chunk.
	err := c.r.begin()
	k := &c.chunk
	*k = Chunk{c: c, left: max(size, 0), last: last, open: true, afterLast: c.ended}
	if err != nil {
		c.rerr = err
		k.open = false
		return k
	}
	c.r.bdat = k
	return k
}

// Size returns the number of data bytes of the message returned so far,
// all chunks together (at most the message's MaxBytes).
func (c *Chunks) Size() int64 { return c.size - int64(len(c.chunk.pend)) }

// Err returns the error the last chunk ended with, if not io.EOF: the
// problems with the data found so far, as described at [Reader.Chunks],
// or the read error that cut a chunk short (the session is then out of
// step). Once set, it ends every later chunk of the message.
func (c *Chunks) Err() error {
	if c.rerr != nil {
		return c.rerr
	}
	return c.derr
}

// closeChunk reads the rest of the open chunk, if any.
func (r *Reader) closeChunk() {
	if k := r.bdat; k != nil {
		r.bdat = nil
		if k.open {
			k.WriteTo(io.Discard)
		}
	}
}

// window returns the next bytes of the chunk in R's buffer, reading more
// if it holds none. On a read error it ends the chunk.
func (k *Chunk) window() ([]byte, error) {
	br := k.c.r.R
	if br.Buffered() == 0 {
		if _, err := br.Peek(1); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			k.c.rerr = err
			k.finish()
			return nil, err
		}
	}
	p, _ := br.Peek(int(min(int64(br.Buffered()), k.left)))
	return p, nil
}

// consume drops n bytes of the chunk from R's buffer, and checks the size
// of the data (returned or not) against MaxBytes.
func (k *Chunk) consume(n int) {
	c := k.c
	c.r.R.Discard(n)
	k.left -= int64(n)
	c.off += int64(n)
	if c.maxBytes > 0 && c.off+c.extra > c.maxBytes {
		c.found |= chunkTooLarge
	}
}

// rejected reports whether the rest of the chunk is to be discarded.
func (k *Chunk) rejected() bool {
	return k.afterLast || k.c.found != 0 || k.c.rerr != nil
}

// finish marks the chunk as ended.
func (k *Chunk) finish() {
	k.open = false
	if k.c.r.bdat == k {
		k.c.r.bdat = nil
	}
}

// end ends the chunk after its last byte and returns its error.
func (k *Chunk) end() error {
	c := k.c
	k.finish()
	if k.afterLast {
		return ErrChunkAfterLast
	}
	if k.last {
		c.ended = true
		if c.useDec {
			c.decEnd()
		} else if c.scan && c.cr {
			// The data ends in a bare CR.
			c.cr = false
			c.line++
			c.bareByte(chunkBareCR, c.off-1)
			c.checkLine()
		}
	}
	if c.found != c.dfor {
		c.derr, c.dfor = c.dataErr(), c.found
	}
	if c.ended && c.scratch != nil {
		writeToBufs.Put(c.scratch)
		c.scratch = nil
	}
	return k.finalErr()
}

// finalErr is what the chunk ends with: io.EOF or its error.
func (k *Chunk) finalErr() error {
	switch {
	case k.c.rerr != nil:
		return k.c.rerr
	case k.afterLast:
		return ErrChunkAfterLast
	case k.c.derr != nil:
		return k.c.derr
	}
	return io.EOF
}

// allowed returns how many of the n bytes of output now ready may be
// returned: no more than MaxBytes allows.
func (c *Chunks) allowed(n int) int {
	if c.maxBytes > 0 && c.size+int64(n) > c.maxBytes {
		return int(c.maxBytes - c.size)
	}
	return n
}

// pass handles src, bytes of the chunk that are returned as they are:
// it checks the line rules if need be and returns the part that may be
// returned: none after a problem, and up to the first problem in src.
func (c *Chunks) pass(src []byte) []byte {
	if c.found != 0 {
		if c.scan {
			c.check(src)
		}
		return nil
	}
	good := len(src)
	if c.scan {
		good = c.check(src)
	}
	m := c.allowed(good)
	c.size += int64(m)
	return src[:m]
}

// Read reads data of the chunk into b. It returns io.EOF at the end of
// the chunk, or the message's error (see [Reader.Chunks]).
func (k *Chunk) Read(b []byte) (n int, err error) {
	c := k.c
	n = copy(b, k.pend)
	k.pend = k.pend[n:]
	if !k.open {
		if n > 0 {
			return n, nil
		}
		return 0, k.finalErr()
	}
	normalize := c.bare == dot.BareNormalize && !c.binary
	for n < len(b) && k.left > 0 {
		src, err := k.window()
		if err != nil {
			return n, err
		}
		switch {
		case k.rejected():
			// Read on to the end of the chunk, returning nothing.
			if c.scan && !k.afterLast {
				c.check(src)
			}
			k.consume(len(src))
		case !normalize:
			src = src[:min(len(src), len(b)-n)]
			n += copy(b[n:], c.pass(src))
			k.consume(len(src))
		case c.normClean(src[:min(len(src), len(b)-n)]):
			src = src[:min(len(src), len(b)-n)]
			m := c.allowed(len(src))
			n += copy(b[n:], src[:m])
			c.size += int64(m)
			k.consume(len(src))
		default:
			nd, ns := c.normalize(b[n:], src)
			if nd == 0 && ns == 0 {
				// One byte of room, and a bare LF next.
				nd, ns = c.normalize(k.carry[:], src)
				m := copy(b[n:], k.carry[:nd])
				k.pend = k.carry[m:nd]
				nd = m
			}
			n += nd
			c.resync(src[:ns])
			k.consume(ns)
		}
	}
	if k.left == 0 && len(k.pend) == 0 && k.open {
		return n, k.end()
	}
	return n, nil
}

// WriteTo writes the rest of the chunk's data to w, straight out of the
// Reader's buffer (through a pooled buffer with dot.BareNormalize), and
// returns the message's error (see [Reader.Chunks]), or nil at the end of
// a good chunk. It does not allocate.
func (k *Chunk) WriteTo(w io.Writer) (written int64, err error) {
	c := k.c
	if len(k.pend) > 0 {
		m, werr := writeAll(w, k.pend)
		written += int64(m)
		k.pend = k.pend[m:]
		if werr != nil {
			return written, werr
		}
	}
	if k.open {
		var buf *[writeToSize]byte
		if c.bare == dot.BareNormalize && !c.binary {
			buf = c.buf()
		}
		for k.left > 0 {
			src, err := k.window()
			if err != nil {
				return written, err
			}
			var out []byte
			slow := false // normalize wrote out: resync after it is written
			switch {
			case k.rejected():
				if c.scan && !k.afterLast {
					c.check(src)
				}
			case buf == nil:
				out = c.pass(src)
			case c.normClean(src):
				out = src[:c.allowed(len(src))]
				c.size += int64(len(out))
			default:
				var ns int
				var nd int
				nd, ns = c.normalize(buf[:], src)
				out, src = buf[:nd], src[:ns]
				slow = true
			}
			var werr error
			if len(out) > 0 {
				var m int
				m, werr = writeAll(w, out)
				written += int64(m)
			}
			if slow {
				c.resync(src) // it uses buf
			}
			k.consume(len(src))
			if werr != nil {
				return written, werr
			}
		}
		k.end()
	}
	if err := k.finalErr(); err != io.EOF {
		return written, err
	}
	return written, nil
}

// normalize copies src into dst, turning each bare LF into CRLF, as far as
// dst has room, and checks the line rules on what it consumes. It returns
// the bytes written and consumed; output stops at the first problem.
func (c *Chunks) normalize(dst, src []byte) (nd, ns int) {
	for ns < len(src) && nd < len(dst) {
		if c.found == 0 {
			// Clean CRLF text is copied as it is.
			n := c.clean(src[ns:min(len(src), ns+len(dst)-nd)])
			m := c.allowed(n)
			nd += copy(dst[nd:], src[ns:ns+m])
			c.size += int64(m)
			ns += n
			if ns == len(src) || nd == len(dst) {
				break
			}
		}
		j := bytes.IndexByte(src[ns:], '\n')
		if j < 0 {
			j = len(src) - ns
		}
		if j > 0 {
			// The bytes before the next LF, or the rest.
			piece := src[ns : ns+min(j, len(dst)-nd)]
			rejected := c.found != 0
			good := c.checkLines(piece, c.off+int64(ns))
			if !rejected {
				m := c.allowed(good)
				nd += copy(dst[nd:], piece[:m])
				c.size += int64(m)
			}
			ns += len(piece)
			continue
		}
		// An LF.
		out := "\n"
		if !c.cr {
			out = "\r\n"
		}
		if len(out) > len(dst)-nd {
			break
		}
		rejected := c.found != 0
		if c.checkLines(src[ns:ns+1], c.off+int64(ns)) == 1 && !rejected {
			m := c.allowed(len(out))
			nd += copy(dst[nd:], out[:m])
			c.size += int64(m)
		}
		ns++
	}
	return nd, ns
}

// check applies the line rules to src, the next bytes of the message
// (at offset c.off), and returns how many of them come before the first
// problem found in it (len(src) if none); the state carries over to the
// next call.
func (c *Chunks) check(src []byte) int {
	if c.useDec {
		return c.decCheck(src)
	}
	return c.checkAt(src, c.off)
}

// decCheck is check with dot's kernels: a Raw dot.Decoder with the same
// Bare policy and MaxLine sees the same bare CRs and LFs and line lengths
// (counted on the wire) as the line rules of BDAT data, which is not
// dot-stuffed. Its output is dropped, and where it finds an end marker
// (BDAT data may hold "\r\n.\r\n") it is started again, at the start of
// a line, as the data goes on.
func (c *Chunks) decCheck(src []byte) int {
	buf := c.buf()
	clean := c.dec.Err() == nil
	base, n := c.off, len(src)
	for len(src) > 0 {
		_, ns, err := c.dec.Transform(buf[:], src, false)
		src, base = src[ns:], base+int64(ns)
		if c.dec.Done() {
			c.harvest(err)
			c.dec.Reset()
			c.decBase = base
		}
	}
	if err := c.dec.Err(); err != nil {
		c.harvest(err)
		if clean {
			return 0 // this window is not returned
		}
	}
	if c.found != 0 && clean {
		return 0
	}
	return n
}

// decEnd checks the end of the data with the decoder: a CR there is bare.
func (c *Chunks) decEnd() {
	if !c.dec.Done() {
		_, _, err := c.dec.Transform(c.buf()[:], endMarker, true)
		c.harvest(err)
	}
}

var endMarker = []byte("\r\n.\r\n")

// normClean reports whether src, the next bytes of a BareNormalize
// message, is CRLF text without a bare CR or LF and with no line too long:
// then it is returned as it is. It checks with det, a Raw dot.Decoder
// that rejects bare CRs and LFs and counts line lengths as BareNormalize
// does where there are none, and it keeps the line state up to date. A
// window that is not clean goes to normalize, then resync.
func (c *Chunks) normClean(src []byte) bool {
	if c.found != 0 || !c.detSync || c.det.Err() != nil || len(src) == 0 {
		return false
	}
	if c.run(&c.det, src) {
		c.detSync = false
		return false
	}
	// Clean: a CR pending before src was followed by its LF.
	tail := src
	if i := bytes.LastIndexByte(src, '\n'); i >= 0 {
		tail, c.line, c.cr = src[i+1:], 0, false
	}
	c.line += int64(len(tail))
	if c.cr = len(tail) > 0 && tail[len(tail)-1] == '\r'; c.cr {
		c.line--
	}
	return true
}

// run feeds src to the decoder d, whose output is dropped, and starts it
// again after each end marker (BDAT data is not dot-encoded). It reports
// whether d found a problem.
func (c *Chunks) run(d *dot.Decoder, src []byte) (problem bool) {
	buf := c.buf()
	for len(src) > 0 {
		_, ns, err := d.Transform(buf[:], src, false)
		src = src[ns:]
		if d.Done() {
			problem = problem || err != io.EOF
			d.Reset()
		}
	}
	return problem || d.Err() != nil
}

// resync brings det in step again after normalize has handled p: from
// the start of the line after the last LF in p, where BareNormalize starts
// a line. Without one, det stays out of step until the next LF.
func (c *Chunks) resync(p []byte) {
	if c.det.Mode != dot.Raw {
		return // not BareNormalize with line rules
	}
	i := bytes.LastIndexByte(p, '\n')
	if i < 0 {
		return
	}
	c.det.Reset()
	c.detSync = true
	c.run(&c.det, p[i+1:])
}

// buf returns the message's scratch buffer, taken from writeToBufs on
// first use and put back after the LAST chunk.
func (c *Chunks) buf() *[writeToSize]byte {
	if c.scratch == nil {
		c.scratch = writeToBufs.Get().(*[writeToSize]byte)
	}
	return c.scratch
}

// harvest records the problems of a decoder's error.
func (c *Chunks) harvest(err error) {
	if err == nil || err == io.EOF {
		return
	}
	if multi, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range multi.Unwrap() {
			c.harvest(e)
		}
		return
	}
	var se *dot.SyntaxError
	switch {
	case errors.Is(err, dot.ErrLineTooLong):
		c.found |= chunkLineTooLong
	case errors.As(err, &se) && se.Err == dot.ErrBareLF:
		c.bareByte(chunkBareLF, c.decBase+se.Offset)
	case errors.As(err, &se):
		c.bareByte(chunkBareCR, c.decBase+se.Offset)
	}
}

// checkAt is check for src at offset base of the message. Clean CRLF text
// is checked a word at a time (clean); from a word that is not, it goes a
// line at a time (checkLines) up to the next LF, then back.
func (c *Chunks) checkAt(src []byte, base int64) int {
	good := len(src)
	for i := 0; i < len(src); {
		if c.found == 0 {
			i += c.clean(src[i:])
			if i == len(src) {
				break
			}
		}
		end := len(src)
		if j := bytes.IndexByte(src[i:], '\n'); j >= 0 {
			end = i + j + 1
		}
		if g := c.checkLines(src[i:end], base+int64(i)); g < end-i && good == len(src) {
			good = i + g
		}
		i = end
	}
	return good
}

const (
	lo8 = 0x0101010101010101
	lo7 = 0x7f7f7f7f7f7f7f7f
	cr8 = '\r' * lo8
	lf8 = '\n' * lo8
)

// bytesEqual returns a word with the high bit of each byte set where the
// byte of x equals the byte of c8 (and no other bit).
func bytesEqual(x, c8 uint64) uint64 {
	y := x ^ c8
	return ^((y&lo7 + lo7) | y | lo7)
}

// clean checks whole words of b while they are CRLF text with lines no
// longer than MaxLineBytes: each CR is followed by an LF and each LF
// follows a CR. It returns how many bytes it checked (a multiple of 8):
// it stops in front of the first word that is not clean, or holds the
// byte too many of a line, which checkLines then looks at.
func (c *Chunks) clean(b []byte) int {
	max := int64(c.maxLine)
	if max == 0 {
		max = 1<<63 - 1
	} else if max < 8 {
		return 0 // several lines per word: checkLines counts them
	}
	var carry uint64 // 0x80: the byte before b is a CR
	if c.cr {
		carry = 0x80
	}
	start := -c.line - int64(carry>>7) // where the current line starts
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
			uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
		cr, lf := bytesEqual(x, cr8), bytesEqual(x, lf8)
		if lf != cr<<8|carry {
			break // a bare CR or LF
		}
		next := cr >> 56 // 0x80 if the word ends in a CR
		if lf == 0 {
			if int64(i+8)-start-int64(next>>7) > max {
				break
			}
		} else {
			first := int64(i + bits.TrailingZeros64(lf)>>3)
			if first-start-1 > max {
				break
			}
			// The other lines in the word are shorter than 8 bytes.
			start = int64(i+7-bits.LeadingZeros64(lf)>>3) + 1
		}
		carry = next
	}
	c.cr = carry != 0
	c.line = int64(i) - start - int64(carry>>7)
	return i
}

// checkLines is check one line at a time, with bytes.IndexByte and
// bytes.Count, for src at offset base of the message.
func (c *Chunks) checkLines(src []byte, base int64) int {
	good := len(src)
	i := 0
	for i < len(src) {
		end := len(src)
		j := bytes.IndexByte(src[i:], '\n')
		if j >= 0 {
			end = i + j
		}
		seg := src[i:end]
		before := c.found
		if len(seg) > 0 {
			if c.cr {
				// The CR before this window is bare.
				c.cr = false
				c.line++
				c.bareByte(chunkBareCR, base+int64(i)-1)
			}
			last := seg[len(seg)-1] == '\r'
			if k := bytes.Count(seg, crByte); k > 1 || k == 1 && !last {
				c.bareByte(chunkBareCR, base+int64(i+bytes.IndexByte(seg, '\r')))
			}
			n := len(seg)
			if last {
				n--
			}
			c.cr = last
			c.line += int64(n)
			c.checkLine()
			if before == 0 && c.found != 0 && good == len(src) {
				good = i // output stops at the start of the line's part
			}
		}
		if j >= 0 {
			before = c.found
			switch {
			case c.cr:
				c.cr = false
				c.line = 0
			case c.bare == dot.BareNormalize:
				c.line = 0
				c.extra++
			default:
				if c.bare == dot.BareReject {
					c.bareByte(chunkBareLF, base+int64(end))
				}
				c.line++
				c.checkLine()
			}
			if before == 0 && c.found != 0 && good == len(src) {
				good = end // output stops at the LF
			}
		}
		if j < 0 {
			break
		}
		i = end + 1
	}
	return good
}

var crByte = []byte{'\r'}

// bareByte records a bare CR or LF at offset off, if the policy rejects
// it.
func (c *Chunks) bareByte(kind uint8, off int64) {
	if c.bare != dot.BareReject {
		return
	}
	if c.found&kind == 0 {
		if kind == chunkBareLF {
			c.lfOff = off
		} else {
			c.crOff = off
		}
	}
	c.found |= kind
}

// checkLine records a line too long.
func (c *Chunks) checkLine() {
	if c.maxLine > 0 && c.line > int64(c.maxLine) {
		c.found |= chunkLineTooLong
	}
}

// dataErr is the error for the problems found: dot's error for one kind,
// or one that matches each kind, in dot's order of precedence.
func (c *Chunks) dataErr() error {
	var errs []error
	if c.found&chunkTooLarge != 0 {
		errs = append(errs, dot.ErrTooLarge)
	}
	if c.found&chunkLineTooLong != 0 {
		errs = append(errs, dot.ErrLineTooLong)
	}
	if c.found&chunkBareLF != 0 {
		errs = append(errs, &dot.SyntaxError{Offset: c.lfOff, Err: dot.ErrBareLF})
	}
	if c.found&chunkBareCR != 0 {
		errs = append(errs, &dot.SyntaxError{Offset: c.crOff, Err: dot.ErrBareCR})
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return &chunkErrors{errs}
}

// chunkErrors are several kinds of problems with a message's data.
type chunkErrors struct{ errs []error }

func (e *chunkErrors) Error() string {
	s := make([]string, len(e.errs))
	for i, err := range e.errs {
		s[i] = err.Error()
	}
	return strings.Join(s, "; ")
}

func (e *chunkErrors) Unwrap() []error { return e.errs }

// The size of a BDAT chunk header is at most this many bytes.
const maxChunkHeader = len("BDAT  LAST\r\n") + 20

func appendChunkHeader(b []byte, n int, last bool) []byte {
	b = append(b, "BDAT "...)
	b = strconv.AppendInt(b, int64(n), 10)
	if last {
		b = append(b, " LAST"...)
	}
	return append(b, "\r\n"...)
}

package textproto

import (
	"bytes"
	"errors"
	"io"
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
	// into a CRLF (and keeps a bare CR as data). Any other value fails
	// the message: its chunks are read to their end, return no data and
	// end with an error matching dot.ErrMode.
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
	if opt.Bare > dot.BareNormalize {
		// Its chunks are read and thrown away, as those of a message
		// whose data broke a rule, and end with the decoder's error.
		_, _, c.bad = (&dot.Decoder{Bare: opt.Bare}).Transform(nil, nil, true)
	}
	c.scan = !c.binary && c.bad == nil && (c.bare != dot.BareKeep || c.maxLine > 0)
	c.chunk.c = c
	return c
}

// Chunks reads one message's BDAT chunks; see [Reader.Chunks].
type Chunks struct {
	r        *Reader
	chunk    Chunk // the current chunk, reused for every chunk
	binary   bool
	bare     dot.BarePolicy
	maxBytes int64              // 0: none
	maxLine  int                // 0: none
	scan     bool               // the line rules must be checked
	scratch  *[writeToSize]byte // from writeToBufs, for the message (BareNormalize)

	size  int64 // data bytes returned
	off   int64 // data bytes consumed, of all chunks
	extra int64 // bytes added by normalization: the data is off+extra bytes
	ended bool  // the LAST chunk has been read
	rerr  error // the read error that cut a chunk short
	bad   error // opt.Bare is none of dot's policies (matches dot.ErrMode)
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
// [ErrChunkAfterLast]; if a read error cuts it short (or cut an earlier
// chunk short), with an error that matches ErrChunkAfterLast, then the
// problems found in the message, then the read error, in that order. A
// negative size is taken as 0.
func (c *Chunks) Next(size int64, last bool) *Chunk {
	// Finish what came before, as every Reader call does: the chunk
	// before, an open dot block, what a limit error left unread. An error
	// owed from before ends this chunk.
	err := c.r.begin()
	k := &c.chunk
	*k = Chunk{c: c, left: max(size, 0), last: last, open: true, afterLast: c.ended}
	if err != nil {
		c.rerr = k.readErr(err)
		k.open = false
		return k
	}
	if k.afterLast && c.rerr != nil && !errors.Is(c.rerr, ErrChunkAfterLast) {
		// A read error cut an earlier chunk short: this one ends with
		// it, after ErrChunkAfterLast.
		c.rerr = afterLast(c.rerr)
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
// step), in an error that also matches the problems found before it, if
// any, which come first (after ErrChunkAfterLast for a chunk after the
// LAST one: see [Chunks.Next]). Once set, it ends every later chunk of
// the message.
func (c *Chunks) Err() error {
	if k := &c.chunk; k.afterLast && !k.open {
		return k.finalErr()
	}
	if c.rerr != nil {
		return c.rerr
	}
	if c.bad != nil {
		return c.bad
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
			err = k.readErr(err)
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
	return k.afterLast || k.c.found != 0 || k.c.rerr != nil || k.c.bad != nil
}

// problems returns the error for the problems with the message found so
// far, or nil.
func (c *Chunks) problems() error {
	if c.bad != nil {
		return c.bad
	}
	if c.found == 0 {
		return nil
	}
	return c.dataErr()
}

// readErr is the error of chunk k when the read error err cuts it short:
// an error matching ErrChunkAfterLast if k comes after the LAST chunk,
// then the problems with the message found so far, then err, in that
// order; err alone if there is nothing before it.
func (k *Chunk) readErr(err error) error {
	data := k.c.problems()
	if k.afterLast {
		data = afterLast(data)
	}
	return withReadErr(data, err)
}

// afterLast returns ErrChunkAfterLast followed by the errors of err (nil,
// a chunkErrors, or one error), as one error.
func afterLast(err error) error {
	switch e := err.(type) {
	case nil:
		return ErrChunkAfterLast
	case *chunkErrors:
		return &chunkErrors{append([]error{ErrChunkAfterLast}, e.errs...)}
	}
	return &chunkErrors{[]error{ErrChunkAfterLast, err}}
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
		return k.finalErr() // with the read error of an earlier chunk, if any
	}
	if k.last {
		c.ended = true
		if c.scan && c.cr {
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
	case k.c.bad != nil:
		return k.c.bad
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
			}
			var werr error
			if len(out) > 0 {
				var m int
				m, werr = writeAll(w, out)
				written += int64(m)
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
func (c *Chunks) check(src []byte) int { return c.checkAt(src, c.off) }

// normClean reports whether src, the next bytes of a BareNormalize
// message, is CRLF text without a bare CR or LF and with no line too long:
// then it is returned as it is, and the line state is kept up to date. A
// window that is not clean goes to normalize.
func (c *Chunks) normClean(src []byte) bool {
	if c.found != 0 || len(src) == 0 {
		return false
	}
	s := c.lineState()
	if s.Clean(src, c.maxLine) < len(src) {
		return false
	}
	c.setLineState(s)
	return true
}

// buf returns the message's scratch buffer, taken from writeToBufs on
// first use and put back after the LAST chunk.
func (c *Chunks) buf() *[writeToSize]byte {
	if c.scratch == nil {
		c.scratch = writeToBufs.Get().(*[writeToSize]byte)
	}
	return c.scratch
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

// clean advances the line rules' state over the clean CRLF text at the
// start of b (see dot.LineState.Clean, which runs dot's SIMD kernels) and
// returns its length: b[n], if any, breaks a rule, which checkLines then
// reports.
func (c *Chunks) clean(b []byte) int {
	s := c.lineState()
	n := s.Clean(b, c.maxLine)
	c.setLineState(s)
	return n
}

func (c *Chunks) lineState() dot.LineState { return dot.LineState{Line: int(c.line), CR: c.cr} }

func (c *Chunks) setLineState(s dot.LineState) { c.line, c.cr = int64(s.Line), s.CR }

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

// chunkErrors are several kinds of problems with a message's data, and
// perhaps the read error that cut it short.
type chunkErrors struct{ errs []error }

// withReadErr is the error of message data that the read error rerr cut
// short after the problems data (nil if none) had been found in it: rerr
// alone, or an error matching each problem and rerr, in that order, so
// that errors.Is finds the limit a server answers and the read error that
// means the session is out of step.
func withReadErr(data, rerr error) error {
	if data == nil {
		return rerr
	}
	var errs []error
	if m, ok := data.(interface{ Unwrap() []error }); ok {
		errs = append(errs, m.Unwrap()...)
	} else {
		errs = append(errs, data)
	}
	return &chunkErrors{append(errs, rerr)}
}

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

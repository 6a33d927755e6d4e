package textproto

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/dot"
)

// errMessageTooLarge is what net/textproto reports when the first line of a
// MIME header is indented and longer than errorQuoteLimit; its text is the
// same.
var errMessageTooLarge = errors.New("message too large")

// errorQuoteLimit bounds how much of an indented first header line is read
// to quote it in the error, as in net/textproto.
const errorQuoteLimit = 80

// keepScratch is the largest scratch buffer a Reader keeps between calls;
// bigger ones are left to the garbage collector after the call.
const keepScratch = 64 << 10

// A Reader reads the lines, replies, headers and dot-encoded blocks of a
// text protocol from R.
//
// A Reader made with NewReader, or as &Reader{R: br}, behaves exactly as
// net/textproto's does, apart from the deviation the package documentation
// describes. SetLimits adds bounds on what it accepts.
type Reader struct {
	R    *bufio.Reader
	dot  *DotReader
	bdat *Chunk // the BDAT chunk being read
	buf  []byte // joins continued lines
	lim  Limits

	// err is a read error owed to the next call: a line cut off by an
	// error exactly at a bufio buffer boundary was returned first (where
	// net/textproto drops it), and the error comes next.
	err error

	// lost is set when a dot reader gave up discarding a block (see
	// Limits.MaxDiscardBytes): the input is out of step, and every later
	// call fails with it.
	lost error

	// calls counts the runs of begin, that is the calls that moved r on:
	// a dot reader made or started before the latest one is stale.
	calls uint64

	// count is the number of bytes consumed from R by line reads; the
	// limits are measured with it.
	count int64
	// hdrEnd is, while ReadMIMEHeader runs (inHeader), the count it may
	// not pass (if MaxHeaderBytes is set).
	hdrEnd int64
	// lineCap, if above 0, is how long the line being read by
	// ReadResponse may grow before it fails the response's MaxHeaderBytes
	// (the message left to fill, plus what a line holds besides its text).
	lineCap int64
	// dotCap, if above 0, is how long a line read by ReadDotLines may
	// grow before it is known to break MaxDotBytes: past it the line is
	// not read on (the next read discards its rest), so that a huge line
	// is not held whole when no MaxLineBytes bounds it.
	dotCap int64

	// skipResponse, if not 0, asks the next call to discard the rest of
	// a response with that code, through its last line, after a limit
	// error in ReadResponse; endlessResponse, the rest of a response
	// without a valid code, which no line ends.
	skipResponse int
	// head holds the first bytes of the line a limit error stopped,
	// nhead of them, for ReadResponse to tell its code and whether it is
	// the response's last line.
	nhead int
	head  [4]byte

	limited bool // lim sets a line or header limit
	// skipLine and skipHeader ask the next call to discard the rest of
	// the line, and then the rest of the header block, that made the
	// previous call fail with a limit error.
	skipLine, skipHeader bool
	// skipContinued asks the next call to discard the continuation lines
	// that follow, after a limit error in ReadContinuedLine.
	skipContinued bool
	// continued is set while ReadContinuedLine runs.
	continued bool
	// inHeader is set while ReadMIMEHeader runs.
	inHeader bool

	line []byte        // accumulates a line longer than R's buffer
	hdr  headerBuilder // the header being read
}

// NewReader returns a [Reader] that reads from r.
//
// Without limits (see [Reader.SetLimits]) a Reader buffers lines and
// headers of any length, as net/textproto does; bound the input (for
// example with [io.LimitReader]) or set limits when reading from a peer
// that is not trusted.
func NewReader(r *bufio.Reader) *Reader {
	return &Reader{R: r}
}

// SetLimits sets the limits r enforces from now on; the zero Limits turns
// them off. See [Limits] for what each bounds and what happens to the
// input that exceeds it.
func (r *Reader) SetLimits(l Limits) {
	r.lim = l
	r.limited = l.MaxLineBytes > 0 || l.MaxHeaderBytes > 0 || l.MaxHeaderFields > 0
}

// Limits returns the limits r enforces.
func (r *Reader) Limits() Limits { return r.lim }

// begin runs before every read: it finishes an open dot block, returns an
// error owed from the previous call, and discards what a limit error left
// unread.
func (r *Reader) begin() error {
	r.closeDot()
	r.closeChunk()
	r.calls++ // after closeDot, whose drain may start the block (and run begin)
	if r.lost != nil {
		return r.lost // before, or while closeDot drained a block
	}
	if r.err != nil {
		err := r.err
		r.err = nil
		return err
	}
	if r.skipLine || r.skipHeader || r.skipResponse != 0 || r.skipContinued {
		return r.discard()
	}
	return nil
}

// discard reads and drops the rest of an over-long line and, after a
// header limit error, the rest of the header block up to and including
// its empty line, or the rest of a response through its last line, or
// the continuation lines that follow. It keeps nothing but R's buffer.
// If reading fails, it returns the error, which ends the line being
// discarded, as a read error ends a line that is read (the input after a
// transient error starts a new line); the next call goes on discarding
// the rest of the header block, response or continuation lines.
func (r *Reader) discard() error {
	for r.skipLine || r.skipHeader || r.skipResponse != 0 || r.skipContinued {
		if r.skipContinued && !r.skipLine {
			p, err := r.R.Peek(1)
			if err != nil {
				return err
			}
			if p[0] != ' ' && p[0] != '\t' {
				r.skipContinued = false
				continue
			}
			r.skipLine = true // a continuation line: drop it
		}
		start := !r.skipLine // s starts a line
		s, err := r.R.ReadSlice('\n')
		// A read error ends the line, as bufio.Reader.ReadLine (and so
		// readLineSlice and net/textproto) end a line cut short by one.
		r.skipLine = err == bufio.ErrBufferFull
		if start && len(s) > 0 {
			switch {
			case r.skipHeader:
				if s[len(s)-1] == '\n' && (len(s) == 1 || len(s) == 2 && s[0] == '\r') {
					r.skipHeader = false // the empty line that ends the header
				}
			case r.skipResponse != 0:
				if lastResponseLine(s, r.skipResponse) {
					r.skipResponse = 0
				}
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			if len(s) == 0 && r.skipResponse == endlessResponse {
				// Where net/textproto's ReadResponse stops: its
				// ReadLine returns a read error that comes with no
				// data (one with data ends a line, and it reads on).
				r.skipResponse = 0
			}
			return err
		}
	}
	return nil
}

// lastResponseLine reports whether s starts "ddd ", ddd being code: the
// last line of a response with that code. A code under 100 is not valid
// (net/textproto's ReadResponse takes its lines as text), so no line ends
// a response with one.
func lastResponseLine(s []byte, code int) bool {
	return code >= 100 && len(s) >= 4 && s[3] == ' ' && int(s[0]-'0')*100+int(s[1]-'0')*10+int(s[2]-'0') == code &&
		s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9'
}

// endlessResponse is skipResponse for a response whose first line has no
// valid code ("099-", "abc-"): net/textproto's ReadResponse reads on
// until a read error, as no line can end it, and so its rest is
// discarded until one (one its ReadLine returns: a read error with no
// data; one with data ends a line), and the call after reads on.
const endlessResponse = -1

// chunk is bufio.Reader.ReadLine, given the result of the ReadSlice('\n')
// it starts with: it returns one line, or the part of it that fills R's
// buffer (more is then true), without its \n or \r\n. As with ReadLine, a
// \r that ends a full buffer is left for the next read, and a line cut
// short by an error is returned without the error, which the next read
// reports.
func (r *Reader) chunk(line []byte, err error) (_ []byte, more bool, _ error) {
	if err == bufio.ErrBufferFull {
		if n := len(line); n > 0 && line[n-1] == '\r' {
			// The \r may start a \r\n: read it again with the next part.
			r.R.UnreadByte()
			line = line[:n-1]
		}
		r.count += int64(len(line))
		return line, true, nil
	}
	r.count += int64(len(line))
	n := len(line)
	if n == 0 {
		if err != nil {
			line = nil
		}
		return line, false, err
	}
	if line[n-1] == '\n' {
		n--
		if n > 0 && line[n-1] == '\r' {
			n--
		}
	}
	return line[:n], false, nil
}

// ReadLine reads one line and returns it without its "\n" or "\r\n".
func (r *Reader) ReadLine() (string, error) {
	line, err := r.readLineSlice(-1, 0)
	return string(line), err
}

// ReadLineBytes is [Reader.ReadLine] returning a new []byte.
func (r *Reader) ReadLineBytes() ([]byte, error) {
	line, err := r.readLineSlice(-1, 0)
	if line != nil {
		line = bytes.Clone(line)
	}
	return line, err
}

// readLineSlice reads one line and returns it without its \n or \r\n. The
// slice is valid until the next read from R or r.
//
// stdLim, if not negative, is net/textproto's bound on the line's length:
// past it the read stops with errMessageTooLarge, leaving the rest of the
// line unread. base is the length of the logical line read before this
// physical line (see readContinuedLineSlice), for MaxLineBytes.
func (r *Reader) readLineSlice(stdLim, base int64) ([]byte, error) {
	if r.dot != nil || r.bdat != nil || r.err != nil || r.skipLine || r.skipHeader || r.skipResponse != 0 || r.skipContinued {
		if err := r.begin(); err != nil {
			return nil, err
		}
	}
	line, rerr := r.R.ReadSlice('\n')
	if rerr == nil && stdLim < 0 && !r.limited {
		// The common case: a whole line in R's buffer, no limits.
		n := len(line) - 1
		if n > 0 && line[n-1] == '\r' {
			n--
		}
		return line[:n], nil
	}
	var acc []byte // the parts of a line longer than R's buffer
	// failed is limitFailed for a limit broken by the part of the line
	// just read. If a read error cut that part short, the error is owed
	// to the next call, which returns it before it reads anything (chunk
	// returns the part without it, as bufio.Reader.ReadLine does, and the
	// line it would have ended is not returned).
	failed := func(more bool, err error) error {
		if rerr != nil && rerr != bufio.ErrBufferFull {
			r.err = rerr
		}
		return r.limitFailed(more, err)
	}
	for {
		l, more, err := r.chunk(line, rerr)
		if err != nil {
			if acc != nil {
				// Deviation: net/textproto drops the line here.
				r.err = err
				return r.keepLine(acc), nil
			}
			return nil, err
		}
		n := int64(len(acc)) + int64(len(l))
		if r.limited {
			if r.lim.MaxLineBytes > 0 && base+n > int64(r.lim.MaxLineBytes) {
				r.nhead = copy(r.head[:], acc)
				r.nhead += copy(r.head[r.nhead:], l)
				return nil, failed(more, lineTooLong(r.lim.MaxLineBytes))
			}
			if r.inHeader && r.lim.MaxHeaderBytes > 0 && r.count > r.hdrEnd && (base > 0 || more || n > 0) {
				// Over budget, and not on the empty line that ends the block.
				return nil, failed(more, headerTooLarge(r.lim.MaxHeaderBytes, "bytes"))
			}
			if r.lineCap > 0 && n > r.lineCap {
				// A response's line that cannot fit its message: stop
				// reading it, as ReadMIMEHeader stops at its budget.
				r.nhead = copy(r.head[:], acc)
				r.nhead += copy(r.head[r.nhead:], l)
				return nil, failed(more, headerTooLarge(r.lim.MaxHeaderBytes, "bytes"))
			}
		}
		if r.dotCap > 0 && n > r.dotCap {
			return nil, failed(more, errDotCap)
		}
		if stdLim >= 0 && n > stdLim {
			return nil, errMessageTooLarge
		}
		if acc == nil {
			if !more {
				return l, nil
			}
			acc = r.line[:0]
		}
		acc = appendGrow(acc, l)
		if !more {
			return r.keepLine(acc), nil
		}
		line, rerr = r.R.ReadSlice('\n')
	}
}

// keepLine keeps the accumulation buffer acc for the next long line if it
// is small enough, and returns it.
func (r *Reader) keepLine(acc []byte) []byte {
	if cap(acc) <= keepScratch {
		r.line = acc
	}
	return acc
}

// appendGrow appends b to a, doubling a's capacity when it must grow (the
// built-in append grows large slices by only a quarter, which copies a long
// line many more times).
func appendGrow(a, b []byte) []byte {
	if len(a)+len(b) > cap(a) {
		c := 2 * cap(a)
		if c < len(a)+len(b) {
			c = 2 * (len(a) + len(b))
		}
		a = append(make([]byte, 0, c), a...)
	}
	return append(a, b...)
}

// limitFailed records what the next call must discard after a limit error
// err: the rest of the current line if more of it is unread, and the rest
// of the header block if ReadMIMEHeader is running, or the continuation
// lines that follow if ReadContinuedLine is.
func (r *Reader) limitFailed(more bool, err error) error {
	r.skipLine = more
	r.skipHeader = r.inHeader
	r.skipContinued = r.continued
	return err
}

// ReadContinuedLine reads a line together with the lines that continue it
// (those that start with a space or tab, as folded header fields do) and
// returns them as one line: each part without its surrounding spaces and
// tabs, joined by single spaces. An empty line is never continued.
//
// For example, the input "Subject: a\r\n  long\r\n\tline\r\nNext\r\n"
// gives "Subject: a long line" and then "Next".
func (r *Reader) ReadContinuedLine() (string, error) {
	r.continued = true
	line, err := r.readContinuedLineSlice(false)
	r.continued = false
	return string(line), err
}

// ReadContinuedLineBytes is [Reader.ReadContinuedLine] returning a new
// []byte.
func (r *Reader) ReadContinuedLineBytes() ([]byte, error) {
	r.continued = true
	line, err := r.readContinuedLineSlice(false)
	r.continued = false
	if line != nil {
		line = bytes.Clone(line)
	}
	return line, err
}

// trim returns s without leading and trailing spaces and tabs.
func trim(s []byte) []byte {
	i, j := 0, len(s)
	for i < j && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	return s[i:j]
}

// readContinuedLineSlice reads a line and its continuation lines and
// returns them joined, each trimmed, with single spaces. The result is
// valid until the next read from R or r. If header is set, the first line
// must contain a colon (the field name may not be folded).
func (r *Reader) readContinuedLineSlice(header bool) ([]byte, error) {
	start := r.count
	line, err := r.readLineSlice(-1, 0)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 {
		return line, nil // an empty line is never continued
	}
	if header && bytes.IndexByte(line, ':') < 0 {
		return nil, ProtocolError("malformed MIME header: missing colon: " + strconv.Quote(string(line)))
	}

	// If the next line is already buffered and cannot be a continuation
	// (it starts with a letter, or it is empty), return the line where it
	// lies, as net/textproto does.
	if r.R.Buffered() > 1 {
		p, _ := r.R.Peek(2)
		if isASCIILetter(p[0]) || p[0] == '\n' || p[0] == '\r' && p[1] == '\n' {
			return trim(line), nil
		}
	}

	// Reading on overwrites R's buffer: copy the line.
	r.buf = append(r.buf[:0], trim(line)...)
	for {
		n, err := r.skipSpace(start)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		r.buf = append(r.buf, ' ')
		line, err := r.readLineSlice(-1, r.count-start)
		if err != nil {
			if isLimitError(err) || continuedLineFails {
				return nil, err
			}
			break // as net/textproto before Go 1.26.9 and 1.27.2: the error comes with the next read
		}
		r.buf = append(r.buf, trim(line)...)
	}
	return r.buf, nil
}

// skipSpace reads spaces and tabs from R and returns how many it read.
// Like net/textproto it reads them one at a time with ReadByte, and
// ignores a read error (R reports it again, or the next read sees it).
// start is where the current logical line began, for the limits.
func (r *Reader) skipSpace(start int64) (int, error) {
	if r.err != nil {
		return 0, nil // a read error is owed: stop here
	}
	n := 0
	for {
		c, err := r.R.ReadByte()
		if err != nil {
			break
		}
		if c != ' ' && c != '\t' {
			r.R.UnreadByte()
			break
		}
		n++
		r.count++
		if r.lim.MaxLineBytes > 0 && r.count-start > int64(r.lim.MaxLineBytes) {
			return n, r.limitFailed(true, lineTooLong(r.lim.MaxLineBytes))
		}
		if r.inHeader && r.lim.MaxHeaderBytes > 0 && r.count > r.hdrEnd {
			return n, r.limitFailed(true, headerTooLarge(r.lim.MaxHeaderBytes, "bytes"))
		}
	}
	return n, nil
}

// ReadCodeLine reads a one-line reply, a three-digit code, a space and a
// message, such as
//
//	220 mail.example.com ESMTP ready
//
// If expectCode is 1 to 999 and the code does not start with its digits
// (expectCode 31 accepts 310 to 319), ReadCodeLine returns the code and
// message with err set to &Error{Code: code, Msg: message}. An expectCode
// of 0 or less accepts any code.
//
// A multi-line response ("250-first line") gives a ProtocolError; read
// those with ReadResponse.
func (r *Reader) ReadCodeLine(expectCode int) (code int, message string, err error) {
	code, continued, message, err := r.readCodeLine(expectCode)
	if err == nil && continued {
		err = ProtocolError("unexpected multi-line response: " + strconv.Quote(message))
	}
	return
}

func (r *Reader) readCodeLine(expectCode int) (code int, continued bool, message string, err error) {
	line, err := r.ReadLine()
	if err != nil {
		return
	}
	return parseCodeLine(line, expectCode)
}

// parseCodeLine splits "ddd message" or "ddd-message" and checks the code
// against expectCode, with net/textproto's results and errors.
func parseCodeLine(line string, expectCode int) (code int, continued bool, message string, err error) {
	if len(line) < 4 || line[3] != ' ' && line[3] != '-' {
		return 0, false, "", ProtocolError("short response: " + strconv.Quote(line))
	}
	continued = line[3] == '-'
	code, err = strconv.Atoi(line[:3])
	if err != nil || code < 100 {
		return code, continued, "", ProtocolError("invalid response code: " + strconv.Quote(line))
	}
	message = line[4:]
	if codeMismatch(code, expectCode) {
		err = &Error{Code: code, Msg: message}
	}
	return
}

// codeMismatch reports whether code fails to start with the digits of
// expectCode (when expectCode has one to three digits).
func codeMismatch(code, expectCode int) bool {
	switch {
	case expectCode >= 1 && expectCode <= 9:
		return code/100 != expectCode
	case expectCode >= 10 && expectCode <= 99:
		return code/10 != expectCode
	case expectCode >= 100 && expectCode <= 999:
		return code != expectCode
	}
	return false
}

// ReadResponse reads a response of one or more lines:
//
//	code-message line 1
//	code-message line 2
//	...
//	code message line n
//
// The lines before the last have a hyphen after the code; the last has a
// space. The returned message joins the lines' messages with \n. As RFC
// 959 allows, lines in between that do not start with the same code
// followed by a space or hyphen are taken whole as part of the message:
//
//	code-message line 1
//	message line 2
//	...
//	code message line n
//
// If expectCode is 1 to 999 and the code does not start with its digits,
// ReadResponse returns the code and message with err set to
// &Error{Code: code, Msg: message}. An expectCode of 0 or less accepts any
// code.
//
// With limits (see [Reader.SetLimits]), MaxHeaderBytes bounds the
// message (the lines' messages joined with \n) and MaxHeaderFields the
// number of lines: past either, ReadResponse returns the code, no message
// and an error matching [ErrHeaderTooLarge]. Past MaxLineBytes, a line
// of the response fails it with the code (if the line's first bytes
// give it), no message and an error matching [ErrLineTooLong]. Either
// way the next call discards the rest of the response through its last
// line. A response whose first line has no valid code and a hyphen
// ("099-...", "abc-...") has no last line: net/textproto's ReadResponse
// reads it until a read error, and so the next call discards the input
// until one (a read error that comes with no data, as net/textproto's
// ReadLine returns one); the call after it reads on.
func (r *Reader) ReadResponse(expectCode int) (code int, message string, err error) {
	// A line holds its text and at most 7 bytes more ("ddd-", CRLF, and
	// the \n it is joined with): one past that many cannot fit.
	const extra = 7
	budget := r.lim.MaxHeaderBytes
	if budget > 0 {
		r.lineCap = budget + extra
		defer func() { r.lineCap = 0 }()
	}
	code, continued, first, err := r.readCodeLine(expectCode)
	if budget > 0 && int64(len(first)) > budget && !isLimitError(err) {
		return r.responseTooLarge(code, continued, headerTooLarge(budget, "bytes"))
	}
	if isLimitError(err) {
		// The first line is too long: its head tells the code, and
		// whether more lines follow.
		h := r.head[:r.nhead]
		if len(h) < 4 || h[3] != ' ' && h[3] != '-' {
			return 0, "", err
		}
		code, cerr := strconv.Atoi(string(h[:3]))
		if cerr != nil || code < 100 {
			code = 0 // no valid code, as net/textproto's "invalid response code"
		}
		return r.responseTooLarge(code, h[3] == '-', err)
	}
	multi := continued
	var msg strings.Builder
	msg.WriteString(first)
	for lines := 1; continued; lines++ {
		if budget > 0 {
			r.lineCap = budget - int64(msg.Len()) + extra
		}
		line, lerr := r.ReadLine()
		if isLimitError(lerr) {
			return r.responseTooLarge(code, !lastResponseLine(r.head[:r.nhead], code), lerr)
		}
		if lerr != nil {
			return 0, "", lerr
		}
		code2, cont2, more, perr := parseCodeLine(line, 0)
		text := more
		if perr != nil || code2 != code {
			// Not a line of this response's form: part of the text.
			text, cont2 = strings.TrimRight(line, "\r\n"), true
		}
		if limit := r.lim.MaxHeaderFields; limit > 0 && lines+1 > limit {
			return r.responseTooLarge(code, cont2, headerTooLarge(int64(limit), "lines"))
		}
		if limit := r.lim.MaxHeaderBytes; limit > 0 && int64(msg.Len()+1+len(text)) > limit {
			return r.responseTooLarge(code, cont2, headerTooLarge(limit, "bytes"))
		}
		msg.WriteByte('\n')
		msg.WriteString(text)
		continued = cont2
	}
	message = msg.String()
	if err != nil && multi && message != "" {
		// The code did not match: report the whole text.
		err = &Error{Code: code, Msg: message}
	}
	return
}

// responseTooLarge is ReadResponse's result for a response past a limit
// (err): the rest of the response, if more is set, is left to discard. A
// code under 100 is not valid: the rest of its response has no end.
func (r *Reader) responseTooLarge(code int, more bool, err error) (int, string, error) {
	if more {
		r.skipResponse = code
		if code < 100 {
			r.skipResponse = endlessResponse
		}
	}
	return code, "", err
}

// ReadDotLines reads a dot-encoded block (see [Reader.DotReader]) and
// returns its decoded lines, without their \r\n or \n. A missing end line
// gives the lines read and [io.ErrUnexpectedEOF].
//
// It reads line by line, as ReadLine does (and as net/textproto does), so a
// line consisting of a lone dot ends the block whatever its line ending.
//
// With limits (see [Reader.SetLimits]), a block with a line longer than
// MaxLineBytes, or whose lines take more memory than MaxDotBytes, is read
// to its end line like any other, keeping only the lines before the
// excess, and then fails with an error matching [ErrLineTooLong] or
// [dot.ErrTooLarge], or both (too large first). The connection stays in
// step. If a read error cuts the block short after a limit has failed,
// the error matches the limit errors and the read error (io.ErrUnexpectedEOF
// for io.EOF), in that order. Each line counts as its length plus the
// size of a string header (16 bytes on 64-bit systems), so that the
// returned lines and their slice never take more than about MaxDotBytes
// of memory, even when the lines are empty; a line too long counts as
// MaxLineBytes.
func (r *Reader) ReadDotLines() ([]string, error) {
	var lines []string
	var size int64    // the memory the lines take, kept or not
	var tooLarge bool // size passed MaxDotBytes
	var lineErr error // the first line over MaxLineBytes
	capped := r.lim.MaxDotBytes > 0 && r.lim.MaxLineBytes <= 0
	if capped {
		defer func() { r.dotCap = 0 }()
	}
	// charge charges a line of n bytes against MaxDotBytes, whether it is
	// kept or not, so that a block too large is reported as such whatever
	// else is wrong with it.
	charge := func(n int) {
		if max := r.lim.MaxDotBytes; max > 0 && !tooLarge {
			size += dotLineCost(n)
			tooLarge = size > max
		}
	}
	for {
		if capped {
			// A line longer than what is left of the budget breaks it
			// (it costs its length, less a stuffed dot, plus a string
			// header): read no more of it than that. After that, only
			// the end line (".") matters.
			r.dotCap = max(r.lim.MaxDotBytes-size, 1)
			if tooLarge {
				r.dotCap = 1
			}
		}
		line, err := r.readLineSlice(-1, 0)
		if err == errDotCap {
			tooLarge = true
			continue // the next read discards the rest of the line
		}
		if err != nil {
			if isLimitError(err) {
				// Skip the line (the next read discards its rest) and
				// read on to the end of the block. It has more than
				// MaxLineBytes bytes, a stuffed dot maybe among them.
				if lineErr == nil {
					lineErr = err
				}
				charge(r.lim.MaxLineBytes)
				continue
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			// A read error after a limit failed: both.
			return lines, withReadErr(dotLinesErr(tooLarge, lineErr), err)
		}
		if len(line) > 0 && line[0] == '.' {
			if len(line) == 1 {
				return lines, dotLinesErr(tooLarge, lineErr)
			}
			line = line[1:]
		}
		charge(len(line))
		if tooLarge || lineErr != nil {
			continue // not kept: not copied
		}
		if max := r.lim.MaxDotBytes; max > 0 && len(lines) == cap(lines) {
			lines = growLines(lines, (max-size)/stringHeaderSize)
		}
		lines = append(lines, string(line))
	}
}

// dotLinesErr is ReadDotLines' error for a block too large, with a line
// too long, or both: then an error matching both, too large first (see
// the package documentation on errors in message data).
func dotLinesErr(tooLarge bool, lineErr error) error {
	switch {
	case tooLarge && lineErr != nil:
		return &chunkErrors{[]error{dot.ErrTooLarge, lineErr}}
	case tooLarge:
		return dot.ErrTooLarge
	}
	return lineErr
}

// errDotCap is readLineSlice's error for a line of ReadDotLines past
// dotCap.
var errDotCap = errors.New("textproto: dot line over the size limit")

// stringHeaderSize is the size of a string header: a pointer and a length.
const stringHeaderSize = 2 * strconv.IntSize / 8

// dotLineCost is what ReadDotLines charges a line of n bytes against
// MaxDotBytes: its bytes and the string header that holds it.
func dotLineCost(n int) int64 { return int64(n) + stringHeaderSize }

// growLines returns lines with room for one more line and, doubling its
// capacity, at most more further lines: the number of lines the rest of
// the MaxDotBytes budget can pay for. So the spare capacity of the slice
// is paid for by the budget too.
func growLines(lines []string, more int64) []string {
	c := int64(2 * cap(lines))
	if c < 8 {
		c = 8
	}
	if limit := int64(len(lines)) + 1 + more; c > limit {
		c = limit
	}
	return append(make([]string, 0, c), lines...)
}

// ReadMIMEHeader reads a MIME-style header from r: "Key: value" fields,
// possibly continued over several lines, up to an empty line. The returned
// map holds each key in canonical form (see [CanonicalMIMEHeaderKey]) with
// its values in the order they came.
//
// For example, the input
//
//	my-key: Value 1
//	Long-Key: Even
//	       Longer Value
//	My-Key: Value 2
//
// followed by an empty line gives
//
//	MIMEHeader{
//		"My-Key":   {"Value 1", "Value 2"},
//		"Long-Key": {"Even Longer Value"},
//	}
//
// A malformed line gives a ProtocolError, and the fields read before it.
//
// The values share a few allocations: keeping one keeps the up to 8 KiB
// of text it was copied with (see the package documentation on memory).
func (r *Reader) ReadMIMEHeader() (MIMEHeader, error) {
	r.closeChunk() // (an open dot block is closed below, where net/textproto does)
	if r.lost != nil || r.err != nil || r.skipLine || r.skipHeader || r.skipResponse != 0 || r.skipContinued {
		if err := r.begin(); err != nil {
			return make(MIMEHeader), err
		}
	}
	if r.limited {
		r.inHeader = true
		r.hdrEnd = r.count + r.lim.MaxHeaderBytes
		if r.hdrEnd < r.count {
			r.hdrEnd = math.MaxInt64 // no overflow for huge limits
		}
		defer func() { r.inHeader = false }()
	}

	// net/textproto peeks here before it closes an open dot block: once to
	// size the map (which we need not do; the map is built at the end with
	// the exact count) and once to check the first byte. Peek the same way,
	// so that R reads its source at the same moments.
	r.R.Peek(1)
	if p, err := r.R.Peek(1); err == nil && (p[0] == ' ' || p[0] == '\t') {
		line, err := r.readLineSlice(errorQuoteLimit, 0)
		if err != nil {
			return make(MIMEHeader), err
		}
		return make(MIMEHeader), ProtocolError("malformed MIME header initial line: " + strconv.Quote(string(line)))
	}

	r.hdr.reset(r.R)
	for {
		kv, err := r.readContinuedLineSlice(true)
		if len(kv) == 0 {
			return r.hdr.build(), err
		}
		k, v, _ := bytes.Cut(kv, colon) // the colon is there: readContinuedLineSlice checked
		key, ok := r.hdr.canonicalKey(k)
		if !ok {
			return r.hdr.build(), malformedLine(kv)
		}
		for _, c := range v {
			if badValueByte[c] {
				// net/textproto quotes the line with the key already
				// canonicalized.
				return r.hdr.build(), ProtocolError("malformed MIME header line: " + strconv.Quote(string(key)+":"+string(v)))
			}
		}
		if r.lim.MaxHeaderFields > 0 && r.hdr.fields() >= r.lim.MaxHeaderFields {
			return r.hdr.build(), r.limitFailed(false, headerTooLarge(int64(r.lim.MaxHeaderFields), "fields"))
		}
		i := 0
		for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
			i++
		}
		r.hdr.add(v[i:])
	}
}

var colon = []byte(":")

func malformedLine(kv []byte) error {
	return ProtocolError("malformed MIME header line: " + strconv.Quote(string(kv)))
}

func isASCIILetter(c byte) bool {
	c |= 0x20 // fold to lower case
	return 'a' <= c && c <= 'z'
}

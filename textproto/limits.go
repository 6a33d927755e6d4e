package textproto

import (
	"errors"
	"strconv"

	"github.com/wirespeed/wirespeed/dot"
)

// Limits bounds what a [Reader] will accept from its peer. The zero value
// sets no limits, which is what [NewReader] gives and what net/textproto
// does. With limits, a Reader never holds more than about a limit's worth
// of a line or header (plus its bufio.Reader's buffer), however much the
// peer sends.
//
// When a limit is exceeded, the call fails with an error matching
// [ErrLineTooLong] or [ErrHeaderTooLarge] as soon as the excess has been
// seen, and the input that caused it is skipped: the next read call on the
// Reader first discards the rest of the over-long line without buffering
// it (and after a failed ReadContinuedLine, the lines that continue it;
// after ReadMIMEHeader, the rest of the header block up to and including
// its empty line; after ReadResponse, the rest of the response through its
// last line, or up to a read error for a response that has none, as
// net/textproto reads it), then reads on. So a server can reply with an error, and a
// client read the next reply, in step with the peer. Reading R directly
// instead sees the unread rest. If a read error cut short the line that
// broke a limit, the next call returns it first, before it reads anything
// (ReadDotLines, which reads on to the end of its block, returns it
// itself, with the limit errors); one that comes while the rest of the
// line is discarded is returned by the call that discards. Either way it
// ends the line, as without limits: the input after it starts a new one.
//
// MaxLineBytes and MaxDotBytes also bound message data: dot-encoded blocks
// and BDAT chunks. There a limit fails the block or message only once it
// has been read to its end, with dot's errors (see the package
// documentation on errors in message data). If a read error cuts it short
// after a limit has failed, the error matches each limit's error and the
// read error, the limits first: the rest of the data would be read as
// commands, so close the connection. [Reader.DotReaderWith] and
// [Reader.Chunks] take other limits for one block or message.
type Limits struct {
	// MaxLineBytes bounds the length of one line, not counting its line
	// ending. For ReadContinuedLine and ReadMIMEHeader a line and its
	// continuation lines count as one line, with the line breaks and
	// white space between them. Longer lines fail with an error matching
	// ErrLineTooLong.
	//
	// It bounds the lines of dot blocks too, counted on the wire (a
	// stuffing dot included), and of BDAT messages that are not
	// BINARYMIME: dot readers and chunks fail with dot.ErrLineTooLong,
	// ReadDotLines with ErrLineTooLong, which matches dot.ErrLineTooLong
	// as well.
	MaxLineBytes int

	// MaxHeaderBytes bounds the total size of the fields of a MIME header
	// block read by ReadMIMEHeader, line endings included (the empty line
	// that ends the block does not count), and the message of a response
	// read by ReadResponse (its lines' messages joined with \n). Larger
	// ones fail with an error matching ErrHeaderTooLarge.
	MaxHeaderBytes int64

	// MaxHeaderFields bounds the number of fields in a MIME header block,
	// and of lines in a response read by ReadResponse. More fail with an
	// error matching ErrHeaderTooLarge.
	MaxHeaderFields int

	// MaxDotBytes bounds the decoded size of one dot-encoded block, and
	// the data of one BDAT message, all its chunks together. Larger ones
	// fail with an error matching dot.ErrTooLarge, after the rest of the
	// block (terminator included) or chunk has been read and discarded.
	// ReadDotLines counts each line it keeps as its length plus a string
	// header (16 bytes on 64-bit systems), so that the lines it returns
	// take at most about MaxDotBytes of memory.
	MaxDotBytes int64

	// MaxDiscardBytes bounds how much of a dot-encoded block a dot reader
	// (DotReader, DotReaderMode, DotReaderWith, ReadDotBytes) reads and
	// discards after a problem with its data has stopped its output: a
	// block too large, a line too long, a bare CR or LF under
	// dot.BareReject. It counts the bytes on the wire after the byte at
	// which the problem was found. If the end line has not come within
	// them, the reader gives up with an error matching the data error and
	// ErrNotInStep, in that order, and the Reader fails every later call
	// with it at once, reading nothing more from R: the rest of the block
	// would be read as commands, so close the connection. Zero, the
	// default, sets no bound: the reader reads on to the end line however
	// much the peer sends, as without it (bound that with a deadline). It
	// does not apply to ReadDotLines or to BDAT chunks, whose size the
	// client declares in each BDAT command.
	MaxDiscardBytes int64
}

// Errors reported when input exceeds the Reader's [Limits]. The errors
// returned wrap them with the limit; test with errors.Is.
var (
	ErrLineTooLong    = errors.New("textproto: line too long")
	ErrHeaderTooLarge = errors.New("textproto: header too large")
)

// ErrNotInStep reports a dot block that a reader gave up discarding after
// a data error (see Limits.MaxDiscardBytes): the rest of the block is
// still to come, so the session is no longer in step with the peer. The
// error returned matches the data error and then it with errors.Is: the
// problems first, as with a read error that cuts message data short.
var ErrNotInStep = errors.New("textproto: gave up discarding: the session is no longer in step")

// A notInStepError is the data error that made a reader discard, then
// ErrNotInStep, with the bound it passed.
type notInStepError struct {
	errs  []error // the data error's problems, then ErrNotInStep
	limit int64
}

// notInStep returns the error of giving up after discarding limit bytes
// following the data error data.
func notInStep(data error, limit int64) error {
	var errs []error
	if m, ok := data.(interface{ Unwrap() []error }); ok {
		errs = append(errs, m.Unwrap()...)
	} else {
		errs = append(errs, data)
	}
	return &notInStepError{errs: append(errs, ErrNotInStep), limit: limit}
}

func (e *notInStepError) Error() string {
	s := ""
	for _, err := range e.errs[:len(e.errs)-1] {
		s += err.Error() + "; "
	}
	return s + ErrNotInStep.Error() + " (discarded " + strconv.FormatInt(e.limit, 10) + " bytes)"
}

func (e *notInStepError) Unwrap() []error { return e.errs }

// A limitError is a limit's sentinel error with the limit that was hit.
type limitError struct {
	err   error
	limit int64
	unit  string
}

func (e *limitError) Error() string {
	return e.err.Error() + " (limit " + strconv.FormatInt(e.limit, 10) + " " + e.unit + ")"
}

func (e *limitError) Unwrap() error { return e.err }

// Is makes a line too long match dot.ErrLineTooLong as well, so that every
// error of a dot block (ReadDotLines's too) can be told by dot's sentinels.
func (e *limitError) Is(target error) bool {
	return e.err == ErrLineTooLong && target == dot.ErrLineTooLong
}

func lineTooLong(limit int) error {
	return &limitError{ErrLineTooLong, int64(limit), "bytes"}
}

func headerTooLarge(limit int64, unit string) error {
	return &limitError{ErrHeaderTooLarge, limit, unit}
}

func isLimitError(err error) bool {
	_, ok := err.(*limitError)
	return ok
}

package textproto

import "errors"

// Limits bounds what a [Reader] will accept from its peer. The zero value
// sets no limits, which is what [NewReader] gives and what net/textproto does.
// A Reader with limits never buffers more than the limit of a line or header
// block, however long the peer's input is.
type Limits struct {
	// MaxLineBytes bounds the length of one line, not counting its line
	// ending. Longer lines fail with an error matching ErrLineTooLong.
	MaxLineBytes int

	// MaxHeaderBytes bounds the total size of a MIME header block read by
	// ReadMIMEHeader, line endings included. Larger headers fail with an
	// error matching ErrHeaderTooLarge.
	MaxHeaderBytes int64

	// MaxHeaderFields bounds the number of fields in a MIME header block.
	// More fields fail with an error matching ErrHeaderTooLarge.
	MaxHeaderFields int

	// MaxDotBytes bounds the decoded size of one dot-encoded block.
	// Larger blocks fail with an error matching dot.ErrTooLarge, after the
	// rest of the block, terminator included, has been read and discarded.
	MaxDotBytes int64
}

// Errors reported when input exceeds the Reader's [Limits].
var (
	ErrLineTooLong    = errors.New("textproto: line too long")
	ErrHeaderTooLarge = errors.New("textproto: header too large")
)

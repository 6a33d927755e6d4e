package textproto

import "bufio"

// A Reader implements convenience methods for reading requests
// or responses from a text protocol network connection.
type Reader struct {
	R   *bufio.Reader
	dot *dotReader
	buf []byte // a re-usable buffer
	lim Limits
}

// NewReader returns a new [Reader] reading from r.
func NewReader(r *bufio.Reader) *Reader {
	return &Reader{R: r}
}

// SetLimits sets the limits r enforces from now on.
func (r *Reader) SetLimits(l Limits) { r.lim = l }

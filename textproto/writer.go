package textproto

import "bufio"

// A Writer implements convenience methods for writing
// requests or responses to a text protocol network connection.
type Writer struct {
	W   *bufio.Writer
	dot *dotWriter
}

// NewWriter returns a new [Writer] writing to w.
func NewWriter(w *bufio.Writer) *Writer {
	return &Writer{W: w}
}

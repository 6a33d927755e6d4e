package textproto

import (
	"bufio"
	"fmt"
)

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

var crlf = []byte("\r\n")

// PrintfLine closes an open DotWriter, writes the line formatted by format
// and args (as fmt.Fprintf would) followed by \r\n, and flushes W. It
// returns the error of the flush, which reports any earlier write error.
func (w *Writer) PrintfLine(format string, args ...any) error {
	w.closeDot()
	fmt.Fprintf(w.W, format, args...)
	w.W.Write(crlf)
	return w.W.Flush()
}

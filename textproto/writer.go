package textproto

import (
	"bufio"
	"fmt"
)

// A Writer writes the lines and dot-encoded blocks of a text protocol to W.
type Writer struct {
	W      *bufio.Writer
	dot    *dotWriter
	chunks *ChunkWriter
	err    error // sticky: a Strict or Raw DotWriter failed mid-block
}

// NewWriter returns a [Writer] that writes to w.
func NewWriter(w *bufio.Writer) *Writer {
	return &Writer{W: w}
}

var crlf = []byte("\r\n")

// PrintfLine closes an open DotWriter or ChunkWriter, writes the line formatted by format
// and args (as fmt.Fprintf would) followed by \r\n, and flushes W. It
// returns the error of the flush, which reports any earlier write error.
// After a Strict or Raw DotWriter failed mid-block it writes nothing and
// returns that writer's error (see [Writer.DotWriterMode]).
func (w *Writer) PrintfLine(format string, args ...any) error {
	w.closeDot()
	w.closeChunks()
	if w.err != nil {
		return w.err
	}
	fmt.Fprintf(w.W, format, args...)
	w.W.Write(crlf)
	return w.W.Flush()
}

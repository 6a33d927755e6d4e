package smtpsource

import (
	"io"
	"strconv"
)

// traced returns rd and w, or, with Config.Trace set, the two copying
// what passes through them to it as the lines of connection id.
func (r *run) traced(id int64, rd io.Reader, w io.Writer) (io.Reader, io.Writer) {
	if r.cfg.Trace == nil {
		return rd, w
	}
	return traceReader{rd, r, id}, traceWriter{w, r, id}
}

type traceReader struct {
	io.Reader
	r  *run
	id int64
}

func (t traceReader) Read(p []byte) (int, error) {
	n, err := t.Reader.Read(p)
	if n > 0 {
		t.r.trace(t.id, '<', p[:n])
	}
	return n, err
}

type traceWriter struct {
	io.Writer
	r  *run
	id int64
}

func (t traceWriter) Write(p []byte) (int, error) {
	n, err := t.Writer.Write(p)
	if n > 0 {
		t.r.trace(t.id, '>', p[:n])
	}
	return n, err
}

// trace writes one line of connection id to Config.Trace: dir, then p
// quoted.
func (r *run) trace(id int64, dir byte, p []byte) {
	r.traceMu.Lock()
	defer r.traceMu.Unlock()
	b := strconv.AppendInt(r.traceBuf[:0], id, 10)
	b = append(b, ' ', dir, ' ')
	b = strconv.AppendQuote(b, string(p))
	b = append(b, '\n')
	r.cfg.Trace.Write(b)
	r.traceBuf = b
}

package textproto

import (
	"errors"
	"io"
)

// WriteChunk sends p as one BDAT chunk (RFC 3030 CHUNKING): the command
// "BDAT <len(p)>", with " LAST" if last is set, then p, and flushes W. It
// closes an open DotWriter or ChunkWriter first. The server answers each
// chunk; read its reply before the next chunk unless it offers
// PIPELINING.
func (w *Writer) WriteChunk(p []byte, last bool) error {
	w.closeDot()
	w.closeChunks()
	if w.err != nil {
		return w.err
	}
	var hdr [maxChunkHeader]byte
	w.W.Write(appendChunkHeader(hdr[:0], len(p), last))
	w.W.Write(p)
	return w.W.Flush()
}

// ChunkWriter returns a writer that sends what is written to it as BDAT
// chunks of chunkSize bytes (RFC 3030 CHUNKING), the last of them, of the
// bytes left (maybe none), with LAST when it is closed. Data is sent as it
// is: BDAT data is not dot-encoded.
//
// It sends the chunks one after another without reading the server's
// replies, which RFC 3030 allows only with PIPELINING: read them, one per
// chunk ([ChunkWriter.Chunks] counts them), after Close. (An LMTP server
// answers the LAST chunk once for each recipient it accepted, as it
// answers the end of DATA: RFC 2033.) Without PIPELINING, send each chunk
// with [Writer.WriteChunk] and read its reply.
// Close flushes W; another call on w closes the writer first. A chunkSize
// of 0 or less means DefaultChunkSize.
func (w *Writer) ChunkWriter(chunkSize int) *ChunkWriter {
	w.closeDot()
	w.closeChunks()
	if chunkSize < 1 {
		chunkSize = DefaultChunkSize // not a chunk a byte
	}
	// After a failed Strict or Raw DotWriter it sends nothing.
	w.chunks = &ChunkWriter{w: w, size: chunkSize, open: true, err: w.err}
	return w.chunks
}

// DefaultChunkSize is the chunk size of a ChunkWriter asked for none.
const DefaultChunkSize = 64 << 10

// A ChunkWriter sends data as BDAT chunks; see [Writer.ChunkWriter].
type ChunkWriter struct {
	w    *Writer
	size int    // the chunk size
	buf  []byte // the data of the next chunk, less than size bytes
	sent int    // chunks sent
	open bool
	err  error // the first write error
}

var _ io.WriteCloser = (*ChunkWriter)(nil)

// ErrChunkWriterClosed is the error of a write to a closed ChunkWriter.
var ErrChunkWriterClosed = errors.New("textproto: write to a closed ChunkWriter")

// Write sends the full chunks of data that p completes and keeps the
// rest for the next chunk. A chunk that p holds whole is sent straight
// from p.
func (c *ChunkWriter) Write(p []byte) (n int, err error) {
	if !c.open {
		return 0, ErrChunkWriterClosed
	}
	if c.err != nil {
		return 0, c.err
	}
	for len(p) > 0 {
		if len(c.buf) == 0 && len(p) >= c.size {
			if err := c.send(p[:c.size], false); err != nil {
				return n, err
			}
			p, n = p[c.size:], n+c.size
			continue
		}
		if c.buf == nil {
			// Room for a chunk of the default size at most: a larger
			// chunk grows as it is written, so that a chunk size of, say,
			// math.MaxInt (everything as one chunk) allocates no more than
			// the data.
			c.buf = make([]byte, 0, min(c.size, DefaultChunkSize))
		}
		m := min(len(p), c.size-len(c.buf))
		c.buf = append(c.buf, p[:m]...)
		p, n = p[m:], n+m
		if len(c.buf) == c.size {
			if err := c.send(c.buf, false); err != nil {
				return n, err
			}
			c.buf = c.buf[:0]
		}
	}
	return n, nil
}

// send writes one chunk to W's buffer.
func (c *ChunkWriter) send(p []byte, last bool) error {
	var hdr [maxChunkHeader]byte
	bw := c.w.W
	bw.Write(appendChunkHeader(hdr[:0], len(p), last))
	_, err := bw.Write(p)
	if err != nil {
		c.err = err
		return err
	}
	c.sent++
	return nil
}

// Close sends the bytes not yet sent as the LAST chunk and flushes W. It
// returns the first write error, if any. Closing again does nothing.
func (c *ChunkWriter) Close() error {
	if !c.open {
		return c.err
	}
	c.open = false
	if c.err != nil {
		return c.err
	}
	if err := c.send(c.buf, true); err != nil {
		return err
	}
	c.buf = c.buf[:0]
	if err := c.w.W.Flush(); err != nil {
		c.err = err
	}
	return c.err
}

// Chunks returns the number of chunks sent so far: the number of replies
// an SMTP server owes. An LMTP server answers the LAST chunk once for each
// recipient it accepted (RFC 2033), so after Close it owes Chunks()-1
// replies and then one per such recipient. A chunk counts once it is in
// the Writer's buffer, so after a write error (the connection is then of
// no more use) the count depends on that buffer's size and says nothing
// of what the server got.
func (c *ChunkWriter) Chunks() int { return c.sent }

// closeChunks closes an open ChunkWriter.
func (w *Writer) closeChunks() {
	if w.chunks != nil && w.chunks.open {
		w.chunks.Close()
	}
}

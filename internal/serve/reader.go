package serve

import (
	"bytes"
	"net"
	"sync"

	"github.com/wirespeed/wirespeed/netio"
)

// smallRead is the read buffer each connection of the std engine owns:
// an idle connection holds this much, not a 64 KiB buffer.
const smallRead = 1 << 10

// bigRead is the size of the pooled buffers a connection reads into while
// its reads fill the small one.
const bigRead = 64 << 10

var bigPool = sync.Pool{New: func() any { b := make([]byte, bigRead); return &b }}

// A connReader reads a connection into its small buffer, and into a pooled
// big one from the read after one that filled the small buffer until a
// read that does not fill the big one. The bytes a read returns are valid
// until the next read or release.
type connReader struct {
	c     net.Conn
	small [smallRead]byte
	big   *[]byte
	full  bool // the last read filled its buffer
}

func (r *connReader) read() ([]byte, error) {
	buf := r.small[:]
	if r.full {
		if r.big == nil {
			r.big = bigPool.Get().(*[]byte)
		}
		buf = *r.big
	} else if r.big != nil {
		r.release()
	}
	n, err := r.c.Read(buf)
	r.full = n == len(buf)
	return buf[:n], err
}

// release returns the big buffer to the pool.
func (r *connReader) release() {
	if r.big != nil {
		bigPool.Put(r.big)
		r.big = nil
	}
}

// A pooledReader reads a netio.Conn with ReadPooled: a connection waiting
// for data holds no read buffer at all.
type pooledReader struct{ c *netio.Conn }

func (r pooledReader) read() ([]byte, error) { return r.c.ReadPooled() }
func (r pooledReader) release()              {}

// A lineSplitter cuts a stream into lines of at most MaxLine bytes,
// keeping a line that crosses reads in a buffer of its own (dropped once
// the line is done if it grew past smallRead).
type lineSplitter struct {
	partial []byte
}

// lines calls f with each complete line of data (the partial line of
// earlier data first) and keeps the rest. It returns false if a line is
// longer than MaxLine or f returns false.
func (s *lineSplitter) lines(data []byte, f func(line []byte) bool) bool {
	if len(s.partial) > 0 {
		i := bytes.IndexByte(data, '\n') + 1
		if i == 0 {
			s.partial = append(s.partial, data...)
			return len(s.partial) <= MaxLine
		}
		s.partial = append(s.partial, data[:i]...)
		data = data[i:]
		if len(s.partial) > MaxLine || !f(s.partial) {
			return false
		}
		s.partial = s.partial[:0]
		if cap(s.partial) > smallRead {
			s.partial = nil
		}
	}
	for {
		i := bytes.IndexByte(data, '\n') + 1
		if i == 0 {
			break
		}
		if i > MaxLine || !f(data[:i]) {
			return false
		}
		data = data[i:]
	}
	if len(data) > MaxLine {
		return false
	}
	s.partial = append(s.partial, data...)
	return true
}

package textproto

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// The Strict/Raw and BDAT writer session: one Writer, Strict and Raw dot
// blocks, PrintfLine, ChunkWriters and WriteChunk in any order, written in
// fuzz-chosen pieces, compared call by call with a model written from RFC
// 5321 §4.5.2, RFC 3030 and the package doc (modelWriter), and read back
// with the package's own Reader (DotReaderMode(dot.Raw), Chunks) as a
// second check.

// A modelWriter is what a Writer must do, kept apart from the code: the
// bytes it must send (out), and the result of each call.
type modelWriter struct {
	out    []byte
	failed error // sticky: a Strict or Raw dot writer failed mid-block
	cur    any   // the open *modelDot or *modelChunks, if any
	events []event
	// flushed is len(out) at the last call that flushed W, evEnd at the
	// end of the last event.
	flushed, evEnd int
}

// An event is what a reader of the stream will find: a command line, a
// dot block's data (Raw: as written, CRLF-ended), or a BDAT chunk.
type event struct {
	kind string // "cmd", "dot", "bdat"
	data []byte
	last bool
}

type modelDot struct {
	m      *modelWriter
	raw    bool
	bol    bool // at the start of a line (the data starts at one)
	cr     bool // a CR held back: it must be followed by LF
	off    int64
	open   bool
	closed bool // ended with its end line
	data   []byte
}

// syntaxErr is a bare CR or LF at off, as an encoder reports it.
func syntaxErr(off int64, kind error) error { return &dot.SyntaxError{Offset: off, Err: kind} }

func (m *modelWriter) closeCur() {
	switch c := m.cur.(type) {
	case *modelDot:
		if c.open {
			c.Close()
		}
	case *modelChunks:
		if c.open {
			c.Close()
		}
	}
	m.cur = nil
}

func (m *modelWriter) dotWriter(raw bool) *modelDot {
	m.closeCur()
	d := &modelDot{m: m, raw: raw, bol: true, open: true}
	m.cur = d
	return d
}

// Write: RFC 5321 §4.5.2: a line that begins with "." gets another; the
// input is CRLF lines, and a CR not followed by LF or an LF not after a
// CR is refused (package doc) at the offset of that byte in the block's
// input; the bytes before it are sent, a CR before it is counted as
// written (it was consumed) but never sent.
func (d *modelDot) Write(p []byte) (int, error) {
	if d.m.failed != nil {
		return 0, d.m.failed
	}
	if d.closed {
		return 0, dot.ErrClosed
	}
	for i, c := range p {
		switch {
		case d.cr && c == '\n':
			d.m.out = append(d.m.out, "\r\n"...)
			d.data = append(d.data, "\r\n"...)
			d.cr, d.bol = false, true
		case d.cr:
			d.m.failed = syntaxErr(d.off-1, dot.ErrBareCR)
			return i, d.m.failed
		case c == '\r':
			d.cr = true
		case c == '\n':
			d.m.failed = syntaxErr(d.off, dot.ErrBareLF)
			return i, d.m.failed
		default:
			if d.bol && c == '.' {
				d.m.out = append(d.m.out, '.')
			}
			d.m.out = append(d.m.out, c)
			d.data = append(d.data, c)
			d.bol = false
		}
		d.off++
	}
	return len(p), nil
}

// ReadFrom writes what src yields; an error of src's fails the Writer
// with an error matching it.
func (d *modelDot) ReadFrom(data []byte, srcErr error) (int64, error) {
	if d.m.failed != nil {
		return 0, d.m.failed
	}
	if d.closed {
		return 0, dot.ErrClosed
	}
	n, err := d.Write(data)
	if err != nil {
		return int64(n), err
	}
	if srcErr != nil {
		d.m.failed = fmt.Errorf("source: %w", srcErr)
		return int64(n), srcErr
	}
	return int64(n), nil
}

// Close: a CRLF if the last line is open, then ".\r\n" (RFC 5321: the
// data ends with CRLF "." CRLF; empty data is the end line alone).
func (d *modelDot) Close() error {
	d.open = false
	if d.m.failed != nil {
		return d.m.failed
	}
	if d.closed {
		return dot.ErrClosed
	}
	if d.cr {
		d.m.failed = syntaxErr(d.off-1, dot.ErrBareCR)
		return d.m.failed
	}
	if !d.bol {
		d.m.out = append(d.m.out, "\r\n"...)
		d.data = append(d.data, "\r\n"...)
	}
	d.m.out = append(d.m.out, ".\r\n"...)
	d.closed = true
	d.m.events = append(d.m.events, event{kind: "dot", data: d.data})
	d.m.flushed, d.m.evEnd = len(d.m.out), len(d.m.out)
	return nil
}

func (m *modelWriter) PrintfLine(line string) error {
	m.closeCur()
	if m.failed != nil {
		return m.failed
	}
	m.out = append(m.out, line+"\r\n"...)
	m.events = append(m.events, event{kind: "cmd", data: []byte(line)})
	m.flushed, m.evEnd = len(m.out), len(m.out)
	return nil
}

// chunk sends one BDAT chunk (RFC 3030): "BDAT" SP size [SP "LAST"] CRLF,
// then exactly size bytes.
func (m *modelWriter) chunk(p []byte, last bool) {
	hdr := "BDAT " + strconv.Itoa(len(p))
	if last {
		hdr += " LAST"
	}
	m.out = append(m.out, hdr+"\r\n"...)
	m.out = append(m.out, p...)
	m.events = append(m.events, event{kind: "bdat", data: bytes.Clone(p), last: last})
	m.evEnd = len(m.out)
}

func (m *modelWriter) WriteChunk(p []byte, last bool) error {
	m.closeCur()
	if m.failed != nil {
		return m.failed
	}
	m.chunk(p, last)
	m.flushed = len(m.out)
	return nil
}

type modelChunks struct {
	m    *modelWriter
	size int
	buf  []byte
	sent int
	open bool
	err  error
}

func (m *modelWriter) ChunkWriter(size int) *modelChunks {
	m.closeCur()
	if size < 1 {
		size = DefaultChunkSize
	}
	c := &modelChunks{m: m, size: size, open: true, err: m.failed}
	m.cur = c
	return c
}

// Write sends every chunk of exactly size bytes as soon as it is complete.
func (c *modelChunks) Write(p []byte) (int, error) {
	if !c.open {
		return 0, ErrChunkWriterClosed
	}
	if c.err != nil {
		return 0, c.err
	}
	for _, b := range p {
		c.buf = append(c.buf, b)
		if len(c.buf) == c.size {
			c.m.chunk(c.buf, false)
			c.buf, c.sent = nil, c.sent+1
		}
	}
	return len(p), nil
}

// Close sends the rest, maybe nothing, as the LAST chunk.
func (c *modelChunks) Close() error {
	if !c.open {
		return c.err
	}
	c.open = false
	if c.err != nil {
		return c.err
	}
	c.m.chunk(c.buf, true)
	c.buf, c.sent = nil, c.sent+1
	c.m.flushed = len(c.m.out)
	return nil
}

// errClass says what an error is, for comparing the code's with the
// model's: nil, a bare CR or LF at an offset, or the errors it matches.
func errClass(err error) string {
	if err == nil {
		return "nil"
	}
	var se *dot.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax(%v@%d)", se.Err, se.Offset)
	}
	var k []string
	for _, e := range []error{dot.ErrClosed, ErrChunkWriterClosed, errBroken, errCopySource, io.EOF} {
		if errors.Is(err, e) {
			k = append(k, e.Error())
		}
	}
	if len(k) == 0 {
		return "other(" + err.Error() + ")"
	}
	return strings.Join(k, "+")
}

// byteSink takes limit bytes (all if negative), then fails every Write
// with errBroken.
type byteSink struct {
	bytes.Buffer
	limit int
}

func (s *byteSink) Write(p []byte) (int, error) {
	if s.limit >= 0 && s.Len()+len(p) > s.limit {
		k := max(s.limit-s.Len(), 0)
		s.Buffer.Write(p[:k])
		return k, errBroken
	}
	return s.Buffer.Write(p)
}

var modelChunkSizes = []int{0, 1, 2, 3, 5, 16, 100, 5000}

// modelSession runs script on a Writer and on the model, and fails t at
// the first difference. Each byte of script is one call: the low three
// bits choose it, the rest its argument.
func modelSession(t *testing.T, data, script []byte, size uint8, limit int) {
	t.Helper()
	bufSize := compatBufSizes[int(size)%len(compatBufSizes)]
	sink := &byteSink{limit: limit}
	bw := bufio.NewWriterSize(sink, bufSize)
	w := NewWriter(bw)
	m := &modelWriter{}
	var log strings.Builder
	broken := false // the sink has failed a call: from then on, invariants only
	type pair struct {
		got  io.WriteCloser
		want any
	}
	var writers []pair
	cur := func() (io.WriteCloser, any) {
		if m.cur == nil {
			writers = append(writers, pair{w.DotWriterMode(dot.Strict), m.dotWriter(false)})
		}
		p := writers[len(writers)-1]
		return p.got, p.want
	}
	check := func(call string, gotN, wantN int64, got, want error, flushes bool) {
		t.Helper()
		fmt.Fprintf(&log, "%s: %d %s; ", call, gotN, errClass(got))
		if broken || errors.Is(got, errBroken) {
			// The sink failed: what was sent is a prefix of what
			// should have been, and nothing that writes succeeds.
			broken = true
			if got == nil && flushes {
				t.Fatalf("%s after the sink failed returned nil\n%s", call, &log)
			}
			return
		}
		if gotN != wantN || errClass(got) != errClass(want) {
			t.Fatalf("%s: got %d %s, model %d %s\n%s", call, gotN, errClass(got), wantN, errClass(want), &log)
		}
		if flushes && got == nil && !bytes.Equal(sink.Bytes(), m.out[:m.flushed]) {
			t.Fatalf("%s: sent %q, model %q\n%s", call, sink.Bytes(), m.out[:m.flushed], &log)
		}
	}
	for i, b := range script {
		arg := int(b >> 3)
		switch b & 7 {
		case 0:
			raw := arg&1 != 0
			mode := dot.Strict
			if raw {
				mode = dot.Raw
			}
			writers = append(writers, pair{w.DotWriterMode(mode), m.dotWriter(raw)})
			fmt.Fprintf(&log, "dot %v; ", mode)
		case 1, 2:
			p := takePiece(&data, arg)
			got, want := cur()
			n, err := got.Write(p)
			var wn int
			var werr error
			switch mw := want.(type) {
			case *modelDot:
				wn, werr = mw.Write(p)
			case *modelChunks:
				wn, werr = mw.Write(p)
			}
			check(fmt.Sprintf("write %d", len(p)), int64(n), int64(wn), err, werr, false)
		case 3:
			got, want := cur()
			p := takePiece(&data, arg>>2)
			src := &pieceSource{data: p, n: pieceSizes[arg%len(pieceSizes)]}
			var srcErr error
			if arg&16 != 0 {
				src.err, src.withData, srcErr = errCopySource, arg&8 != 0, errCopySource
			}
			n, err := io.Copy(got, onlyReader{src})
			var wn int64
			var werr error
			switch mw := want.(type) {
			case *modelDot:
				wn, werr = mw.ReadFrom(p, srcErr)
			case *modelChunks:
				// io.Copy: ChunkWriter is no ReaderFrom.
				if len(p) > 0 {
					var k int
					k, werr = mw.Write(p)
					wn = int64(k)
				}
				if werr == nil && srcErr != nil {
					werr = srcErr
				}
			}
			check(fmt.Sprintf("copy %d", len(p)), n, wn, err, werr, false)
		case 4:
			got, want := cur()
			err := got.Close()
			var werr error
			switch mw := want.(type) {
			case *modelDot:
				werr = mw.Close()
			case *modelChunks:
				werr = mw.Close()
				if cw, ok := got.(*ChunkWriter); ok && !broken && err == nil && cw.Chunks() != mw.sent {
					t.Fatalf("Chunks() %d, model %d\n%s", cw.Chunks(), mw.sent, &log)
				}
			}
			m.cur = nil
			check("close", 0, 0, err, werr, true)
		case 5:
			line := fmt.Sprintf("CMD %d", i)
			check("printf", 0, 0, w.PrintfLine("%s", line), m.PrintfLine(line), true)
		case 6:
			writers = append(writers, pair{w.ChunkWriter(modelChunkSizes[arg%len(modelChunkSizes)]),
				m.ChunkWriter(modelChunkSizes[arg%len(modelChunkSizes)])})
			fmt.Fprintf(&log, "chunks %d; ", modelChunkSizes[arg%len(modelChunkSizes)])
		case 7:
			if arg&1 == 0 || len(writers) == 0 {
				p := takePiece(&data, arg>>2)
				last := arg&2 != 0
				check(fmt.Sprintf("chunk %d %v", len(p), last), 0, 0, w.WriteChunk(p, last), m.WriteChunk(p, last), true)
				break
			}
			// A writer used after the next call on w, or the current one.
			pw := writers[(arg>>1)%len(writers)]
			if arg&2 != 0 {
				err := pw.got.Close()
				var werr error
				switch mw := pw.want.(type) {
				case *modelDot:
					werr = mw.Close()
				case *modelChunks:
					werr = mw.Close()
				}
				check("stale close", 0, 0, err, werr, false)
				break
			}
			p := takePiece(&data, arg>>3)
			n, err := pw.got.Write(p)
			var wn int
			var werr error
			switch mw := pw.want.(type) {
			case *modelDot:
				wn, werr = mw.Write(p)
			case *modelChunks:
				wn, werr = mw.Write(p)
			}
			check(fmt.Sprintf("stale write %d", len(p)), int64(n), int64(wn), err, werr, false)
		}
	}
	ferr := bw.Flush()
	if !broken && ferr == nil {
		if !bytes.Equal(sink.Bytes(), m.out) {
			t.Fatalf("sent %q\nmodel %q\n%s", sink.Bytes(), m.out, &log)
		}
		readBack(t, sink.Bytes(), m.events, m.out[m.evEnd:], &log)
		return
	}
	if !bytes.HasPrefix(m.out, sink.Bytes()) {
		t.Fatalf("the sink failed; sent %q, not a prefix of the model's %q\n%s", sink.Bytes(), m.out, &log)
	}
}

// readBack reads the stream with the package's Reader: every command,
// every dot block (Raw: its data as written) and every chunk must come
// back as the model says it went out.
func readBack(t *testing.T, out []byte, events []event, wantRest []byte, log fmt.Stringer) {
	t.Helper()
	r := NewReader(bufio.NewReader(bytes.NewReader(out)))
	var msg *Chunks
	for i, e := range events {
		if e.kind != "bdat" {
			msg = nil
		}
		switch e.kind {
		case "cmd":
			line, err := r.ReadLine()
			if err != nil || line != string(e.data) {
				t.Fatalf("event %d: read %q %v, want command %q\n%s", i, line, err, e.data, log)
			}
		case "dot":
			got, err := io.ReadAll(r.DotReaderMode(dot.Raw))
			if err != nil || !bytes.Equal(got, e.data) {
				t.Fatalf("event %d: read block %q %v, want %q\n%s", i, got, err, e.data, log)
			}
		case "bdat":
			line, err := r.ReadLine()
			f := strings.Fields(line)
			if err != nil || len(f) < 2 || f[0] != "BDAT" || (len(f) == 3) != e.last || (len(f) == 3 && f[2] != "LAST") {
				t.Fatalf("event %d: read %q %v, want a BDAT command\n%s", i, line, err, log)
			}
			size, _ := strconv.ParseInt(f[1], 10, 64)
			if msg == nil {
				msg = r.Chunks(ChunkOptions{Binary: true})
			}
			got, err := io.ReadAll(msg.Next(size, e.last))
			if err != nil || !bytes.Equal(got, e.data) {
				t.Fatalf("event %d: read chunk %q %v, want %q\n%s", i, got, err, e.data, log)
			}
			if e.last {
				msg = nil
			}
		}
	}
	if rest, _ := io.ReadAll(r.R); !bytes.Equal(rest, wantRest) {
		t.Fatalf("left over %q, want %q (a block not ended)\n%s", rest, wantRest, log)
	}
}

// FuzzWriterModel compares Strict and Raw dot writers, ChunkWriter and
// WriteChunk, in any order on one Writer with PrintfLine between them,
// written in fuzz-chosen pieces (1 byte to 1 MiB, by Write or io.Copy
// from a source that may fail), with a model of RFC 5321 dot-stuffing and
// RFC 3030 framing (modelWriter): every call's result, the typed error of
// a bare CR or LF and its offset, the bytes sent at each flush. The
// stream is then read back with the package's Reader. With limit >= 0 the
// connection takes limit bytes and then fails: what it took must be a
// prefix of the model's stream, and no call that writes may succeed after.
// With clean set, every bare CR or LF in data is made a CRLF, so that
// sessions go on past the first block. A call moves up to 1 MiB:
// minimizing an input takes 2000 at most (tooltest.LimitMinimizing), not
// the fuzzer's minute.
//
//	go test -run '^$' -fuzz FuzzWriterModel -parallel 1 -fuzztime 2m ./textproto
func FuzzWriterModel(f *testing.F) {
	tooltest.LimitMinimizing(f, 2000)
	seeds := []struct {
		data   string
		script []byte
		size   uint8
		limit  int16
		clean  bool
	}{
		{"a\r\n.b\r\n..\r\n", []byte{1 | 3<<3, 1 | 4<<3, 4, 5}, 7, -1, false},
		{"a\r\nb\nc", []byte{0 | 1<<3, 2 | 5<<3, 4, 5}, 7, -1, false},
		{"x\rx", []byte{1 | 10<<3, 4, 5}, 4, -1, false},
		{"line\r", []byte{1 | 10<<3, 4, 6, 1, 4}, 4, -1, false},
		{"hello world, chunked", []byte{6 | 3<<3, 1 | 8<<3, 2 | 9<<3, 4, 7 | 2<<3, 7, 5}, 4, -1, false},
		{"one\ntwo\n.three\n", []byte{0, 3 | 10<<3, 4, 0 | 1<<3, 3 | 16<<3, 4, 5, 7 | 3<<3, 7 | 1<<3}, 5, -1, true},
		{"abc\r\n", []byte{3 | 16<<3, 5, 0, 4}, 6, -1, false},
		{strings.Repeat(".x\r\n", 3000), []byte{1 | 19<<3, 4, 5}, 2, 40, false},
		{strings.Repeat("chunky", 1000), []byte{6 | 7<<3, 1 | 18<<3, 4, 5}, 3, 100, false},
	}
	for _, s := range seeds {
		f.Add([]byte(s.data), s.script, s.size, s.limit, s.clean)
	}
	f.Fuzz(func(t *testing.T, data, script []byte, size uint8, limit int16, clean bool) {
		if len(data) > 1<<17 || len(script) > 32 {
			return
		}
		if clean {
			data = cleanLines(data)
		}
		modelSession(t, data, script, size, int(limit))
	})
}

// cleanLines makes every bare CR or LF of b a CRLF.
func cleanLines(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n':
			out = append(out, "\r\n"...)
			i++
		case b[i] == '\r' || b[i] == '\n':
			out = append(out, "\r\n"...)
		default:
			out = append(out, b[i])
		}
	}
	return out
}

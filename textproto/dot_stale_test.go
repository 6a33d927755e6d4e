package textproto

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	stdtp "net/textproto"
	"strings"
	"testing"
)

// Dot readers and writers used after their block: net/textproto gives every
// block a new one, and an old one goes on in its own state (a drained
// reader returns io.EOF, an old writer writes to W again). These tests run
// every short sequence of calls on old and new handles against both
// packages and compare every result and the bytes consumed or written.

// hiccupReader delivers data n bytes at a time and fails once, with
// errHiccup, when it reaches offset at (if at >= 0); then it goes on.
type hiccupReader struct {
	data   []byte
	pos, n int
	at     int
}

var errHiccup = errors.New("transient read error (test)")

func (h *hiccupReader) Read(p []byte) (int, error) {
	if h.pos == h.at {
		h.at = -1
		return 0, errHiccup
	}
	end := min(len(h.data), h.pos+h.n, h.pos+len(p))
	if h.at > h.pos {
		end = min(end, h.at)
	}
	if h.pos == end {
		return 0, io.EOF
	}
	k := copy(p, h.data[h.pos:end])
	h.pos += k
	return k, nil
}

// A staleStep is one call: on the Reader or Writer (handle < 0), or on the
// handle-th dot reader or writer it returned.
type staleStep struct {
	kind   string
	handle int
	n      int    // Read size
	data   string // Write data
}

func (s staleStep) String() string {
	switch {
	case s.handle < 0:
		return s.kind
	case s.n > 0:
		return fmt.Sprintf("%s%d(%d)", s.kind, s.handle, s.n)
	case s.data != "":
		return fmt.Sprintf("%s%d(%q)", s.kind, s.handle, s.data)
	}
	return fmt.Sprintf("%s%d", s.kind, s.handle)
}

// staleSeqs calls f with every sequence of up to maxLen steps drawn from
// perHandle (for each handle already made by a "new" step) and global,
// with at most maxHandles handles.
func staleSeqs(maxLen, maxHandles int, perHandle, global []staleStep, f func([]staleStep)) {
	var seq []staleStep
	var walk func(handles int)
	walk = func(handles int) {
		f(seq)
		if len(seq) == maxLen {
			return
		}
		try := func(s staleStep, h int) {
			seq = append(seq, s)
			walk(h)
			seq = seq[:len(seq)-1]
		}
		if handles < maxHandles {
			try(staleStep{kind: "new", handle: -1}, handles+1)
		}
		for h := 0; h < handles; h++ {
			for _, s := range perHandle {
				s.handle = h
				try(s, handles)
			}
		}
		for _, s := range global {
			try(s, handles)
		}
	}
	walk(0)
}

// staleReaderAPI is the part of both Readers the reader sequences use.
type staleReaderAPI interface {
	DotReader() io.Reader
	ReadLine() (string, error)
	ReadDotBytes() ([]byte, error)
	ReadDotLines() ([]string, error)
	ReadMIMEHeader() (stdtp.MIMEHeader, error)
}

// runStaleReader runs seq on r, which reads br from src, and logs every
// result and how far br's input was consumed.
func runStaleReader(r staleReaderAPI, br *bufio.Reader, src *hiccupReader, seq []staleStep) string {
	var log strings.Builder
	var handles []io.Reader
	for _, s := range seq {
		fmt.Fprintf(&log, "%v: ", s)
		switch s.kind {
		case "new":
			handles = append(handles, r.DotReader())
		case "read":
			b := make([]byte, s.n)
			n, err := handles[s.handle].Read(b)
			fmt.Fprintf(&log, "%q %s", b[:n], errString(err))
		case "copy":
			// Ours implements io.WriterTo, net/textproto's is read with Read.
			var buf bytes.Buffer
			n, err := io.Copy(&buf, handles[s.handle])
			fmt.Fprintf(&log, "%d %q %s", n, buf.Bytes(), errString(err))
		case "line":
			l, err := r.ReadLine()
			fmt.Fprintf(&log, "%q %s", l, errString(err))
		case "dotbytes":
			b, err := r.ReadDotBytes()
			fmt.Fprintf(&log, "%q %s", b, errString(err))
		case "dotlines":
			l, err := r.ReadDotLines()
			fmt.Fprintf(&log, "%q %s", l, errString(err))
		case "header":
			// ReadMIMEHeader peeks at R before it drains an open block.
			h, err := r.ReadMIMEHeader()
			fmt.Fprintf(&log, "%v %s", h, errString(err))
		}
		fmt.Fprintf(&log, " @%d\n", src.pos-br.Buffered())
	}
	return log.String()
}

func TestStaleDotReaderMatchesStdlib(t *testing.T) {
	inputs := []string{
		"one\r\n..1\r\n.\r\ntwo\r\n.\r\nthree\r\n.\r\nline\r\n",
		"a\n.\nb\r\n.\r",
		"x\r\n.\r\nunterminated",
	}
	perHandle := []staleStep{{kind: "read", n: 1}, {kind: "read", n: 64}, {kind: "copy"}}
	global := []staleStep{{kind: "line", handle: -1}, {kind: "dotbytes", handle: -1}}
	if !testing.Short() {
		global = append(global, staleStep{kind: "dotlines", handle: -1}, staleStep{kind: "header", handle: -1})
	}
	maxLen := 5
	if testing.Short() || raceEnabled {
		maxLen = 4
	}
	runs := 0
	for _, in := range inputs {
		for _, bufSize := range []int{16, 4096} {
			for _, chunk := range []int{1, 4096} {
				// A read error cuts a block: a reader left stale after it
				// reads on from the stream, in net/textproto.
				for _, at := range []int{-1, 0, 4, 9, len(in) - 2} {
					open := func() (*bufio.Reader, *hiccupReader) {
						src := &hiccupReader{data: []byte(in), n: chunk, at: at}
						return bufio.NewReaderSize(src, bufSize), src
					}
					staleSeqs(maxLen, 3, perHandle, global, func(seq []staleStep) {
						runs++
						sb, ssrc := open()
						ob, osrc := open()
						want := runStaleReader(stdtp.NewReader(sb), sb, ssrc, seq)
						got := runStaleReader(NewReader(ob), ob, osrc, seq)
						if got != want {
							t.Fatalf("input %q, bufio %d, chunk %d, error at %d, calls %v:\nnet/textproto:\n%swirespeed:\n%s",
								in, bufSize, chunk, at, seq, want, got)
						}
					})
				}
			}
		}
	}
	t.Logf("%d sequences", runs)
}

// TestStaleDotReader shows the case that used to differ: a reader kept past
// its block returns io.EOF, and the new one gets the next block.
func TestStaleDotReader(t *testing.T) {
	r := NewReader(bufio.NewReader(strings.NewReader("one\r\n.\r\nCMD\r\ntwo\r\n.\r\n")))
	d1 := r.DotReader()
	if l, err := r.ReadLine(); l != "CMD" || err != nil {
		t.Fatalf("ReadLine: %q, %v", l, err)
	}
	d2 := r.DotReader()
	b := make([]byte, 16)
	if n, err := d1.Read(b); n != 0 || err != io.EOF {
		t.Fatalf("old reader: %q, %v; want io.EOF", b[:n], err)
	}
	if n, err := d1.(io.WriterTo).WriteTo(io.Discard); n != 0 || err != nil {
		t.Fatalf("old reader WriteTo: %d, %v; want 0, nil", n, err)
	}
	if got, err := io.ReadAll(d2); string(got) != "two\n" || err != nil {
		t.Fatalf("new reader: %q, %v", got, err)
	}
}

// errAfterWriter accepts n bytes, then fails.
type errAfterWriter struct {
	buf bytes.Buffer
	n   int
}

func (w *errAfterWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.buf.Write(p[:k])
		w.n = 0
		return k, errBroken
	}
	w.n -= len(p)
	return w.buf.Write(p)
}

// runStaleWriter runs seq on w, which writes through bw to out, and logs
// every result and what out has received.
func runStaleWriter(w dotWriterAPI, bw *bufio.Writer, out *errAfterWriter, seq []staleStep) string {
	var log strings.Builder
	var handles []io.WriteCloser
	for _, s := range seq {
		fmt.Fprintf(&log, "%v: ", s)
		switch s.kind {
		case "new":
			handles = append(handles, w.DotWriter())
		case "write":
			n, err := handles[s.handle].Write([]byte(s.data))
			fmt.Fprintf(&log, "%d %s", n, errString(err))
		case "copy":
			// Hide strings.Reader's WriteTo: ours then uses ReadFrom,
			// net/textproto's Write.
			n, err := io.Copy(handles[s.handle], struct{ io.Reader }{strings.NewReader(s.data)})
			fmt.Fprintf(&log, "%d %s", n, errString(err))
		case "close":
			fmt.Fprintf(&log, "%s", errString(handles[s.handle].Close()))
		case "printf":
			fmt.Fprintf(&log, "%s", errString(w.PrintfLine("CMD %d", 1)))
		}
		fmt.Fprintf(&log, " %q+%d\n", out.buf.Bytes(), bw.Buffered())
	}
	return log.String()
}

func TestStaleDotWriterMatchesStdlib(t *testing.T) {
	perHandle := []staleStep{
		{kind: "write", data: ".a\r"}, {kind: "write", data: "\nb\n"},
		{kind: "copy", data: "c\r\n.d"}, {kind: "close"},
	}
	global := []staleStep{{kind: "printf", handle: -1}}
	maxLen := 5
	if testing.Short() || raceEnabled {
		maxLen = 4
	}
	runs := 0
	for _, bufSize := range []int{16, 4096} {
		for _, limit := range []int{1 << 20, 5, 21} {
			staleSeqs(maxLen, 3, perHandle, global, func(seq []staleStep) {
				runs++
				so, oo := &errAfterWriter{n: limit}, &errAfterWriter{n: limit}
				sb, ob := bufio.NewWriterSize(so, bufSize), bufio.NewWriterSize(oo, bufSize)
				want := runStaleWriter(stdtp.NewWriter(sb), sb, so, seq)
				got := runStaleWriter(NewWriter(ob), ob, oo, seq)
				if got != want {
					t.Fatalf("bufio %d, writer fails after %d bytes, calls %v:\nnet/textproto:\n%swirespeed:\n%s",
						bufSize, limit, seq, want, got)
				}
			})
		}
	}
	t.Logf("%d sequences", runs)
}

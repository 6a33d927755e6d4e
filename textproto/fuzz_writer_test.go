package textproto

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	stdtp "net/textproto"
	"strconv"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// The Compat writer session: one Writer, several dot blocks written in
// fuzz-chosen pieces (Write or io.Copy), PrintfLine between them, blocks
// ended by Close (once or twice), by PrintfLine or by the next DotWriter,
// writes to stale dot writers, and an underlying writer that fails part
// way (a short write and an error, for good or for a while, with the
// caller resetting W to go on). net/textproto is the oracle: every call's
// result and every Write that reaches the underlying writer must match.

// pieceSizes are the write-piece sizes the session ops choose from: small,
// around bufio sizes, and larger than ReadFrom's 32 KiB window.
var pieceSizes = []int{1, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 33, 64, 100, 4095, 4096, 4097, 32 << 10, 40000, 1 << 20}

// flakySink logs every Write that reaches it. It fails calls from number
// failAt on (if not negative) for span calls (span 0: for good), taking
// the first take bytes of each failed call (at most half of it).
type flakySink struct {
	log    []byte // each call's bytes, after its length and whether it failed
	calls  int
	failAt int
	span   int
	take   int
}

func (s *flakySink) Write(p []byte) (int, error) {
	i := s.calls
	s.calls++
	if s.failAt >= 0 && i >= s.failAt && (s.span == 0 || i < s.failAt+s.span) {
		k := min(s.take, len(p)/2)
		s.log = fmt.Appendf(s.log, "|fail %d:", len(p))
		s.log = append(s.log, p[:k]...)
		return k, errBroken
	}
	s.log = fmt.Appendf(s.log, "|%d:", len(p))
	s.log = append(s.log, p...)
	return len(p), nil
}

// errCopySource is the error a session's io.Copy source may fail with.
var errCopySource = errors.New("source failed (test)")

// pieceSource returns data in Reads of at most n bytes, then io.EOF or err
// (with the last bytes if withData).
type pieceSource struct {
	data     []byte
	n        int
	err      error
	withData bool
}

func (s *pieceSource) Read(p []byte) (int, error) {
	end := io.EOF
	if s.err != nil {
		end = s.err
	}
	if len(s.data) == 0 {
		return 0, end
	}
	k := min(len(p), s.n, len(s.data))
	copy(p, s.data[:k])
	s.data = s.data[k:]
	if len(s.data) == 0 && s.withData {
		return k, end
	}
	return k, nil
}

// takePiece cuts the next piece of size pieceSizes[arg] off *data.
func takePiece(data *[]byte, arg int) []byte {
	k := min(pieceSizes[arg%len(pieceSizes)], len(*data))
	p := (*data)[:k]
	*data = (*data)[k:]
	return p
}

// compatSession runs the script on w (net/textproto's or ours) writing
// through bw to sink, and returns what it saw.
func compatSession(w dotWriterAPI, bw *bufio.Writer, sink *flakySink, data []byte, script []byte) string {
	var res strings.Builder
	var dws []io.WriteCloser // every dot writer, the current one last
	cur := func() io.WriteCloser {
		if len(dws) == 0 {
			dws = append(dws, w.DotWriter())
		}
		return dws[len(dws)-1]
	}
	for i, b := range script {
		arg := int(b >> 3)
		switch b & 7 {
		case 0:
			dws = append(dws, w.DotWriter())
			fmt.Fprintf(&res, "dot; ")
		case 1, 2: // more Writes than anything else
			p := takePiece(&data, arg)
			n, err := cur().Write(p)
			fmt.Fprintf(&res, "write %d: %d %s; ", len(p), n, errString(err))
		case 3:
			p := takePiece(&data, arg>>2)
			src := &pieceSource{data: p, n: pieceSizes[arg%len(pieceSizes)]}
			if arg&16 != 0 {
				src.err, src.withData = errCopySource, arg&8 != 0
			}
			n, err := io.Copy(cur(), onlyReader{src})
			fmt.Fprintf(&res, "copy %d: %d %s; ", len(p), n, errString(err))
		case 4:
			fmt.Fprintf(&res, "close %s; ", errString(cur().Close()))
		case 5:
			fmt.Fprintf(&res, "printf %s; ", errString(w.PrintfLine("CMD %d", i)))
		case 6:
			// A stale dot writer (or the current one) writes on, or is
			// closed again.
			if len(dws) == 0 {
				break
			}
			d := dws[arg%len(dws)]
			if arg&1 != 0 {
				fmt.Fprintf(&res, "stale close %s; ", errString(d.Close()))
				break
			}
			p := takePiece(&data, arg>>1)
			n, err := d.Write(p)
			fmt.Fprintf(&res, "stale write %d: %d %s; ", len(p), n, errString(err))
		case 7:
			// The caller drops W's error and goes on (a reconnect that
			// keeps the session, or a transient error).
			bw.Reset(sink)
			fmt.Fprintf(&res, "reset; ")
		}
	}
	fmt.Fprintf(&res, "buffered %d; flush %s; ", bw.Buffered(), errString(bw.Flush()))
	return res.String() + "writes " + strconv.Quote(string(sink.log))
}

// compatSink makes the sink cfg describes: cfg%4 == 0 never fails, else
// from call cfg>>2%16 on, for good (1), for one call (2) or three (3),
// taking cfg>>6 bytes of a failed call.
func compatSink(cfg uint16) *flakySink {
	s := &flakySink{failAt: -1}
	if kind := cfg % 4; kind != 0 {
		s.failAt = int(cfg >> 2 % 16)
		s.span = []int{0, 0, 1, 3}[kind]
		s.take = int(cfg >> 6)
	}
	return s
}

var compatBufSizes = []int{1, 2, 3, 5, 16, 17, 64, 4096}

func diffCompatSession(t *testing.T, data, script []byte, size uint8, cfg uint16) {
	t.Helper()
	bufSize := compatBufSizes[int(size)%len(compatBufSizes)]
	ss, os := compatSink(cfg), compatSink(cfg)
	sbw, obw := bufio.NewWriterSize(ss, bufSize), bufio.NewWriterSize(os, bufSize)
	want := compatSession(stdtp.NewWriter(sbw), sbw, ss, data, script)
	got := compatSession(NewWriter(obw), obw, os, data, script)
	if got != want {
		t.Fatalf("data %q, script %x, bufio size %d, sink %+v:\nnet/textproto: %s\nwirespeed:     %s",
			data, script, bufSize, *compatSink(cfg), want, got)
	}
}

// FuzzDotWriterSession compares a Writer's dot blocks, written in
// fuzz-chosen pieces (1 byte to 1 MiB, by Write or io.Copy from a source
// that may fail), several in turn on one Writer with PrintfLine, Close
// twice, stale dot writers and an underlying writer that fails part way
// (and a caller that resets W after it), with net/textproto's, call by
// call and Write by Write. Each byte of script is one call: its low three
// bits the method, the rest its argument; see compatSession. A call
// moves up to 1 MiB: minimizing an input takes 2000 at most
// (tooltest.LimitMinimizing), not the fuzzer's minute.
//
//	go test -run '^$' -fuzz FuzzDotWriterSession -parallel 1 -fuzztime 2m ./textproto
func FuzzDotWriterSession(f *testing.F) {
	tooltest.LimitMinimizing(f, 2000)
	seeds := []struct {
		data   string
		script []byte
		size   uint8
		cfg    uint16
	}{
		{"a\nb\n.c\r\n", []byte{1, 4, 5, 0, 1, 4}, 4, 0},
		{".\r\n..\n\r\r\n.x", []byte{1, 9, 17, 25, 5, 2, 2, 2, 12}, 0, 0},
		{"line\nline\n", []byte{3, 5, 3 | 16<<3, 4, 4}, 5, 0},
		{"hello\r\nworld\n.\n", []byte{1, 9, 0, 2, 10, 6, 14, 5}, 2, 1 | 3<<2 | 2<<6},
		{"abc\r\n.def\r", []byte{2, 2, 2, 7, 2, 4, 7, 5}, 1, 2 | 2<<2 | 1<<6},
		{"x\ny\nz\n", []byte{1, 3 | 24<<3, 5, 1, 0, 1}, 3, 3 | 1<<2},
		{strings.Repeat("0123456789\n.", 400), []byte{1 | 14<<3, 2 | 16<<3, 4, 3 | 19<<3, 4}, 6, 0},
		{strings.Repeat(".\r", 3000), []byte{1 | 19<<3, 4}, 7, 1 | 5<<2 | 100<<6},
	}
	for _, s := range seeds {
		f.Add([]byte(s.data), s.script, s.size, s.cfg)
	}
	f.Fuzz(func(t *testing.T, data, script []byte, size uint8, cfg uint16) {
		if len(data) > 1<<16 || len(script) > 32 {
			return
		}
		diffCompatSession(t, data, script, size, cfg)
	})
}

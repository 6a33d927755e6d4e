package textproto

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	stdtp "net/textproto"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// chunkReader returns at most n bytes per Read, and err (if set) with the
// last bytes instead of a separate io.EOF.
type chunkReader struct {
	data []byte
	n    int
	err  error
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	if len(c.data) == 0 && c.err != nil {
		return k, c.err
	}
	return k, nil
}

var errBroken = errors.New("broken pipe (test)")

// readerCase is one way of delivering input to both Readers.
type readerCase struct {
	chunk   int   // bytes per underlying Read
	bufSize int   // bufio size
	readLen int   // DotReader Read size; 0 means io.Copy (WriterTo)
	tailErr error // error after the data, instead of io.EOF
}

func (c readerCase) String() string {
	return fmt.Sprintf("chunk=%d/buf=%d/read=%d/err=%v", c.chunk, c.bufSize, c.readLen, c.tailErr)
}

// dotReadResult records everything a DotReader session can observe.
type dotReadResult struct {
	reads []string // each Read's data and error, or io.Copy's
	data  []byte
	next  string // what ReadLine returns after the block
	nextE string
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%T(%v)", err, err)
}

// sessionStd and sessionWS run the same session on the standard library and
// on wirespeed: decode one dot block, then read the next line.
func sessionStd(in []byte, c readerCase) dotReadResult {
	br := bufio.NewReaderSize(&chunkReader{data: in, n: c.chunk, err: c.tailErr}, c.bufSize)
	r := stdtp.NewReader(br)
	return runSession(r.DotReader(), func() (string, error) { return br.ReadString('\n') }, c.readLen, "std")
}

func sessionWS(in []byte, c readerCase) dotReadResult {
	br := bufio.NewReaderSize(&chunkReader{data: in, n: c.chunk, err: c.tailErr}, c.bufSize)
	r := NewReader(br)
	return runSession(r.DotReader(), func() (string, error) { return br.ReadString('\n') }, c.readLen, "ws")
}

// onlyReader hides everything but Read, so io.Copy cannot take a WriterTo
// path: this is how the standard library's DotReader is copied.
type onlyReader struct{ io.Reader }

func runSession(d io.Reader, readLine func() (string, error), readLen int, impl string) dotReadResult {
	var res dotReadResult
	if readLen == 0 {
		var buf bytes.Buffer
		src := d
		if impl == "std" {
			src = onlyReader{d}
		} else if _, ok := d.(io.WriterTo); !ok {
			panic("wirespeed DotReader is not an io.WriterTo")
		}
		n, err := io.Copy(&buf, src)
		res.reads = append(res.reads, fmt.Sprintf("copy %d %s", n, errString(err)))
		res.data = buf.Bytes()
	} else {
		b := make([]byte, readLen)
		for i := 0; i < 1<<20; i++ {
			n, err := d.Read(b)
			if err != nil || n != len(b) { // full reads without error are implied by data
				res.reads = append(res.reads, fmt.Sprintf("#%d: %d %s", i, n, errString(err)))
			}
			res.data = append(res.data, b[:n]...)
			if err != nil {
				break
			}
		}
	}
	line, err := readLine()
	res.next, res.nextE = line, errString(err)
	return res
}

func diffSession(t *testing.T, in []byte, c readerCase) {
	t.Helper()
	want, got := sessionStd(in, c), sessionWS(in, c)
	if fmt.Sprint(want.reads) != fmt.Sprint(got.reads) || !bytes.Equal(want.data, got.data) ||
		want.next != got.next || want.nextE != got.nextE {
		t.Fatalf("input %q, %v:\nstdlib:    reads %v\n           then ReadLine %q %s\nwirespeed: reads %v\n           then ReadLine %q %s",
			in, c, want.reads, want.next, want.nextE, got.reads, got.next, got.nextE)
	}
}

// dotInputs are hand-picked inputs around every state of the decoder.
var dotInputs = []string{
	"", ".", ".\r", ".\n", ".\r\n", "\r\n.\r\n", "\n.\n", "a\n.\n", "a\r\n.\r\n",
	"..\r\n.\r\n", "...\r\n.\r\n", ".a\r\n.\r\n", "a\rb\r\n.\r\n", "\r\r\n.\r\n",
	"\r.\r\n.\r\n", ".\r.\r\n.\r\n", ".\rx\n.\n", "\n\n.\n", "a\n\n.x\n.\n", "line1\nline2\n.\nafter\n",
	"hello\r\n.\r\nnext line\r\n", "no end\r\n", "no end", "x\r", ".\r\r\n.\r\n",
	"a\r\n..\r\n.\r\n.\r\n", "\x00.\r\n.\r\n", "\r\n\x00.\r\n", "\r\n.\r", "\r\n.\r\nX",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n.\r\n",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\r\r\naaaaaaaaaaaaaaaaaa\n.\r\n",
}

func readerCases() []readerCase {
	var cs []readerCase
	for _, chunk := range []int{1, 2, 3, 7, 4096} {
		for _, bs := range []int{16, 17, 4096} {
			for _, rl := range []int{1, 2, 3, 5, 64, 0} {
				for _, te := range []error{nil, errBroken, io.ErrUnexpectedEOF} {
					cs = append(cs, readerCase{chunk, bs, rl, te})
				}
			}
		}
	}
	return cs
}

func TestDotReaderMatchesStdlib(t *testing.T) {
	cases := readerCases()
	for _, in := range dotInputs {
		for _, c := range cases {
			diffSession(t, []byte(in), c)
		}
	}
}

// randomDotInput returns input built mostly from the bytes that matter to
// dot decoding.
func randomDotInput(r *rand.Rand, n int) []byte {
	const alphabet = "..\r\r\n\n\nab\x00"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return b
}

func TestDotReaderMatchesStdlibRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := readerCases()
	iters := 3000
	if testing.Short() {
		iters = 300
	}
	for i := 0; i < iters; i++ {
		in := randomDotInput(r, r.IntN(60))
		diffSession(t, in, cases[r.IntN(len(cases))])
	}
}

func FuzzDotReader(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	for i, in := range dotInputs {
		f.Add([]byte(in), uint8(i), uint8(i*7))
	}
	cases := readerCases()
	f.Fuzz(func(t *testing.T, in []byte, c1, c2 uint8) {
		if len(in) > 4<<10 {
			return
		}
		diffSession(t, in, cases[(int(c1)<<8|int(c2))%len(cases)])
	})
}

// writerSession writes in with the given Write sizes (0: io.Copy), then
// closes, and records what the caller and the underlying writer saw.
type writeResult struct {
	calls []string
	out   []byte
}

// failWriter accepts limit bytes, then fails.
type failWriter struct {
	buf   bytes.Buffer
	limit int
}

func (w *failWriter) Write(p []byte) (int, error) {
	if w.limit >= 0 && w.buf.Len()+len(p) > w.limit {
		k := w.limit - w.buf.Len()
		w.buf.Write(p[:k])
		return k, errBroken
	}
	return w.buf.Write(p)
}

type writerCase struct {
	bufSize  int
	writeLen int // 0: io.Copy (ReaderFrom for wirespeed)
	limit    int // bytes the underlying writer accepts; -1: all
	close    int // 0: Close once; 1: Close twice; 2: close by PrintfLine
}

func (c writerCase) String() string {
	return fmt.Sprintf("buf=%d/write=%d/limit=%d/close=%d", c.bufSize, c.writeLen, c.limit, c.close)
}

type dotWriterAPI interface {
	DotWriter() io.WriteCloser
	PrintfLine(string, ...any) error
}

func writeSession(w dotWriterAPI, fw *failWriter, in []byte, c writerCase, impl string) writeResult {
	var res writeResult
	d := w.DotWriter()
	if c.writeLen == 0 {
		var n int64
		var err error
		if impl == "std" {
			n, err = io.Copy(d, onlyReader{bytes.NewReader(in)})
		} else {
			if _, ok := d.(io.ReaderFrom); !ok {
				panic("wirespeed DotWriter is not an io.ReaderFrom")
			}
			n, err = io.Copy(d, onlyReader{bytes.NewReader(in)})
		}
		res.calls = append(res.calls, fmt.Sprintf("copy %d %s", n, errString(err)))
	} else {
		for p := in; len(p) > 0; {
			k := min(c.writeLen, len(p))
			n, err := d.Write(p[:k])
			res.calls = append(res.calls, fmt.Sprintf("write %d %s", n, errString(err)))
			p = p[k:]
		}
	}
	switch c.close {
	case 0:
		res.calls = append(res.calls, "close "+errString(d.Close()))
	case 1:
		res.calls = append(res.calls, "close "+errString(d.Close()))
		res.calls = append(res.calls, "close "+errString(d.Close()))
	case 2:
		res.calls = append(res.calls, "printf "+errString(w.PrintfLine("QUIT")))
	}
	res.out = fw.buf.Bytes()
	return res
}

func diffWriter(t *testing.T, in []byte, c writerCase) {
	t.Helper()
	fs := &failWriter{limit: c.limit}
	want := writeSession(stdtp.NewWriter(bufio.NewWriterSize(fs, c.bufSize)), fs, in, c, "std")
	fw := &failWriter{limit: c.limit}
	got := writeSession(NewWriter(bufio.NewWriterSize(fw, c.bufSize)), fw, in, c, "ws")
	if fmt.Sprint(want.calls) != fmt.Sprint(got.calls) || !bytes.Equal(want.out, got.out) {
		t.Fatalf("input %q, %v:\nstdlib:    %v %q\nwirespeed: %v %q", in, c, want.calls, want.out, got.calls, got.out)
	}
}

func writerCases() []writerCase {
	var cs []writerCase
	for _, bs := range []int{16, 17, 4096} {
		for _, wl := range []int{1, 2, 3, 7, 100, 0} {
			for _, lim := range []int{-1, 0, 5, 16, 17, 33} {
				for cl := 0; cl < 3; cl++ {
					cs = append(cs, writerCase{bs, wl, lim, cl})
				}
			}
		}
	}
	return cs
}

var dotWriterInputs = []string{
	"", ".", "\n", "\r", "\r\n", ".\n", ".\r\n", "a", "a\n", "a\r", "a\r\n", "\r\r\n", "\r\r\r\n",
	"..\n.", "\n.\n", "line one\nline two\n", ".leading\r\n..two\r\n", "a\rb\n", "\r.\n",
	"aaaaaaaaaaaaaaa\n.aaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n.\r\n", "\x00.\r\n",
	"................................................",
	"\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n",
}

func TestDotWriterMatchesStdlib(t *testing.T) {
	cases := writerCases()
	for _, in := range dotWriterInputs {
		for _, c := range cases {
			diffWriter(t, []byte(in), c)
		}
	}
}

func TestDotWriterMatchesStdlibRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cases := writerCases()
	iters := 3000
	if testing.Short() {
		iters = 300
	}
	for i := 0; i < iters; i++ {
		diffWriter(t, randomDotInput(r, r.IntN(80)), cases[r.IntN(len(cases))])
	}
}

// FuzzDotWriter compares a DotWriter with net/textproto's over one input
// (up to 64 KiB) and a writerCase. Minimizing an input takes 10000 calls
// at most (tooltest.LimitMinimizing): the fuzzer's minute for each input
// it found took most of a 3-minute run, at 0 execs/sec.
func FuzzDotWriter(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	for i, in := range dotWriterInputs {
		f.Add([]byte(in), uint8(i), uint8(i*5))
	}
	cases := writerCases()
	f.Fuzz(func(t *testing.T, in []byte, c1, c2 uint8) {
		if len(in) > 1<<16 {
			return
		}
		diffWriter(t, in, cases[(int(c1)<<8|int(c2))%len(cases)])
	})
}

package textproto

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// chunkModel is the reference for a message's BDAT data: it goes through
// data a byte at a time and returns the data as Chunks returns it when
// nothing is wrong, and the problems the data has. With atEnd unset, data
// is only a prefix of the message: a CR at its end is not decided yet.
func chunkModel(data []byte, opt ChunkOptions, atEnd bool) (out []byte, found uint8, lfOff, crOff int64) {
	lfOff, crOff = -1, -1
	line := 0
	long := func() {
		if opt.MaxLineBytes > 0 && line > opt.MaxLineBytes {
			found |= chunkLineTooLong
		}
	}
	for i := 0; i < len(data); i++ {
		b := data[i]
		if opt.Binary {
			out = append(out, b)
			continue
		}
		switch {
		case b == '\r' && i+1 < len(data) && data[i+1] == '\n':
			out = append(out, "\r\n"...)
			i++
			line = 0
		case b == '\r' && i+1 == len(data) && !atEnd:
			out = append(out, b) // decided later
		case b == '\r':
			out = append(out, b)
			if opt.Bare == dot.BareReject && found&chunkBareCR == 0 {
				found |= chunkBareCR
				crOff = int64(i)
			}
			line++
			long()
		case b == '\n' && opt.Bare == dot.BareNormalize:
			out = append(out, "\r\n"...)
			line = 0
		case b == '\n':
			out = append(out, b)
			if opt.Bare == dot.BareReject && found&chunkBareLF == 0 {
				found |= chunkBareLF
				lfOff = int64(i)
			}
			line++
			long()
		default:
			out = append(out, b)
			line++
			long()
		}
	}
	if opt.MaxBytes > 0 && int64(len(out)) > opt.MaxBytes {
		found |= chunkTooLarge
	}
	return out, found, lfOff, crOff
}

// checkChunkErr checks that err reports exactly the problems found.
func checkChunkErr(err error, found uint8, lfOff, crOff int64) error {
	kinds := []struct {
		bit uint8
		err error
	}{{chunkTooLarge, dot.ErrTooLarge}, {chunkLineTooLong, dot.ErrLineTooLong}, {chunkBareLF, dot.ErrBareLF}, {chunkBareCR, dot.ErrBareCR}}
	for _, k := range kinds {
		if errors.Is(err, k.err) != (found&k.bit != 0) {
			return fmt.Errorf("error %v; want the problems %04b", err, found)
		}
	}
	if found == 0 {
		return nil
	}
	var se *dot.SyntaxError
	if errors.As(err, &se) {
		want := lfOff
		if found&chunkBareLF == 0 {
			want = crOff
		}
		if se.Offset != want {
			return fmt.Errorf("error %v; want the offset %d", err, want)
		}
	}
	return nil
}

// serveChunks reads BDAT commands from r as a server does and the chunks
// with c, Read with buffers of readLen bytes (or WriteTo if readLen is 0),
// up to the LAST chunk. It returns the data, the index of the first chunk
// that ended with an error, and the error of the LAST chunk.
func serveChunks(r *Reader, c *Chunks, readLen int) (data []byte, failed int, err error) {
	failed = -1
	for i := 0; ; i++ {
		cmd, lerr := r.ReadLine()
		if lerr != nil {
			return data, failed, lerr
		}
		f := strings.Fields(cmd)
		if len(f) < 2 || f[0] != "BDAT" {
			return data, failed, fmt.Errorf("command %q", cmd)
		}
		size, _ := strconv.ParseInt(f[1], 10, 64)
		last := len(f) == 3 && f[2] == "LAST"
		k := c.Next(size, last)
		var cerr error
		if readLen == 0 {
			var b bytes.Buffer
			_, cerr = k.WriteTo(&b)
			data = append(data, b.Bytes()...)
		} else {
			buf := make([]byte, readLen)
			for {
				n, rerr := k.Read(buf)
				data = append(data, buf[:n]...)
				if rerr != nil {
					if rerr != io.EOF {
						cerr = rerr
					}
					break
				}
			}
		}
		if cerr != nil && failed < 0 {
			failed = i
		}
		err = cerr
		if last {
			return data, failed, err
		}
	}
}

// wireChunks sends msg with ChunkWriter in chunks of size bytes, written
// in pieces of writeLen bytes, followed by "QUIT".
func wireChunks(msg []byte, size, writeLen int) ([]byte, int) {
	var out bytes.Buffer
	w := NewWriter(bufio.NewWriterSize(&out, 64))
	cw := w.ChunkWriter(size)
	for p := msg; len(p) > 0; {
		n := min(writeLen, len(p))
		cw.Write(p[:n])
		p = p[n:]
	}
	cw.Close()
	sent := cw.Chunks()
	w.PrintfLine("QUIT")
	return out.Bytes(), sent
}

// TestChunksModel checks Chunks against chunkModel on many messages, every
// option, chunk sizes, bufio sizes and read sizes: the data, the chunk
// that fails first, the error, and that the next command reads correctly.
func TestChunksModel(t *testing.T) {
	msgs := []string{
		"", "a", "hello\r\n", "line one\r\nline two\r\n", ".\r\n..dots\r\n.\r\n",
		"bare\nlf\r\n", "bare\rcr\r\n", "end in cr\r", "\r\n\r\n", "\n\n\r\r",
		"a longer line than most here\r\nshort\r\n", "cr\r\r\nlf\n\r\n",
		strings.Repeat("x", 40) + "\r\n" + strings.Repeat("y", 41) + "\n",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 40 {
		b := make([]byte, rng.IntN(120))
		for i := range b {
			b[i] = "ab\r\n."[rng.IntN(5)]
		}
		msgs = append(msgs, string(b))
	}
	var opts []ChunkOptions
	for _, binary := range []bool{false, true} {
		for _, bare := range []dot.BarePolicy{dot.BareReject, dot.BareKeep, dot.BareNormalize} {
			for _, maxBytes := range []int64{-1, 5, 30} {
				for _, maxLine := range []int{-1, 4, 30} {
					opts = append(opts, ChunkOptions{Binary: binary, Bare: bare, MaxBytes: maxBytes, MaxLineBytes: maxLine})
				}
			}
		}
	}
	runs := 0
	for _, msg := range msgs {
		for _, opt := range opts {
			want, found, lfOff, crOff := chunkModel([]byte(msg), modelOpt(opt), true)
			for _, size := range []int{1, 2, 3, 7, 64} {
				wire, sent := wireChunks([]byte(msg), size, 5)
				// The first chunk whose end shows a problem.
				wantFail := -1
				for i := 0; i < sent && found != 0; i++ {
					end, atEnd := min((i+1)*size, len(msg)), i == sent-1
					if _, f, _, _ := chunkModel([]byte(msg)[:end], modelOpt(opt), atEnd); f != 0 {
						wantFail = i
						break
					}
				}
				for _, bufSize := range []int{16, 4096} {
					for _, readLen := range []int{0, 1, 3, 4096} {
						runs++
						where := fmt.Sprintf("msg %q, %+v, chunks of %d, bufio %d, reads of %d", msg, opt, size, bufSize, readLen)
						r := NewReader(bufio.NewReaderSize(bytes.NewReader(wire), bufSize))
						c := r.Chunks(opt)
						got, failed, err := serveChunks(r, c, readLen)
						if err := checkChunkErr(err, found, lfOff, crOff); err != nil {
							t.Fatalf("%s: %v", where, err)
						}
						if failed != wantFail {
							t.Fatalf("%s: chunk %d failed first (%v); want %d", where, failed, err, wantFail)
						}
						switch {
						case found == 0 && !bytes.Equal(got, want),
							found == chunkTooLarge && !bytes.Equal(got, want[:opt.MaxBytes]),
							!bytes.HasPrefix(want, got):
							t.Fatalf("%s: data %q; want %q", where, got, want)
						}
						if c.Size() != int64(len(got)) {
							t.Fatalf("%s: Size %d; want %d", where, c.Size(), len(got))
						}
						if !errors.Is(c.Err(), err) && c.Err() != err {
							t.Fatalf("%s: Err %v; want %v", where, c.Err(), err)
						}
						if l, err := r.ReadLine(); l != "QUIT" || err != nil {
							t.Fatalf("%s: then %q, %v", where, l, err)
						}
					}
				}
			}
		}
	}
	t.Logf("%d sessions", runs)
}

// modelOpt turns negative limits (none) into zero for the model.
func modelOpt(opt ChunkOptions) ChunkOptions {
	opt.MaxBytes = max(opt.MaxBytes, 0)
	opt.MaxLineBytes = max(opt.MaxLineBytes, 0)
	return opt
}

// TestChunksWire reads hand-written sessions.
func TestChunksWire(t *testing.T) {
	cases := []struct {
		name string
		opt  ChunkOptions
		lim  Limits
		in   string
		want string  // the data; with errs, what was returned is a prefix of it
		errs []error // the LAST chunk's error matches each
	}{
		{"one chunk", ChunkOptions{}, Limits{}, "BDAT 7 LAST\r\nhi\r\n.\r\n", "hi\r\n.\r\n", nil},
		{"three chunks", ChunkOptions{}, Limits{}, "BDAT 3\r\nhelBDAT 4\r\nlo\r\nBDAT 0 LAST\r\n", "hello\r\n", nil},
		{"CRLF split", ChunkOptions{}, Limits{}, "BDAT 2\r\na\rBDAT 1 LAST\r\n\n", "a\r\n", nil},
		{"no dot-stuffing", ChunkOptions{}, Limits{}, "BDAT 9 LAST\r\n..\r\n.\r\n\r\n", "..\r\n.\r\n\r\n", nil},
		{"bare LF", ChunkOptions{}, Limits{}, "BDAT 4\r\nab\ncBDAT 2 LAST\r\n\r\n", "ab\nc\r\n", []error{dot.ErrBareLF}},
		{"bare CR at a chunk's end", ChunkOptions{}, Limits{}, "BDAT 2\r\na\rBDAT 1 LAST\r\nb", "a\rb", []error{dot.ErrBareCR}},
		{"bare CR at the end", ChunkOptions{}, Limits{}, "BDAT 2 LAST\r\na\r", "a\r", []error{dot.ErrBareCR}},
		{"BareKeep", ChunkOptions{Bare: dot.BareKeep}, Limits{}, "BDAT 5 LAST\r\na\nb\rc", "a\nb\rc", nil},
		{"BareNormalize", ChunkOptions{Bare: dot.BareNormalize}, Limits{}, "BDAT 6 LAST\r\na\nb\rc\n", "a\r\nb\rc\r\n", nil},
		{"Binary", ChunkOptions{Binary: true, MaxLineBytes: 2}, Limits{}, "BDAT 6 LAST\r\na\nbcd\r", "a\nbcd\r", nil},
		{"MaxBytes over chunks", ChunkOptions{MaxBytes: 5}, Limits{}, "BDAT 3\r\nabcBDAT 3 LAST\r\ndef", "abcde", []error{dot.ErrTooLarge}},
		{"Limits.MaxDotBytes", ChunkOptions{}, Limits{MaxDotBytes: 5}, "BDAT 3\r\nabcBDAT 3 LAST\r\ndef", "abcde", []error{dot.ErrTooLarge}},
		{"no MaxBytes", ChunkOptions{MaxBytes: -1}, Limits{MaxDotBytes: 5}, "BDAT 3\r\nabcBDAT 3 LAST\r\ndef", "abcdef", nil},
		{"line over chunks", ChunkOptions{MaxLineBytes: 4}, Limits{}, "BDAT 3\r\nabcBDAT 4 LAST\r\nde\r\n", "abcde\r\n", []error{dot.ErrLineTooLong}},
		{"line of MaxLineBytes", ChunkOptions{MaxLineBytes: 5}, Limits{}, "BDAT 3\r\nabcBDAT 4 LAST\r\nde\r\n", "abcde\r\n", nil},
		{"Limits.MaxLineBytes", ChunkOptions{}, Limits{MaxLineBytes: 12}, "BDAT 15 LAST\r\nabcdefghijklm\r\n", "abcdefghijklm\r\n", []error{dot.ErrLineTooLong}},
		{"every kind", ChunkOptions{MaxBytes: 3, MaxLineBytes: 3}, Limits{}, "BDAT 9 LAST\r\nab\ncd\rxyz", "ab\ncd\rxyz", []error{dot.ErrTooLarge, dot.ErrLineTooLong, dot.ErrBareLF, dot.ErrBareCR}},
	}
	for _, c := range cases {
		for _, readLen := range []int{0, 1, 512} {
			for _, bufSize := range []int{16, 4096} {
				r := NewReader(bufio.NewReaderSize(strings.NewReader(c.in+"QUIT\r\n"), bufSize))
				r.SetLimits(c.lim)
				got, _, err := serveChunks(r, r.Chunks(c.opt), readLen)
				ok := string(got) == c.want
				if len(c.errs) > 0 {
					ok = strings.HasPrefix(c.want, string(got))
				}
				if !ok || (err == nil) != (len(c.errs) == 0) {
					t.Errorf("%s, reads of %d, bufio %d: %q, %v; want %q, %v", c.name, readLen, bufSize, got, err, c.want, c.errs)
				}
				for _, e := range c.errs {
					if !errors.Is(err, e) {
						t.Errorf("%s: %v does not match %v", c.name, err, e)
					}
				}
				if l, err := r.ReadLine(); l != "QUIT" || err != nil {
					t.Errorf("%s: then %q, %v", c.name, l, err)
				}
			}
		}
	}
}

// TestChunksPrecedence checks the text of an error with several kinds of
// problems: too large first, as dot's.
func TestChunksPrecedence(t *testing.T) {
	r := NewReader(bufio.NewReader(strings.NewReader("ab\ncd\rxyz")))
	k := r.Chunks(ChunkOptions{MaxBytes: 3, MaxLineBytes: 3}).Next(9, true)
	_, err := k.WriteTo(io.Discard)
	const want = "dot: data too large; dot: line too long; dot: bare LF at offset 2; dot: bare CR at offset 5"
	if err == nil || err.Error() != want {
		t.Errorf("%v; want %s", err, want)
	}
	var se *dot.SyntaxError
	if !errors.As(err, &se) || se.Offset != 2 {
		t.Errorf("errors.As: %v", se)
	}
}

// TestChunksInStep checks that a chunk left unread, or rejected, is
// consumed to its end by the next call, that a chunk after LAST fails,
// and that a chunk cut short by the end of the input fails with
// io.ErrUnexpectedEOF.
func TestChunksInStep(t *testing.T) {
	r := NewReader(bufio.NewReaderSize(strings.NewReader("abcdefgh"+"RSET\r\n"+"xyz"+"QUIT"+"NEXT\r\n"+"12"), 16))
	c := r.Chunks(ChunkOptions{})
	k := c.Next(8, false)
	b := make([]byte, 3)
	if n, err := k.Read(b); n != 3 || err != nil {
		t.Fatalf("%d, %v", n, err)
	}
	if l, err := r.ReadLine(); l != "RSET" || err != nil {
		t.Fatalf("after an unread chunk: %q, %v", l, err)
	}
	if n, err := k.Read(b); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("the ended chunk: %d, %v", n, err)
	}
	k = c.Next(3, true)
	k = c.Next(4, false) // ends the LAST chunk unread, then reads this one
	if _, err := k.WriteTo(io.Discard); !errors.Is(err, ErrChunkAfterLast) {
		t.Errorf("after LAST: %v", err)
	}
	if l, err := r.ReadLine(); l != "NEXT" || err != nil {
		t.Errorf("%q, %v", l, err)
	}
	c = r.Chunks(ChunkOptions{})
	if _, err := c.Next(5, true).WriteTo(io.Discard); !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(c.Err(), io.ErrUnexpectedEOF) {
		t.Errorf("cut short: %v, %v", err, c.Err())
	}
}

// TestChunksAllocs checks that Chunks allocates once per message and its
// chunks nothing, with Read or WriteTo, in every mode.
func TestChunksAllocs(t *testing.T) {
	chunk := strings.Repeat("some line of the message\r\n", 400)
	in := strings.Repeat("BDAT "+strconv.Itoa(len(chunk))+"\r\n"+chunk, 3) + "BDAT 0 LAST\r\n"
	src := strings.NewReader(in)
	r := NewReader(bufio.NewReader(src))
	buf := make([]byte, 1000)
	for _, opt := range []ChunkOptions{{}, {Binary: true}, {Bare: dot.BareKeep}, {Bare: dot.BareNormalize, MaxLineBytes: 998, MaxBytes: 1 << 20}} {
		for _, useRead := range []bool{false, true} {
			n := testing.AllocsPerRun(10, func() {
				src.Reset(in)
				r.R.Reset(src)
				c := r.Chunks(opt)
				for {
					cmd, err := r.ReadLine()
					if err != nil {
						t.Fatal(err)
					}
					f := strings.Fields(cmd)
					size, _ := strconv.ParseInt(f[1], 10, 64)
					k := c.Next(size, len(f) == 3)
					if useRead {
						for {
							if _, err := k.Read(buf); err != nil {
								break
							}
						}
					} else if _, err := k.WriteTo(io.Discard); err != nil {
						t.Fatal(err)
					}
					if len(f) == 3 {
						break
					}
				}
				if c.Err() != nil || c.Size() != int64(3*len(chunk)) {
					t.Fatalf("%v, %d", c.Err(), c.Size())
				}
			})
			// One for Chunks; the 4 strings of ReadLine and the 4 slices
			// of strings.Fields are the rest.
			if n > 1+8 {
				t.Errorf("%+v, Read %v: %v allocations per message; want 9", opt, useRead, n)
			}
		}
	}
}

// TestChunkWriter checks the wire bytes of WriteChunk and ChunkWriter.
func TestChunkWriter(t *testing.T) {
	var out strings.Builder
	w := NewWriter(bufio.NewWriter(&out))
	if err := w.WriteChunk([]byte("hello"), false); err != nil {
		t.Fatal(err)
	}
	w.WriteChunk(nil, true)
	if got, want := out.String(), "BDAT 5\r\nhello"+"BDAT 0 LAST\r\n"; got != want {
		t.Errorf("WriteChunk: %q; want %q", got, want)
	}
	for _, c := range []struct {
		size int
		in   []string
		want string
		n    int
	}{
		{4, []string{"abcdefghij"}, "BDAT 4\r\nabcdBDAT 4\r\nefghBDAT 2 LAST\r\nij", 3},
		{4, []string{"ab", "cd", "ef"}, "BDAT 4\r\nabcdBDAT 2 LAST\r\nef", 2},
		{4, []string{"abcd"}, "BDAT 4\r\nabcdBDAT 0 LAST\r\n", 2},
		{4, nil, "BDAT 0 LAST\r\n", 1},
		// No size is DefaultChunkSize, not a chunk a byte.
		{0, []string{"hello"}, "BDAT 5 LAST\r\nhello", 1},
		{-5, []string{"hello"}, "BDAT 5 LAST\r\nhello", 1},
	} {
		out.Reset()
		cw := w.ChunkWriter(c.size)
		for _, s := range c.in {
			io.WriteString(cw, s)
		}
		if err := cw.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != c.want || cw.Chunks() != c.n {
			t.Errorf("%q in chunks of %d: %q, %d chunks; want %q, %d", c.in, c.size, out.String(), cw.Chunks(), c.want, c.n)
		}
		if err := cw.Close(); err != nil || out.String() != c.want {
			t.Errorf("closed twice: %v, %q", err, out.String())
		}
		if _, err := cw.Write([]byte("x")); !errors.Is(err, ErrChunkWriterClosed) {
			t.Errorf("write after Close: %v", err)
		}
	}
	// Another call closes an open ChunkWriter.
	out.Reset()
	cw := w.ChunkWriter(10)
	io.WriteString(cw, "abc")
	w.PrintfLine("QUIT")
	if got, want := out.String(), "BDAT 3 LAST\r\nabcQUIT\r\n"; got != want {
		t.Errorf("%q; want %q", got, want)
	}
	// A write error is reported by Write or Close, and stays.
	w = NewWriter(bufio.NewWriterSize(brokenWriter{}, 16))
	cw = w.ChunkWriter(32)
	_, err := cw.Write(make([]byte, 100))
	if err == nil {
		err = cw.Close()
	}
	if !errors.Is(err, errInjected) || !errors.Is(cw.Close(), errInjected) {
		t.Errorf("write error: %v", err)
	}
}

// FuzzChunks checks Chunks against chunkModel on any message, options,
// chunk size, bufio size and read size. Minimizing an input takes 10000
// calls at most (tooltest.LimitMinimizing): the fuzzer's minute for each
// input it found took most of a 3-minute run, at 0 execs/sec.
//
//	go test -fuzz FuzzChunks -fuzztime 60s ./textproto
func FuzzChunks(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	for _, s := range []string{"", "a\r\n", "a\nb\rc\r\n", ".\r\n..\r\n", "\r\r\n\n", strings.Repeat("x", 70) + "\r\n"} {
		f.Add([]byte(s), byte(0), byte(3), byte(1))
		f.Add([]byte(s), byte(77), byte(1), byte(0))
	}
	f.Fuzz(func(t *testing.T, msg []byte, o, size, read byte) {
		opt := ChunkOptions{
			Binary:       o&1 != 0,
			Bare:         dot.BarePolicy(o >> 1 % 3),
			MaxBytes:     []int64{-1, 3, 40}[int(o>>3)%3],
			MaxLineBytes: []int{-1, 2, 9, 30}[int(o>>5)%4],
		}
		chunk := int(size%64) + 1
		readLen := []int{0, 1, 2, 7, 4096}[int(read)%5]
		want, found, lfOff, crOff := chunkModel(msg, modelOpt(opt), true)
		wire, _ := wireChunks(msg, chunk, 5)
		r := NewReader(bufio.NewReaderSize(bytes.NewReader(wire), 16+int(read)))
		got, _, err := serveChunks(r, r.Chunks(opt), readLen)
		if err := checkChunkErr(err, found, lfOff, crOff); err != nil {
			t.Fatalf("%+v, chunks of %d, reads of %d: %v", opt, chunk, readLen, err)
		}
		switch {
		case found == 0 && !bytes.Equal(got, want),
			found == chunkTooLarge && !bytes.Equal(got, want[:opt.MaxBytes]),
			!bytes.HasPrefix(want, got):
			t.Fatalf("%+v, chunks of %d, reads of %d: data %q; want %q", opt, chunk, readLen, got, want)
		}
		if l, err := r.ReadLine(); l != "QUIT" || err != nil {
			t.Fatalf("then %q, %v", l, err)
		}
	})
}

// TestChunksAfterOtherCalls checks that Next first finishes what the
// Reader left open (a dot block, an over-long line), and that
// ReadMIMEHeader first finishes an open chunk.
func TestChunksAfterOtherCalls(t *testing.T) {
	r := NewReader(bufio.NewReaderSize(strings.NewReader("dot block\r\n.\r\n"+"abc"+" Key: v\r\n\r\n"), 16))
	r.DotReader() // left unread
	c := r.Chunks(ChunkOptions{})
	k := c.Next(3, true)
	if b, err := io.ReadAll(k); string(b) != "abc" || err != nil {
		t.Fatalf("after a dot block: %q, %v", b, err)
	}
	r = NewReader(bufio.NewReaderSize(strings.NewReader(" chunk"+"Key: v\r\n\r\n"), 16))
	c = r.Chunks(ChunkOptions{})
	c.Next(6, true) // left unread; it starts with a space
	if h, err := r.ReadMIMEHeader(); err != nil || h.Get("Key") != "v" {
		t.Fatalf("after a chunk: %v, %v", h, err)
	}
	r = NewReader(bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 40)+"\r\n"+"abc"), 16))
	r.SetLimits(Limits{MaxLineBytes: 10})
	if _, err := r.ReadLine(); !errors.Is(err, ErrLineTooLong) {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(r.Chunks(ChunkOptions{}).Next(3, true)); string(b) != "abc" || err != nil {
		t.Fatalf("after a line too long: %q, %v", b, err)
	}
}

// TestChunksLarge checks Chunks against chunkModel on messages of many
// windows, mail-like lines with rare bare CRs, bare LFs, long lines and
// end markers, so that the fast paths run and hand over to the exact ones.
func TestChunksLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for m := range 12 {
		var b []byte
		for len(b) < 100<<10 {
			l := rng.IntN(90)
			if rng.IntN(200) == 0 {
				l = 1200
			}
			for range l {
				b = append(b, byte('a'+rng.IntN(26)))
			}
			switch k := rng.IntN(300); {
			case m%3 == 0: // clean
				b = append(b, "\r\n"...)
			case k == 0:
				b = append(b, '\n')
			case k == 1:
				b = append(b, '\r')
			case k == 2:
				b = append(b, "\r\n.\r\n"...)
			default:
				b = append(b, "\r\n"...)
			}
		}
		for _, opt := range []ChunkOptions{{}, {Bare: dot.BareKeep, MaxLineBytes: 998}, {Bare: dot.BareNormalize}, {Bare: dot.BareNormalize, MaxLineBytes: 998}, {MaxLineBytes: 998, MaxBytes: 60 << 10}} {
			want, found, lfOff, crOff := chunkModel(b, modelOpt(opt), true)
			for _, size := range []int{999, 40 << 10} {
				wire, _ := wireChunks(b, size, 3000)
				for _, readLen := range []int{0, 1000, 64 << 10} {
					r := NewReader(bufio.NewReader(bytes.NewReader(wire)))
					got, _, err := serveChunks(r, r.Chunks(opt), readLen)
					where := fmt.Sprintf("message %d, %+v, chunks of %d, reads of %d", m, opt, size, readLen)
					if err := checkChunkErr(err, found, lfOff, crOff); err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					switch {
					case found == 0 && !bytes.Equal(got, want),
						found == chunkTooLarge && !bytes.Equal(got, want[:opt.MaxBytes]),
						!bytes.HasPrefix(want, got):
						t.Fatalf("%s: %d bytes of data, not the %d expected", where, len(got), len(want))
					}
					if l, err := r.ReadLine(); l != "QUIT" || err != nil {
						t.Fatalf("%s: then %q, %v", where, l, err)
					}
				}
			}
		}
	}
}

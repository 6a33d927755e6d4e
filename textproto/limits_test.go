package textproto

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	stdtp "net/textproto"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// modelLines is what ReadLine returns, call by call, over input with
// MaxLineBytes max: each line without its \n or \r\n, or ErrLineTooLong
// for a longer one, which the next call skips; then io.EOF.
func modelLines(input []byte, max int) (lines []string, tooLong []bool) {
	for len(input) > 0 {
		line, rest, found := bytes.Cut(input, []byte("\n"))
		input = rest
		if found {
			line = bytes.TrimSuffix(line, []byte("\r"))
		}
		lines = append(lines, string(line))
		tooLong = append(tooLong, len(line) > max)
	}
	return lines, tooLong
}

// TestLimitLineModel checks ReadLine with MaxLineBytes against modelLines
// on random lines around the limit and the buffer size, fed in every way
// that ends with io.EOF.
func TestLimitLineModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for iter := 0; iter < 300; iter++ {
		max := 1 + rng.IntN(40)
		if iter%10 == 0 {
			max = 1 + rng.IntN(5000)
		}
		var in []byte
		for n := rng.IntN(12); n > 0; n-- {
			l := max - 2 + rng.IntN(5)
			if rng.IntN(4) == 0 {
				l = rng.IntN(3 * (max + 16))
			}
			for i := 0; i < l; i++ {
				in = append(in, "ab\r \x00"[rng.IntN(5)])
			}
			in = append(in, [][]byte{[]byte("\n"), []byte("\r\n"), nil}[rng.IntN(3)]...)
		}
		lines, tooLong := modelLines(in, max)
		for _, size := range []int{16, 37, 4096} {
			for _, f := range feeds {
				if f.final != nil || f.onceAt != 0 || f.stall || f.name == "timeout" {
					continue // an error would cut lines short: not the model
				}
				r := NewReader(bufio.NewReaderSize(f.open(in), size))
				r.SetLimits(Limits{MaxLineBytes: max})
				for i, want := range lines {
					got, err := r.ReadLine()
					if tooLong[i] {
						if !errors.Is(err, ErrLineTooLong) || got != "" {
							t.Fatalf("max %d, size %d, feed %s, input %q: line %d: got %q, %v; want ErrLineTooLong", max, size, f.name, in, i, got, err)
						}
						continue
					}
					if got != want || err != nil {
						t.Fatalf("max %d, size %d, feed %s, input %q: line %d: got %q, %v; want %q", max, size, f.name, in, i, got, err, want)
					}
				}
				if got, err := r.ReadLine(); got != "" || err != io.EOF {
					t.Fatalf("max %d, size %d, feed %s, input %q: at the end got %q, %v; want EOF", max, size, f.name, in, got, err)
				}
			}
		}
	}
}

// endless is a reader of the byte c forever, then (if tail is set and
// after n bytes) of tail.
type endless struct {
	c    byte
	n    int64 // bytes of c before tail; <0: forever
	tail []byte
	read int64
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n < 0 || e.read < e.n {
		if e.n >= 0 && int64(len(p)) > e.n-e.read {
			p = p[:e.n-e.read]
		}
		for i := range p {
			p[i] = e.c
		}
		e.read += int64(len(p))
		return len(p), nil
	}
	if len(e.tail) == 0 {
		return 0, io.EOF
	}
	n := copy(p, e.tail)
	e.tail = e.tail[n:]
	e.read += int64(n)
	return n, nil
}

// heapGrowth returns how many bytes f allocates.
func heapGrowth(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLimitEndlessLine feeds 64 MiB of one line without a newline: with
// MaxLineBytes the read fails after reading about a buffer's worth, the
// next read discards the rest without holding it, and both together
// allocate almost nothing.
func TestLimitEndlessLine(t *testing.T) {
	const stream = 64 << 20
	src := &endless{c: 'x', n: stream, tail: []byte("\r\nnext line\r\n")}
	r := NewReader(bufio.NewReader(src))
	r.SetLimits(Limits{MaxLineBytes: 1000})
	var line string
	var err1, err2 error
	grew := heapGrowth(func() {
		_, err1 = r.ReadLine()
		if src.read > 8192 {
			t.Errorf("read %d bytes before failing, want about one buffer", src.read)
		}
		line, err2 = r.ReadLine()
	})
	if !errors.Is(err1, ErrLineTooLong) {
		t.Fatalf("first ReadLine: %v, want ErrLineTooLong", err1)
	}
	if line != "next line" || err2 != nil {
		t.Fatalf("second ReadLine: %q, %v; want the line after the long one", line, err2)
	}
	if grew > 256<<10 {
		t.Errorf("reading a %d-byte line with a limit allocated %d bytes", stream, grew)
	}
	t.Logf("with MaxLineBytes 1000: %d bytes allocated for a %d-byte line", grew, stream)

	// The measurement works: without the limit the line is held whole.
	r = NewReader(bufio.NewReader(&endless{c: 'x', n: stream, tail: []byte("\r\n")}))
	grew = heapGrowth(func() { line, err2 = r.ReadLine() })
	if len(line) != stream || err2 != nil || grew < stream {
		t.Errorf("without a limit: %d-byte line, %v, %d bytes allocated", len(line), err2, grew)
	}
}

// TestLimitEndlessHeader feeds endless headers of several shapes: with a
// limit, ReadMIMEHeader fails, having allocated memory in proportion to
// the limit only.
func TestLimitEndlessHeader(t *testing.T) {
	cases := []struct {
		name string
		src  io.Reader
		lim  Limits
		want error
	}{
		{"one endless field/MaxHeaderBytes", io.MultiReader(strings.NewReader("A: "), &endless{c: 'v', n: -1}),
			Limits{MaxHeaderBytes: 64 << 10}, ErrHeaderTooLarge},
		{"one endless field/MaxLineBytes", io.MultiReader(strings.NewReader("A: "), &endless{c: 'v', n: -1}),
			Limits{MaxLineBytes: 1 << 10}, ErrLineTooLong},
		{"endless folding/MaxLineBytes", io.MultiReader(strings.NewReader("A: b\r\n"), &endless{c: ' ', n: -1}),
			Limits{MaxLineBytes: 1 << 10}, ErrLineTooLong},
		{"endless folding/MaxHeaderBytes", io.MultiReader(strings.NewReader("A: b\r\n"), &endless{c: '\t', n: -1}),
			Limits{MaxHeaderBytes: 1 << 10}, ErrHeaderTooLarge},
		{"endless fields/MaxHeaderBytes", &repeater{s: "Key: value\r\n"}, Limits{MaxHeaderBytes: 16 << 10}, ErrHeaderTooLarge},
		{"endless fields/MaxHeaderFields", &repeater{s: "Key: value\r\n"}, Limits{MaxHeaderFields: 1000}, ErrHeaderTooLarge},
		{"endless continuation lines/MaxLineBytes", &repeater{s: " more\r\n", first: "A: b\r\n"}, Limits{MaxLineBytes: 64 << 10}, ErrLineTooLong},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(bufio.NewReader(c.src))
			r.SetLimits(c.lim)
			var err error
			grew := heapGrowth(func() { _, err = r.ReadMIMEHeader() })
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if grew > 1<<20 {
				t.Errorf("allocated %d bytes", grew)
			}
			t.Logf("%v after %d bytes allocated", err, grew)
		})
	}
}

// A repeater reads first and then s forever.
type repeater struct {
	s, first string
	off      int
}

func (r *repeater) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if r.first != "" {
			k := copy(p[n:], r.first)
			r.first = r.first[k:]
			n += k
			continue
		}
		k := copy(p[n:], r.s[r.off:])
		r.off = (r.off + k) % len(r.s)
		n += k
	}
	return n, nil
}

// TestLimitContinuedLine checks that a continued line counts as one line.
func TestLimitContinuedLine(t *testing.T) {
	in := "a\r\n b\r\n c\r\nnext\r\n"
	// "a\r\n b\r\n c" is 9 bytes.
	for _, max := range []int{8, 9} {
		r := NewReader(bufio.NewReader(strings.NewReader(in)))
		r.SetLimits(Limits{MaxLineBytes: max})
		got, err := r.ReadContinuedLine()
		if max == 9 && (got != "a b c" || err != nil) {
			t.Errorf("max 9: %q, %v; want %q", got, err, "a b c")
		}
		if max == 8 && !errors.Is(err, ErrLineTooLong) {
			t.Errorf("max 8: %q, %v; want ErrLineTooLong", got, err)
		}
		if got, err := r.ReadContinuedLine(); got != "next" || err != nil {
			t.Errorf("max %d: next line %q, %v", max, got, err)
		}
	}
}

// After a continued line past MaxLineBytes, every read starts after its
// continuation lines. ReadMIMEHeader did not discard them first when the
// long line fitted R's buffer: it took the continuation line's leading
// space for a malformed first header line, and lost the header.
func TestLimitContinuedThenRead(t *testing.T) {
	in := strings.Repeat("A", 20) + "\r\n continued\r\n\tmore\r\nKey: v\r\n\r\n"
	for name, next := range map[string]func(r *Reader) (string, error){
		"ReadMIMEHeader": func(r *Reader) (string, error) {
			h, err := r.ReadMIMEHeader()
			return fmt.Sprint(h), err
		},
		"ReadLine": func(r *Reader) (string, error) { return r.ReadLine() },
		"ReadContinuedLine": func(r *Reader) (string, error) {
			return r.ReadContinuedLine()
		},
	} {
		r := NewReader(bufio.NewReader(strings.NewReader(in)))
		r.SetLimits(Limits{MaxLineBytes: 10})
		if _, err := r.ReadContinuedLine(); !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("%s: the long line: %v, want ErrLineTooLong", name, err)
		}
		want := map[string]string{"ReadMIMEHeader": "map[Key:[v]]", "ReadLine": "Key: v", "ReadContinuedLine": "Key: v"}[name]
		if got, err := next(r); got != want || err != nil {
			t.Errorf("then %s: %q, %v; want %q", name, got, err, want)
		}
	}
}

// TestLimitHeaderResync checks what ReadMIMEHeader returns when a limit is
// hit, and that the next call skips the rest of the header block, so that
// the caller can answer and read on in step with its peer.
func TestLimitHeaderResync(t *testing.T) {
	const in = "A: 1\r\nB: 2\r\nC: 3\r\n  folded\r\nD: " + "dddddddddd" + "\r\n\r\nNEXT\r\nE: 5\r\n\r\n"
	// The fields are 6+6+16+15 = 43 bytes long with their line endings;
	// as logical lines they are 4, 4, 14 and 13 bytes long.
	cases := []struct {
		lim     Limits
		want    MIMEHeader // nil: no error
		wantErr error
	}{
		{Limits{MaxHeaderFields: 4}, nil, nil},
		{Limits{MaxHeaderFields: 3}, MIMEHeader{"A": {"1"}, "B": {"2"}, "C": {"3 folded"}}, ErrHeaderTooLarge},
		{Limits{MaxHeaderFields: 1}, MIMEHeader{"A": {"1"}}, ErrHeaderTooLarge},
		{Limits{MaxHeaderBytes: 43}, nil, nil},
		{Limits{MaxHeaderBytes: 42}, MIMEHeader{"A": {"1"}, "B": {"2"}, "C": {"3 folded"}}, ErrHeaderTooLarge},
		{Limits{MaxHeaderBytes: 20}, MIMEHeader{"A": {"1"}, "B": {"2"}}, ErrHeaderTooLarge},
		{Limits{MaxHeaderBytes: 3}, MIMEHeader{}, ErrHeaderTooLarge},
		{Limits{MaxLineBytes: 14}, nil, nil},
		{Limits{MaxLineBytes: 13}, MIMEHeader{"A": {"1"}, "B": {"2"}}, ErrLineTooLong},
		{Limits{MaxLineBytes: 5}, MIMEHeader{"A": {"1"}, "B": {"2"}}, ErrLineTooLong},
	}
	for _, c := range cases {
		for _, size := range []int{16, 4096} {
			for _, next := range []string{"ReadLine", "ReadMIMEHeader"} {
				r := NewReader(bufio.NewReaderSize(strings.NewReader(in), size))
				r.SetLimits(c.lim)
				h, err := r.ReadMIMEHeader()
				if c.want == nil {
					if err != nil || len(h) != 4 {
						t.Errorf("%+v, size %d: %v, %v; want the 4 fields", c.lim, size, h, err)
					}
					continue
				}
				if !errors.Is(err, c.wantErr) || !reflect.DeepEqual(h, c.want) {
					t.Errorf("%+v, size %d: %v, %v; want %v, %v", c.lim, size, h, err, c.want, c.wantErr)
				}
				if next == "ReadLine" {
					if l, err := r.ReadLine(); l != "NEXT" || err != nil {
						t.Errorf("%+v, size %d: ReadLine after the error: %q, %v; want NEXT", c.lim, size, l, err)
					}
					continue
				}
				// The next header starts after the skipped one: "NEXT" is
				// a line without a colon. (Lift the limits, which the
				// next header may exceed too.)
				r.SetLimits(Limits{})
				var pe ProtocolError
				if _, err := r.ReadMIMEHeader(); !errors.As(err, &pe) || !strings.Contains(string(pe), "NEXT") {
					t.Errorf("%+v, size %d: ReadMIMEHeader after the error: %v; want the NEXT line's error", c.lim, size, err)
				}
				if h, err := r.ReadMIMEHeader(); err != nil || h.Get("E") != "5" {
					t.Errorf("%+v, size %d: third header %v, %v", c.lim, size, h, err)
				}
			}
		}
	}
}

// TestLimitDiscardResumes interrupts the discarding of an over-long line
// with a read error: the error is reported, and it ends the line, so the
// next call reads the input after it as a new line (here over the limit
// too), and the call after that the line after.
func TestLimitDiscardResumes(t *testing.T) {
	in := strings.Repeat("x", 100) + "\r\nnext\r\n"
	f := feed{chunk: 16, onceAt: 60}
	r := NewReader(bufio.NewReaderSize(f.open([]byte(in)), 16))
	r.SetLimits(Limits{MaxLineBytes: 20})
	if _, err := r.ReadLine(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("first: %v", err)
	}
	if _, err := r.ReadLine(); err != errInjected {
		t.Fatalf("second: %v, want the read error", err)
	}
	if _, err := r.ReadLine(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("third: %v, want the 40 bytes after the error as a line too long", err)
	}
	if l, err := r.ReadLine(); l != "next" || err != nil {
		t.Fatalf("fourth: %q, %v; want next", l, err)
	}
}

// TestLimitErrors checks the limit errors' text and matching.
func TestLimitErrors(t *testing.T) {
	r := NewReader(bufio.NewReader(strings.NewReader("0123456789\r\n")))
	r.SetLimits(Limits{MaxLineBytes: 5})
	_, err := r.ReadLine()
	if !errors.Is(err, ErrLineTooLong) || errors.Is(err, ErrHeaderTooLarge) {
		t.Fatalf("%v does not match ErrLineTooLong alone", err)
	}
	if got, want := err.Error(), "textproto: line too long (limit 5 bytes)"; got != want {
		t.Errorf("error text %q, want %q", got, want)
	}
	r = NewReader(bufio.NewReader(strings.NewReader("A: 1\r\nB: 2\r\n\r\n")))
	r.SetLimits(Limits{MaxHeaderFields: 1})
	_, err = r.ReadMIMEHeader()
	if got, want := err.Error(), "textproto: header too large (limit 1 fields)"; got != want || !errors.Is(err, ErrHeaderTooLarge) {
		t.Errorf("error %q, want %q matching ErrHeaderTooLarge", got, want)
	}
	if r.Limits() != (Limits{MaxHeaderFields: 1}) {
		t.Errorf("Limits() = %+v", r.Limits())
	}
}

// TestLimitDotLines checks ReadDotLines with MaxDotBytes and MaxLineBytes:
// the whole block is read, the lines before the excess returned, and the
// next read starts after the block.
func TestLimitDotLines(t *testing.T) {
	const in = "one\r\n..two\r\nthree\r\n" + "a-much-longer-line\r\n" + "five\r\n.\r\nNEXT\r\n"
	cases := []struct {
		lim  Limits
		want []string
		err  error
	}{
		{Limits{}, []string{"one", ".two", "three", "a-much-longer-line", "five"}, nil},
		// Each line costs its length and a string header: 19, 20, 21,
		// 34 and 20 bytes on 64-bit systems.
		{Limits{MaxDotBytes: 34 + 5*stringHeaderSize}, []string{"one", ".two", "three", "a-much-longer-line", "five"}, nil},
		{Limits{MaxDotBytes: 34 + 5*stringHeaderSize - 1}, []string{"one", ".two", "three", "a-much-longer-line"}, dot.ErrTooLarge},
		{Limits{MaxDotBytes: 7 + 2*stringHeaderSize}, []string{"one", ".two"}, dot.ErrTooLarge},
		{Limits{MaxDotBytes: 7 + 2*stringHeaderSize - 1}, []string{"one"}, dot.ErrTooLarge},
		{Limits{MaxLineBytes: 18}, []string{"one", ".two", "three", "a-much-longer-line", "five"}, nil},
		{Limits{MaxLineBytes: 17}, []string{"one", ".two", "three"}, ErrLineTooLong},
	}
	for _, c := range cases {
		for _, size := range []int{16, 4096} {
			r := NewReader(bufio.NewReaderSize(strings.NewReader(in), size))
			r.SetLimits(c.lim)
			got, err := r.ReadDotLines()
			if !reflect.DeepEqual(got, c.want) || !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
				t.Errorf("%+v, size %d: %q, %v; want %q, %v", c.lim, size, got, err, c.want, c.err)
			}
			if l, err := r.ReadLine(); l != "NEXT" || err != nil {
				t.Errorf("%+v, size %d: after the block: %q, %v", c.lim, size, l, err)
			}
		}
	}
	// An over-long line in a block is skipped with flat memory.
	var err error
	var lines []string
	src := &endless{c: 'x', n: 8 << 20, tail: []byte("\r\n.\r\n")}
	r := NewReader(bufio.NewReader(io.MultiReader(strings.NewReader("a\r\n"), src)))
	r.SetLimits(Limits{MaxDotBytes: 1 << 10, MaxLineBytes: 1 << 10})
	grew := heapGrowth(func() { lines, err = r.ReadDotLines() })
	if !errors.Is(err, ErrLineTooLong) || len(lines) != 1 || grew > 256<<10 {
		t.Errorf("endless line in a block: %q, %v, %d bytes allocated", lines, err, grew)
	}
}

// TestLimitDotLinesEndless feeds 64 MiB of short lines as one dot block:
// with MaxDotBytes, ReadDotLines reads it all, holds at most about the
// limit, and fails with dot.ErrTooLarge at its end.
func TestLimitDotLinesEndless(t *testing.T) {
	const stream = 64 << 20
	line := "some line of a very long block\r\n"
	in := io.MultiReader(io.LimitReader(&repeater{s: line}, stream), strings.NewReader(".\r\nNEXT\r\n"))
	r := NewReader(bufio.NewReader(in))
	r.SetLimits(Limits{MaxDotBytes: 64 << 10})
	var lines []string
	var err error
	grew := heapGrowth(func() { lines, err = r.ReadDotLines() })
	if !errors.Is(err, dot.ErrTooLarge) || len(lines) == 0 || len(lines) > (64<<10)/(len(line)-1) {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	if grew > 1<<20 {
		t.Errorf("a %d-byte block allocated %d bytes", stream, grew)
	}
	if l, err := r.ReadLine(); l != "NEXT" || err != nil {
		t.Errorf("after the block: %q, %v", l, err)
	}
}

// TestLimitHuge checks that the largest limits are no limits.
func TestLimitHuge(t *testing.T) {
	r := NewReader(bufio.NewReader(strings.NewReader("A: 1\r\nB: 2\r\n\r\nline\r\n")))
	r.SetLimits(Limits{MaxLineBytes: math.MaxInt, MaxHeaderBytes: math.MaxInt64, MaxHeaderFields: math.MaxInt, MaxDotBytes: math.MaxInt64})
	h, err := r.ReadMIMEHeader()
	if err != nil || len(h) != 2 {
		t.Fatalf("%v, %v", h, err)
	}
	if l, err := r.ReadLine(); l != "line" || err != nil {
		t.Fatalf("%q, %v", l, err)
	}
}

// TestReadResponseLimits: past MaxHeaderFields lines or MaxHeaderBytes of
// message, a multi-line response fails with ErrHeaderTooLarge and keeps
// nothing of it, and the next call discards the rest through its last
// line (here once longer than the bufio buffer), so the next response
// reads as sent. Within the limits the response is as without them.
func TestReadResponseLimits(t *testing.T) {
	long := strings.Repeat("250-"+strings.Repeat("x", 90)+"\r\n", 1000)
	for _, c := range []struct {
		lim  Limits
		last string
	}{
		{Limits{MaxHeaderFields: 10}, "250 end"},
		{Limits{MaxHeaderBytes: 1000}, "250 end"},
		{Limits{MaxHeaderFields: 10}, "250 " + strings.Repeat("y", 5000)},
		{Limits{MaxHeaderBytes: 1000}, "250-" + strings.Repeat("z", 5000) + "\r\n250 end"},
	} {
		r := NewReader(bufio.NewReader(strings.NewReader(long + c.last + "\r\n221 bye\r\n")))
		r.SetLimits(c.lim)
		code, msg, err := r.ReadResponse(250)
		if !errors.Is(err, ErrHeaderTooLarge) || code != 250 || msg != "" {
			t.Errorf("%+v: %d %.20q %v; want 250, no message, ErrHeaderTooLarge", c.lim, code, msg, err)
		}
		if code, msg, err := r.ReadResponse(221); code != 221 || msg != "bye" || err != nil {
			t.Errorf("%+v, the next response: %d %q %v; want 221 bye", c.lim, code, msg, err)
		}
	}
	r := NewReader(bufio.NewReader(strings.NewReader("250-a\r\n250-b\r\n250 c\r\n")))
	r.SetLimits(Limits{MaxHeaderFields: 3, MaxHeaderBytes: int64(len("a\nb\nc"))})
	if code, msg, err := r.ReadResponse(250); code != 250 || msg != "a\nb\nc" || err != nil {
		t.Errorf("at the limits: %d %q %v; want 250 \"a\\nb\\nc\"", code, msg, err)
	}
}

// TestLimitStepAfterLongLine: a line past MaxLineBytes fails the call,
// and the next call reads on in step with the peer: after ReadResponse,
// past the rest of the response (whichever of its lines was too long);
// after ReadContinuedLine, past the lines that continue the long one.
func TestLimitStepAfterLongLine(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, c := range []struct{ in, code string }{
		{"250-first\r\n250-" + long + "\r\n250-third\r\n250 last\r\n", "250"},
		{"250-" + long + "\r\n250 last\r\n", "250"},
		{"250-first\r\n250 " + long + "\r\n", "250"},
		{"250 " + long + "\r\n", "250"},
		{"250-first\r\n" + long + "\r\n250 last\r\n", "250"}, // RFC 959's free text between
		{long + "\r\n", ""},
	} {
		for _, size := range []int{16, 4096} {
			r := NewReader(bufio.NewReaderSize(strings.NewReader(c.in+"354 go ahead\r\n"), size))
			r.SetLimits(Limits{MaxLineBytes: 50})
			code, msg, err := r.ReadResponse(250)
			if !errors.Is(err, ErrLineTooLong) || fmt.Sprint(code) != cmp.Or(c.code, "0") || msg != "" {
				t.Errorf("%.30q (buffer %d): %d %q %v; want %s, ErrLineTooLong", c.in, size, code, msg, err, c.code)
			}
			if code, msg, err := r.ReadResponse(354); code != 354 || msg != "go ahead" || err != nil {
				t.Errorf("%.30q (buffer %d), the next response: %d %q %v", c.in, size, code, msg, err)
			}
		}
	}
	for _, in := range []string{
		"Subject: " + long + "\r\n folded\r\n\tand again\r\nNEXT\r\n",
		"Subject: a\r\n b\r\n " + long + "\r\n more\r\nNEXT\r\n",
		"Subject: a\r\n" + strings.Repeat(" ", 60) + "b\r\n more\r\nNEXT\r\n",
	} {
		r := NewReader(bufio.NewReaderSize(strings.NewReader(in), 16))
		r.SetLimits(Limits{MaxLineBytes: 50})
		if _, err := r.ReadContinuedLine(); !errors.Is(err, ErrLineTooLong) {
			t.Errorf("%.30q: %v, want ErrLineTooLong", in, err)
		}
		if got, err := r.ReadContinuedLine(); got != "NEXT" || err != nil {
			t.Errorf("%.30q, the next line: %q %v; want NEXT", in, got, err)
		}
	}
}

// TestLimitResponseInvalidCode: a response whose first line has no valid
// code and a hyphen ("099-", "abc-") has no last line for net/textproto's
// ReadResponse, which takes every line after it as text (a "099 " line
// too: 99 is no code) and reads until a read error. After a limit error on
// such a response, the next call discarded only up to a "099 " line, or
// (no code at all) nothing more than the long line, and then read the
// rest as a new response, where net/textproto had read it all.
func TestLimitResponseInvalidCode(t *testing.T) {
	long := strings.Repeat("y", 60)
	for _, c := range []struct {
		in  string
		lim Limits
	}{
		{"099-x\r\n099 " + long + "\r\n250 ok\r\n", Limits{MaxLineBytes: 50}},
		{"099-x\r\n099-" + long + "\r\n099 z\r\n250 ok\r\n", Limits{MaxLineBytes: 50}},
		{"099-" + long + "\r\n099 z\r\n250 ok\r\n", Limits{MaxLineBytes: 50}},
		{"abc-" + long + "\r\n250 ok\r\n", Limits{MaxLineBytes: 50}},
		{"000-x\r\n000-y\r\n000 z\r\n250 ok\r\n", Limits{MaxHeaderFields: 2}},
		{"099-x\r\n099 " + long + "\r\n250 ok\r\n", Limits{MaxHeaderBytes: 20}},
	} {
		std := stdtp.NewReader(bufio.NewReader(strings.NewReader(c.in)))
		if _, _, err := std.ReadResponse(0); err != io.EOF {
			t.Fatalf("%q: net/textproto: %v, want io.EOF (the premise)", c.in, err)
		}
		r := NewReader(bufio.NewReaderSize(strings.NewReader(c.in), 16))
		r.SetLimits(c.lim)
		if _, _, err := r.ReadResponse(0); !isLimitError(err) {
			t.Fatalf("%q %+v: %v, want a limit error", c.in, c.lim, err)
		}
		if code, msg, err := r.ReadResponse(0); err != io.EOF {
			t.Errorf("%q %+v: the next call: %d %q %v; want io.EOF, as net/textproto reads the response to the end", c.in, c.lim, code, msg, err)
		}
	}
	// A "099 " first line is a response of its own, for net/textproto
	// ("invalid response code"): the next one reads as sent.
	r := NewReader(bufio.NewReader(strings.NewReader("099 " + long + "\r\n250 ok\r\n")))
	r.SetLimits(Limits{MaxLineBytes: 50})
	if _, _, err := r.ReadResponse(0); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("099 and a long line: %v, want ErrLineTooLong", err)
	}
	if code, msg, err := r.ReadResponse(0); code != 250 || msg != "ok" || err != nil {
		t.Errorf("099 and a long line, then: %d %q %v; want 250 ok", code, msg, err)
	}
}

// TestLimitResponseInvalidCodeReadError: net/textproto's ReadResponse
// reads a response without a valid code until its ReadLine returns a read
// error (one that comes with no data; one with data ends a line and it
// reads on), and its next call reads on from there. After a limit error on
// such a response, ours discarded on past that error, and past every one
// after it: a transient error (a read deadline) left the Reader dropping
// all that followed, a "250 ok" net/textproto returns included. With the
// error at every offset, ours must read that reply exactly when
// net/textproto does.
func TestLimitResponseInvalidCodeReadError(t *testing.T) {
	in := "099-x\r\n099 " + strings.Repeat("y", 60) + "\r\n099-a\r\n250 ok\r\n"
	// replies returns the replies ReadResponse returns with no error,
	// calling it until io.EOF.
	replies := func(read func() (int, string, error)) (got []string) {
		for range 20 {
			code, msg, err := read()
			if err == io.EOF {
				break
			}
			if err == nil {
				got = append(got, fmt.Sprint(code, " ", msg))
			}
		}
		return got
	}
	for at := 1; at < len(in); at++ {
		std := stdtp.NewReader(bufio.NewReader(&hiccupReader{data: []byte(in), n: 1000, at: at}))
		want := replies(func() (int, string, error) { return std.ReadResponse(0) })
		r := NewReader(bufio.NewReader(&hiccupReader{data: []byte(in), n: 1000, at: at}))
		r.SetLimits(Limits{MaxLineBytes: 50})
		got := replies(func() (int, string, error) { return r.ReadResponse(0) })
		if !reflect.DeepEqual(got, want) {
			t.Errorf("a read error at %d: replies %q, net/textproto's %q", at, got, want)
		}
	}
}

// MaxHeaderBytes bounds a response's message whether it has one line or
// many, and a line that cannot fit is not read whole: a one-line response
// was returned with any message, and a long second line was read whole
// (64 MiB of it took 320 MiB) before the check. The next call reads the
// next response.
func TestLimitResponseBytes(t *testing.T) {
	const budget = 100
	for _, in := range []string{
		"250 " + strings.Repeat("x", 5000) + "\r\n",
		"250-ok\r\n250 " + strings.Repeat("y", 4<<20) + "\r\n",
		"250-" + strings.Repeat("z", 60) + "\r\n250 " + strings.Repeat("z", 60) + "\r\n",
	} {
		r := NewReader(bufio.NewReader(strings.NewReader(in + "354 go ahead\r\n")))
		r.SetLimits(Limits{MaxHeaderBytes: budget})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		code, msg, err := r.ReadResponse(0)
		runtime.ReadMemStats(&after)
		if code != 250 || msg != "" || !errors.Is(err, ErrHeaderTooLarge) {
			t.Errorf("%.20q...: %d %.20q %v; want 250, no message, ErrHeaderTooLarge", in, code, msg, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
			t.Errorf("%.20q...: %d bytes allocated", in, n)
		}
		if code, msg, err := r.ReadResponse(0); code != 354 || msg != "go ahead" || err != nil {
			t.Errorf("%.20q...: then %d %q %v", in, code, msg, err)
		}
	}
	// At the limit, not past it.
	r := NewReader(bufio.NewReader(strings.NewReader("250-" + strings.Repeat("a", 49) + "\r\n250 " + strings.Repeat("b", 50) + "\r\n")))
	r.SetLimits(Limits{MaxHeaderBytes: budget})
	if _, msg, err := r.ReadResponse(0); len(msg) != budget || err != nil {
		t.Errorf("a message of %d bytes: %d bytes, %v", budget, len(msg), err)
	}
}

package dot

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

type encResult struct {
	out      []byte
	consumed int
	err      error
}

func (r encResult) String() string {
	return fmt.Sprintf("out=%q consumed=%d err=%v", r.out, r.consumed, r.err)
}

func (r encResult) equal(o encResult) bool {
	return bytes.Equal(r.out, o.out) && r.consumed == o.consumed && sameErr(r.err, o.err)
}

// encodeChunked encodes in with src and dst offered in steps, then ends the
// data (atEOF).
func encodeChunked(mode Mode, in []byte, srcStep, dstStep int) encResult {
	e := Encoder{Mode: mode}
	var out []byte
	consumed := 0
	dst := make([]byte, dstStep)
	for iter := 0; ; iter++ {
		if iter > 10*len(in)+100 {
			panic(fmt.Sprintf("encoder makes no progress: %v %q %d %d", mode, in, srcStep, dstStep))
		}
		end := min(len(in), consumed+srcStep)
		nd, ns, err := e.Transform(dst, in[consumed:end], end == len(in))
		out = append(out, dst[:nd]...)
		consumed += ns
		switch err {
		case nil:
			if end == len(in) {
				return encResult{out, consumed, nil}
			}
		case ErrShortDst:
			if nd == 0 && ns == 0 {
				dst = make([]byte, 2*len(dst)) // a byte's output is written whole
			}
		default:
			return encResult{out, consumed, err}
		}
	}
}

// stdEncode is the oracle for Compat mode: net/textproto's DotWriter.
func stdEncode(in []byte) encResult {
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	w := stdtp.NewWriter(bw).DotWriter()
	w.Write(in)
	w.Close()
	return encResult{buf.Bytes(), len(in), nil}
}

// refStrictEncode is an independent model of Strict encoding.
func refStrictEncode(in []byte) encResult {
	bad, kind := -1, error(nil)
	for i, c := range in {
		if c == '\r' && (i+1 == len(in) || in[i+1] != '\n') {
			bad, kind = i, ErrBareCR
			break
		}
		if c == '\n' && (i == 0 || in[i-1] != '\r') {
			bad, kind = i, ErrBareLF
			break
		}
	}
	valid := in
	if bad >= 0 {
		valid = in[:bad]
	}
	var out []byte
	lines := bytes.SplitAfter(valid, []byte("\r\n"))
	for _, l := range lines {
		if len(l) > 0 && l[0] == '.' {
			out = append(out, '.')
		}
		out = append(out, l...)
	}
	if bad >= 0 {
		consumed := bad
		if kind == ErrBareCR {
			consumed++ // the CR was held back until the next byte or the end showed it bare
		}
		return encResult{out, consumed, &SyntaxError{Offset: int64(bad), Err: kind}}
	}
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\r\n")) {
		out = append(out, "\r\n"...)
	}
	return encResult{append(out, ".\r\n"...), len(in), nil}
}

func encOracle(mode Mode, in []byte) encResult {
	if mode == Compat {
		return stdEncode(in)
	}
	return refStrictEncode(in)
}

var encodeInputs = []string{
	"", ".", "\n", "\r", "\r\n", ".\n", ".\r\n", "a", "a\n", "a\r", "a\r\n", "\r\r\n", "\r\r\r\n",
	"..\n.", "\n.\n", "line one\nline two\n", ".leading\r\n..two\r\n", "a\rb\n", "\r.\n",
	"x\r\n.\r\n", "\x00.\r\n", "ab\r\ncd", "ab\r\ncd\r", "a\r\n\nb", "a\r\rb",
}

func checkEncode(t *testing.T, mode Mode, in []byte, srcStep, dstStep int) {
	t.Helper()
	got := encodeChunked(mode, in, srcStep, dstStep)
	if want := encOracle(mode, in); !got.equal(want) {
		t.Fatalf("%v %q src=%d dst=%d:\n got %v\nwant %v", mode, in, srcStep, dstStep, got, want)
	}
}

func TestEncoderOracles(t *testing.T) {
	for _, mode := range []Mode{Compat, Strict, Raw} {
		for _, s := range encodeInputs {
			in := []byte(s)
			for srcStep := 1; srcStep <= len(in)+1; srcStep++ {
				for _, dstStep := range []int{1, 2, 3, 100} {
					checkEncode(t, mode, in, srcStep, dstStep)
				}
			}
		}
	}
}

func TestEncoderRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for i := 0; i < n; i++ {
		in := randomInput(r, r.IntN(50))
		mode := Mode(r.IntN(3))
		if mode != Compat && r.IntN(2) == 0 {
			in = bytes.ReplaceAll(bytes.ReplaceAll(in, []byte("\r"), nil), []byte("\n"), []byte("\r\n"))
		}
		checkEncode(t, mode, in, 1+r.IntN(8), 1+r.IntN(8))
	}
}

func FuzzEncoder(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	for i, s := range encodeInputs {
		f.Add([]byte(s), uint8(i%3), uint8(i%7+1), uint8(i%4+1))
	}
	f.Fuzz(func(t *testing.T, in []byte, mode, srcStep, dstStep uint8) {
		checkEncode(t, Mode(mode%3), in, int(srcStep)+1, int(dstStep)+1)
	})
}

// TestRoundTrip: what the Strict encoder writes, the Raw decoder returns
// unchanged, and the Strict decoder returns with LF line endings.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 2000; i++ {
		in := randomInput(r, r.IntN(60))
		in = bytes.ReplaceAll(bytes.ReplaceAll(in, []byte("\r"), nil), []byte("\n"), []byte("\r\n"))
		if len(in) > 0 && !bytes.HasSuffix(in, []byte("\r\n")) {
			in = append(in, "\r\n"...)
		}
		enc := encodeChunked(Strict, in, 5, 7)
		if enc.err != nil {
			t.Fatalf("encode %q: %v", in, enc.err)
		}
		raw := decodeChunked(Raw, 0, enc.out, 3, 4)
		if raw.err != io.EOF || !bytes.Equal(raw.out, in) || raw.consumed != len(enc.out) {
			t.Fatalf("raw round trip of %q via %q: %v", in, enc.out, raw)
		}
		strict := decodeChunked(Strict, 0, enc.out, 3, 4)
		if want := bytes.ReplaceAll(in, []byte("\r\n"), []byte("\n")); strict.err != io.EOF || !bytes.Equal(strict.out, want) {
			t.Fatalf("strict round trip of %q: %v", in, strict)
		}
		compat := decodeChunked(Compat, 0, enc.out, 3, 4)
		if want := bytes.ReplaceAll(in, []byte("\r\n"), []byte("\n")); compat.err != io.EOF || !bytes.Equal(compat.out, want) {
			t.Fatalf("compat decode of strict encoding of %q: %v", in, compat)
		}
	}
}

func TestEncoderStrictErrors(t *testing.T) {
	for _, c := range []struct {
		in     string
		kind   error
		offset int64
	}{
		{"ab\ncd", ErrBareLF, 2},
		{"ab\r\ncd\rx", ErrBareCR, 6},
		{"ab\r", ErrBareCR, 2},
		{"\n", ErrBareLF, 0},
	} {
		for _, mode := range []Mode{Strict, Raw} {
			got := encodeChunked(mode, []byte(c.in), 1, 8)
			var se *SyntaxError
			if !errors.As(got.err, &se) || !errors.Is(got.err, c.kind) || se.Offset != c.offset {
				t.Errorf("%v %q: err %v, want %v at %d", mode, c.in, got.err, c.kind, c.offset)
			}
			if bytes.Contains(got.out, []byte(".\r\n")) && bytes.HasSuffix(got.out, []byte(".\r\n")) {
				t.Errorf("%v %q: wrote an end marker after an error: %q", mode, c.in, got.out)
			}
		}
	}
	// The error is sticky.
	e := Encoder{Mode: Strict}
	e.Transform(make([]byte, 8), []byte("a\nb"), false)
	if _, _, err := e.Transform(make([]byte, 8), []byte("ok\r\n"), true); !errors.Is(err, ErrBareLF) {
		t.Errorf("after an error: %v", err)
	}
}

func TestEncoderClosed(t *testing.T) {
	var e Encoder
	dst := make([]byte, 16)
	if n, _, err := e.Transform(dst, []byte("x"), true); err != nil || string(dst[:n]) != "x\r\n.\r\n" {
		t.Fatalf("got %q %v", dst[:n], err)
	}
	if _, _, err := e.Transform(dst, []byte("y"), false); err != ErrClosed {
		t.Fatalf("write after end: %v", err)
	}
	if n, _, err := e.Transform(dst, nil, true); n != 0 || err != nil {
		t.Fatalf("ending again: %d %v", n, err)
	}
}

func TestEncoderAllocs(t *testing.T) {
	in := []byte("line\r\n.dot\r\n\r\nx\r\n")
	dst := make([]byte, 64)
	for _, mode := range []Mode{Compat, Strict, Raw} {
		e := Encoder{Mode: mode}
		if a := testing.AllocsPerRun(100, func() {
			e.Reset()
			e.Transform(dst, in, true)
		}); a != 0 {
			t.Errorf("%v: %v allocs per block", mode, a)
		}
	}
}

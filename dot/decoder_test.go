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

// decResult is everything a decoding run can observe.
type decResult struct {
	out      []byte
	consumed int
	err      error
}

func (r decResult) String() string {
	return fmt.Sprintf("out=%q consumed=%d err=%v", r.out, r.consumed, r.err)
}

func (r decResult) equal(o decResult) bool {
	return bytes.Equal(r.out, o.out) && r.consumed == o.consumed && sameErr(r.err, o.err)
}

// decodeChunked decodes in with src delivered in pieces of srcStep bytes and
// dst offered in pieces of dstStep bytes, with atEOF after the last piece.
func decodeChunked(mode Mode, max int64, in []byte, srcStep, dstStep int) decResult {
	return decodeChunkedCfg(modelConfig{mode: mode, maxSize: max}, in, srcStep, dstStep)
}

// decodeChunkedCfg is decodeChunked for a Decoder set up as cfg says.
func decodeChunkedCfg(cfg modelConfig, in []byte, srcStep, dstStep int) decResult {
	d := cfg.decoder()
	mode, max := cfg.mode, cfg.maxSize
	var out []byte
	consumed := 0
	dst := make([]byte, dstStep)
	end := 0 // src is in[consumed:end]
	for iter := 0; ; iter++ {
		if iter > 10*len(in)+100 {
			panic(fmt.Sprintf("decoder makes no progress: %v %d %q %d %d", mode, max, in, srcStep, dstStep))
		}
		if end-consumed < srcStep && end < len(in) {
			end = min(len(in), consumed+srcStep)
		}
		nd, ns, err := d.Transform(dst, in[consumed:end], end == len(in))
		out = append(out, dst[:nd]...)
		consumed += ns
		switch err {
		case nil:
			if end == len(in) {
				panic("nil error at EOF")
			}
		case ErrShortDst:
			if nd == 0 && ns == 0 {
				// Raw mode writes "\r\n" as a whole: give it room.
				dst = make([]byte, 2*len(dst))
			}
		default:
			return decResult{out, consumed, err}
		}
	}
}

// stdDecode is the oracle for Compat mode: net/textproto's DotReader.
func stdDecode(in []byte) decResult {
	br := bufio.NewReader(bytes.NewReader(in))
	out, err := io.ReadAll(stdtp.NewReader(br).DotReader())
	if err == nil {
		err = io.EOF
	}
	return decResult{out, len(in) - br.Buffered(), err}
}

func oracle(mode Mode, max int64, in []byte) (decResult, bool) {
	switch mode {
	case Compat:
		if max > 0 {
			return decResult{}, false
		}
		return stdDecode(in), true
	default:
		return modelDecode(modelConfig{mode: mode, maxSize: max}, in), true
	}
}

var decodeInputs = []string{
	"", ".", ".\r", ".\n", ".\r\n", "\r\n.\r\n", "\n.\n", "a\n.\n", "a\r\n.\r\n", "abc\r\n.\r\ntrailing",
	"..\r\n.\r\n", "...\r\n.\r\n", ".a\r\n.\r\n", "a\rb\r\n.\r\n", "\r\r\n.\r\n", "\r.\r\n.\r\n",
	".\r.\r\n.\r\n", ".\rx\n.\n", "\n\n.\n", "a\n\n.x\n.\n", "x\r", ".\r\r\n.\r\n", "\x00.\r\n.\r\n",
	"\r\n\x00.\r\n.\r\n", "\r\n.\r", "one\r\ntwo\r\n..three\r\n.\r\nnext", "a\n.\r\nb\r\n.\r\n",
	"a\r\n.\nb\r\n.\r\n", "a\r.\r\nb\r\n.\r\n", "a\r\n.\rb\r\n.\r\n",
}

func TestDecoderOracles(t *testing.T) {
	for _, mode := range []Mode{Compat, Strict, Raw} {
		for _, max := range []int64{0, 1, 2, 3, 5, 8} {
			for _, s := range decodeInputs {
				in := []byte(s)
				want, ok := oracle(mode, max, in)
				if !ok {
					continue
				}
				got := decodeChunked(mode, max, in, len(in)+1, len(in)+1)
				if !got.equal(want) {
					t.Errorf("%v max=%d %q:\n got %v\nwant %v", mode, max, in, got, want)
				}
			}
		}
	}
}

// TestDecoderSplits checks that every split of the input and every dst size
// give the same result as one call.
func TestDecoderSplits(t *testing.T) {
	for _, mode := range []Mode{Compat, Strict, Raw} {
		for _, max := range []int64{0, 4} {
			for _, s := range decodeInputs {
				in := []byte(s)
				whole := decodeChunked(mode, max, in, len(in)+1, len(in)+8)
				for srcStep := 1; srcStep <= len(in); srcStep++ {
					for _, dstStep := range []int{1, 2, 3, 7} {
						got := decodeChunked(mode, max, in, srcStep, dstStep)
						if !got.equal(whole) {
							t.Fatalf("%v max=%d %q src=%d dst=%d:\n got %v\nwant %v", mode, max, in, srcStep, dstStep, got, whole)
						}
					}
				}
			}
		}
	}
}

func TestDecoderRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for i := 0; i < n; i++ {
		in := randomInput(r, r.IntN(50))
		mode := Mode(r.IntN(3))
		max := int64(r.IntN(3)) * int64(r.IntN(20))
		checkDecode(t, mode, max, in, 1+r.IntN(8), 1+r.IntN(8))
	}
}

func checkDecode(t *testing.T, mode Mode, max int64, in []byte, srcStep, dstStep int) {
	t.Helper()
	got := decodeChunked(mode, max, in, srcStep, dstStep)
	want, ok := oracle(mode, max, in)
	if !ok {
		want = decodeChunked(mode, max, in, len(in)+1, len(in)+1)
	}
	if !got.equal(want) {
		t.Fatalf("%v max=%d %q src=%d dst=%d:\n got %v\nwant %v", mode, max, in, srcStep, dstStep, got, want)
	}
}

func randomInput(r *rand.Rand, n int) []byte {
	const alphabet = "..\r\r\r\n\n\nab\x00"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return b
}

func FuzzDecoder(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	for i, s := range decodeInputs {
		f.Add([]byte(s), uint8(i%3), uint8(i%4), uint16(i%5), uint8(i%6), uint8(i%7+1), uint8(i%4+1))
	}
	for i, c := range policyCases {
		f.Add([]byte(c.in), uint8(1+i%2), uint8(c.policy), uint16(0), uint8(i%4), uint8(i%5+1), uint8(i%3+1))
	}
	f.Fuzz(func(t *testing.T, in []byte, mode, bare uint8, max uint16, maxLine, srcStep, dstStep uint8) {
		cfg := modelConfig{mode: Mode(mode % 3), bare: BarePolicy(bare % 3), maxSize: int64(max), maxLine: int(maxLine)}
		if cfg.mode == Compat && cfg.maxSize == 0 && cfg.maxLine == 0 {
			checkDecode(t, cfg.mode, 0, in, int(srcStep)+1, int(dstStep)+1)
		}
		want := modelDecode(cfg, in)
		got := decodeChunkedCfg(cfg, in, int(srcStep)+1, int(dstStep)+1)
		if !got.equal(want) {
			t.Fatalf("%+v %q src=%d dst=%d:\n got %v\nwant %v", cfg, in, int(srcStep)+1, int(dstStep)+1, got, want)
		}
	})
}

// TestDecoderLimitKeepsStreamInStep checks that a block over MaxSize is
// consumed to its end marker, so the next command is read correctly.
func TestDecoderLimitKeepsStreamInStep(t *testing.T) {
	in := []byte("0123456789\r\n..more\r\n.\r\nQUIT\r\n")
	for _, mode := range []Mode{Compat, Strict, Raw} {
		got := decodeChunked(mode, 5, in, 3, 2)
		if !errors.Is(got.err, ErrTooLarge) {
			t.Fatalf("%v: err = %v, want ErrTooLarge", mode, got.err)
		}
		if string(got.out) != "01234" {
			t.Errorf("%v: out = %q, want the first 5 bytes", mode, got.out)
		}
		if rest := string(in[got.consumed:]); rest != "QUIT\r\n" {
			t.Errorf("%v: left %q unconsumed, want the next command", mode, rest)
		}
	}
	// Exactly MaxSize bytes is not too large.
	ok := decodeChunked(Strict, 4, []byte("abc\r\n.\r\n"), 1, 1)
	if ok.err != io.EOF || string(ok.out) != "abc\n" {
		t.Errorf("block of exactly MaxSize: %v", ok)
	}
}

// TestSmuggling gives the verdicts for the public SMTP smuggling sequences:
// which ones end the data in each mode.
func TestSmuggling(t *testing.T) {
	type verdict struct {
		ends    bool   // the sequence ends the data (the rest is a new command)
		errKind error  // Strict/Raw error, if any
		offset  int64  // its offset
		out     string // decoded output (Compat)
	}
	const body = "hello"
	cases := []struct {
		seq    string
		compat verdict
		strict verdict
	}{
		{"\n.\n", verdict{ends: true, out: "hello\n"}, verdict{errKind: ErrBareLF, offset: 5}},
		{"\n.\r\n", verdict{ends: true, out: "hello\n"}, verdict{errKind: ErrBareLF, offset: 5}},
		{"\r\n.\n", verdict{ends: true, out: "hello\n"}, verdict{errKind: ErrBareLF, offset: 8}},
		{"\r.\r\n", verdict{ends: false}, verdict{errKind: ErrBareCR, offset: 5}},
		{"\r\n.\r", verdict{ends: false}, verdict{errKind: ErrBareCR, offset: 8}},
		{"\r\n\x00.\r\n", verdict{ends: false}, verdict{}},
		{"\x00\r\n.\r\n", verdict{ends: true, out: "hello\x00\n"}, verdict{ends: true}},
		{"\r\n.\r\n", verdict{ends: true, out: "hello\n"}, verdict{ends: true}},
	}
	for _, c := range cases {
		// The smuggled command follows the sequence; the real end follows it.
		in := []byte(body + c.seq + "MAIL FROM:<evil>\r\n.\r\n")
		real := bytes.Index(in, []byte("MAIL"))
		for _, mode := range []Mode{Compat, Strict, Raw} {
			got := decodeChunked(mode, 0, in, 1, 1)
			v := c.strict
			if mode == Compat {
				v = c.compat
			}
			ended := got.consumed == real
			if ended != v.ends {
				t.Errorf("%v %q: ends data early = %v, want %v (%v)", mode, c.seq, ended, v.ends, got)
			}
			if mode == Compat && v.ends && string(got.out) != v.out {
				t.Errorf("%v %q: out %q, want %q", mode, c.seq, got.out, v.out)
			}
			if mode != Compat {
				if got.consumed != len(in) && !ended {
					t.Errorf("%v %q: consumed %d of %d", mode, c.seq, got.consumed, len(in))
				}
				var se *SyntaxError
				switch {
				case v.errKind == nil && got.err != io.EOF:
					t.Errorf("%v %q: err %v, want io.EOF", mode, c.seq, got.err)
				case v.errKind != nil && (!errors.As(got.err, &se) || !errors.Is(got.err, v.errKind) || se.Offset != v.offset):
					t.Errorf("%v %q: err %v, want %v at %d", mode, c.seq, got.err, v.errKind, v.offset)
				}
			}
		}
	}
}

func TestDecoderGolden(t *testing.T) {
	cases := []struct {
		mode Mode
		in   string
		out  string
		err  error
	}{
		{Compat, "a\r\nb\n..c\r\n.\r\n", "a\nb\n.c\n", io.EOF},
		{Compat, "bare\rcr\r\n.\n", "bare\rcr\n", io.EOF},
		{Strict, "a\r\n..b\r\n.\r\n", "a\n.b\n", io.EOF},
		{Raw, "a\r\n..b\r\n.\r\n", "a\r\n.b\r\n", io.EOF},
		{Raw, ".\r\n", "", io.EOF},
		{Strict, "a\r\nb", "a\nb", io.ErrUnexpectedEOF}, // an open last line is decoded as it arrives
		{Strict, "ab\ncd\r\n.\r\n", "ab", &SyntaxError{Offset: 2, Err: ErrBareLF}},
		{Raw, "ab\rcd\r\n.\r\n", "ab", &SyntaxError{Offset: 2, Err: ErrBareCR}},
	}
	for _, c := range cases {
		got := decodeChunked(c.mode, 0, []byte(c.in), 2, 3)
		if string(got.out) != c.out || !sameErr(got.err, c.err) {
			t.Errorf("%v %q: %v, want out=%q err=%v", c.mode, c.in, got, c.out, c.err)
		}
	}
}

func TestDecoderAfterEnd(t *testing.T) {
	var d Decoder
	_, n, err := d.Transform(make([]byte, 10), []byte(".\r\nX"), false)
	if n != 3 || err != io.EOF || !d.Done() {
		t.Fatalf("got n=%d err=%v done=%v", n, err, d.Done())
	}
	if nd, ns, err := d.Transform(make([]byte, 10), []byte("X"), true); nd != 0 || ns != 0 || err != io.EOF {
		t.Fatalf("after end: %d %d %v", nd, ns, err)
	}
	d.Reset()
	if d.Done() {
		t.Fatal("Reset did not start a new block")
	}
}

func TestDecoderAllocs(t *testing.T) {
	in := []byte("line\r\n..dot\r\n\r\nx\r\n.\r\n")
	dst := make([]byte, 64)
	for _, mode := range []Mode{Compat, Strict, Raw} {
		d := Decoder{Mode: mode}
		if a := testing.AllocsPerRun(100, func() {
			d.Reset()
			d.Transform(dst, in, true)
		}); a != 0 {
			t.Errorf("%v: %v allocs per block", mode, a)
		}
	}
}

// A Mode or BarePolicy that is none of the constants is an error, the
// same for every kernel and for both directions, not a mode guessed.
func TestUnknownMode(t *testing.T) {
	dst := make([]byte, 64)
	for _, d := range []*Decoder{{Mode: Raw + 1}, {Mode: 9}, {Bare: BareNormalize + 1}} {
		if _, _, err := d.Transform(dst, []byte("a\r\n.\r\n"), true); !errors.Is(err, ErrMode) {
			t.Errorf("Decoder %+v: %v, want ErrMode", d, err)
		}
	}
	e := &Encoder{Mode: 9}
	if _, _, err := e.Transform(dst, []byte("a\n"), true); !errors.Is(err, ErrMode) {
		t.Errorf("Encoder %+v: %v, want ErrMode", e, err)
	}
}

// TestDecoderFinalErrorSame: a block with several kinds of problems ends
// with one error, which every later call and Err return again, without
// allocating it anew each time.
func TestDecoderFinalErrorSame(t *testing.T) {
	d := Decoder{Mode: Strict, MaxSize: 2}
	dst := make([]byte, 64)
	_, _, first := d.Transform(dst, []byte("abc\nd\re\r\n.\r\n"), false)
	if !errors.Is(first, ErrTooLarge) || !errors.Is(first, ErrBareLF) || !errors.Is(first, ErrBareCR) {
		t.Fatalf("final error %v, want too large, bare LF and bare CR", first)
	}
	for i := range 3 {
		if _, _, err := d.Transform(dst, []byte("MAIL"), i%2 == 0); err != first {
			t.Fatalf("call %d after the end: %v (%p), want the same error %p", i, err, err, first)
		}
		if err := d.Err(); err != first {
			t.Fatalf("Err after the end: %p, want %p", err, first)
		}
	}
	if a := testing.AllocsPerRun(10, func() { d.Transform(dst, nil, true); d.Err() }); a != 0 {
		t.Errorf("%v allocations per call after the end", a)
	}
}

package dot

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// Tests of BarePolicy, MaxLine and the reporting of several problems:
// golden cases from go-smtp's and Postfix's behaviour, the model
// (model_test.go) against net/textproto, and every kernel against the
// model under every split of src and dst.

var barePolicies = []BarePolicy{BareReject, BareKeep, BareNormalize}

// TestModelCompat checks the model of Compat mode against net/textproto.
func TestModelCompat(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ins := append([]string(nil), decodeInputs...)
	for range 5000 {
		ins = append(ins, string(randomInput(r, r.IntN(40))))
	}
	for _, s := range ins {
		in := []byte(s)
		got := modelDecode(modelConfig{mode: Compat}, in)
		if want := stdDecode(in); !got.equal(want) {
			t.Fatalf("%q:\n model %v\n  want %v", in, got, want)
		}
	}
}

// TestModelReject checks the model of BareReject without limits, where
// only one problem can be found first, against the first problem: the
// output stops at the first bare CR or LF.
func TestModelReject(t *testing.T) {
	for _, s := range decodeInputs {
		for _, mode := range []Mode{Strict, Raw} {
			got := modelDecode(modelConfig{mode: mode}, []byte(s))
			if k := strings.IndexAny(s, "\r\n"); got.err == io.EOF && k >= 0 {
				// Every CR and LF of a clean block is in a CRLF.
				if strings.Count(s[:got.consumed], "\r") != strings.Count(s[:got.consumed], "\n") {
					t.Errorf("%v %q: clean, but %v", mode, s, got)
				}
			}
		}
	}
}

// policyCase is one input and its expected decoding in Strict and Raw
// mode under each policy.
type policyCase struct {
	in     string
	policy BarePolicy
	strict string // output in Strict mode
	raw    string // output in Raw mode
	rest   string // input left after the block
	err    error  // io.EOF, io.ErrUnexpectedEOF or the data error
}

// policyCases are go-smtp's and Postfix's cases, and the corner cases of
// the end marker.
var policyCases = []policyCase{
	// go-smtp keeps a bare CR as data.
	{"Hey\r <3\r\n.\r\n", BareReject, "Hey", "Hey", "", &SyntaxError{Offset: 3, Err: ErrBareCR}},
	{"Hey\r <3\r\n.\r\n", BareKeep, "Hey\r <3\n", "Hey\r <3\r\n", "", io.EOF},
	{"Hey\r <3\r\n.\r\n", BareNormalize, "Hey\r <3\n", "Hey\r <3\r\n", "", io.EOF},
	// go-smtp: a bare LF is data and starts no line, so "\n.\n" ends
	// nothing and its dot is not a stuffed one.
	{"hey\r\n\n.\nthis is a test\r\n.\r\nNEXT", BareReject, "hey\n", "hey\r\n", "NEXT", &SyntaxError{Offset: 5, Err: ErrBareLF}},
	{"hey\r\n\n.\nthis is a test\r\n.\r\nNEXT", BareKeep, "hey\n\n.\nthis is a test\n", "hey\r\n\n.\nthis is a test\r\n", "NEXT", io.EOF},
	// Postfix normalize: a bare LF ends a line, a line it began is
	// dot-unstuffed, but only CRLF "." CRLF ends the data.
	{"hey\r\n\n.\nthis is a test\r\n.\r\nNEXT", BareNormalize, "hey\n\n\nthis is a test\n", "hey\r\n\r\n\r\nthis is a test\r\n", "NEXT", io.EOF},
	{"a\n.\r\nMAIL\r\n.\r\n", BareKeep, "a\n.\nMAIL\n", "a\n.\r\nMAIL\r\n", "", io.EOF},
	{"a\n.\r\nMAIL\r\n.\r\n", BareNormalize, "a\n\nMAIL\n", "a\r\n\r\nMAIL\r\n", "", io.EOF},
	{"a\n..b\r\n.\r\n", BareKeep, "a\n..b\n", "a\n..b\r\n", "", io.EOF},
	{"a\n..b\r\n.\r\n", BareNormalize, "a\n.b\n", "a\r\n.b\r\n", "", io.EOF},
	// A "." and a bare LF after CRLF: the dot is stuffed, the LF data
	// (Keep) or a line ending (Normalize); it is not the end either way.
	{"a\r\n.\nMAIL\r\n.\r\n", BareKeep, "a\n\nMAIL\n", "a\r\n\nMAIL\r\n", "", io.EOF},
	{"a\r\n.\nMAIL\r\n.\r\n", BareNormalize, "a\n\nMAIL\n", "a\r\n\r\nMAIL\r\n", "", io.EOF},
	{"a\r\n.\n", BareNormalize, "a\n\n", "a\r\n\r\n", "", io.ErrUnexpectedEOF},
	{"\n.\n", BareNormalize, "\n\n", "\r\n\r\n", "", io.ErrUnexpectedEOF},
	{"\n.\r\n.\r\n", BareNormalize, "\n\n", "\r\n\r\n", "", io.EOF},
	// A "." and a bare CR.
	{"a\r\n.\rb\r\n.\r\n", BareKeep, "a\n\rb\n", "a\r\n\rb\r\n", "", io.EOF},
	{"a\r\n.\rb\r\n.\r\n", BareNormalize, "a\n\rb\n", "a\r\n\rb\r\n", "", io.EOF},
	{"a\r\n.\r.\r\n.\r\n", BareKeep, "a\n\r.\n", "a\r\n\r.\r\n", "", io.EOF},
	// "a\r\r\n.\r\n" ends at its end marker in every policy.
	{"a\r\r\n.\r\nX", BareReject, "a", "a", "X", &SyntaxError{Offset: 1, Err: ErrBareCR}},
	{"a\r\r\n.\r\nX", BareKeep, "a\r\n", "a\r\r\n", "X", io.EOF},
	{"a\r\r\n.\r\nX", BareNormalize, "a\r\n", "a\r\r\n", "X", io.EOF},
	{"\r\r\n.\r\n", BareKeep, "\r\n", "\r\r\n", "", io.EOF},
	// Both kinds: each first offset is reported.
	{"a\nb\rc\n\r\r\n.\r\n", BareReject, "a", "a", "", wantErrs{&SyntaxError{Offset: 1, Err: ErrBareLF}, &SyntaxError{Offset: 3, Err: ErrBareCR}}},
	{"a\rb\nc\r\n.\r\n", BareReject, "a", "a", "", wantErrs{&SyntaxError{Offset: 3, Err: ErrBareLF}, &SyntaxError{Offset: 1, Err: ErrBareCR}}},
	{"a\rb\nc\r\n.\r\n", BareNormalize, "a\rb\nc\n", "a\rb\r\nc\r\n", "", io.EOF},
}

func TestPolicyCases(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		withKernel(k, func() {
			for _, c := range policyCases {
				for _, mode := range []Mode{Strict, Raw} {
					cfg := modelConfig{mode: mode, bare: c.policy}
					want := decResult{[]byte(c.strict), len(c.in) - len(c.rest), c.err}
					if mode == Raw {
						want.out = []byte(c.raw)
					}
					if got := modelDecode(cfg, []byte(c.in)); !got.equal(want) {
						t.Errorf("model %v %v %q:\n got %v\nwant %v", mode, c.policy, c.in, got, want)
					}
					checkSplits(t, cfg, []byte(c.in), want)
				}
			}
		})
	})
}

// checkSplits decodes in with every src window size and small dst sizes
// and compares each result with want.
func checkSplits(t *testing.T, cfg modelConfig, in []byte, want decResult) {
	t.Helper()
	for srcStep := 1; srcStep <= len(in)+1; srcStep++ {
		for _, dstStep := range []int{1, 2, 3, 7, len(in) + 8} {
			if got := decodeChunkedCfg(cfg, in, srcStep, dstStep); !got.equal(want) {
				t.Fatalf("%+v %q src=%d dst=%d:\n got %v\nwant %v", cfg, in, srcStep, dstStep, got, want)
			}
		}
	}
}

// TestPolicyErrors checks the precedence of the problems in one block.
func TestPolicyErrors(t *testing.T) {
	cases := []struct {
		cfg  modelConfig
		in   string
		out  string
		want []error // in order; one means exactly that error
		text string
	}{
		{modelConfig{mode: Strict, maxSize: 2}, "abc\r\n.\r\n", "ab", []error{ErrTooLarge}, "dot: data too large"},
		{modelConfig{mode: Strict, maxLine: 2}, "abc\r\n.\r\n", "ab", []error{ErrLineTooLong}, "dot: line too long"},
		{modelConfig{mode: Strict, maxSize: 2, maxLine: 3}, "abcd\n\r\n.\r\n", "ab",
			[]error{ErrTooLarge, ErrLineTooLong, ErrBareLF},
			"dot: data too large; dot: line too long; dot: bare LF at offset 4"},
		// The problem found first is not the one reported first.
		{modelConfig{mode: Raw, maxSize: 8, maxLine: 3}, "a\rb\nxxxx\r\nyyyy\r\n.\r\n", "a",
			[]error{ErrTooLarge, ErrLineTooLong, ErrBareLF, ErrBareCR},
			"dot: data too large; dot: line too long; dot: bare LF at offset 3; dot: bare CR at offset 1"},
		{modelConfig{mode: Compat, maxSize: 5, maxLine: 3}, "abcd\nefgh\n.\n", "abc", []error{ErrTooLarge, ErrLineTooLong},
			"dot: data too large; dot: line too long"},
		// A stuffed dot counts in a line's length.
		{modelConfig{mode: Strict, maxLine: 3}, "..bc\r\n.\r\n", ".b", []error{ErrLineTooLong}, "dot: line too long"},
		{modelConfig{mode: Strict, maxLine: 3}, "..b\r\nabc\r\n.\r\n", ".b\nabc\n", nil, ""},
		// Line endings do not count; a bare LF kept as data does.
		{modelConfig{mode: Strict, bare: BareKeep, maxLine: 3}, "ab\ncd\r\n.\r\n", "ab\n", []error{ErrLineTooLong}, "dot: line too long"},
		{modelConfig{mode: Strict, bare: BareNormalize, maxLine: 3}, "abc\ncde\r\n.\r\n", "abc\ncde\n", nil, ""},
		{modelConfig{mode: Compat, maxLine: 3}, "abc\r\ncde\n.\n", "abc\ncde\n", nil, ""},
	}
	for _, c := range cases {
		in := []byte(c.in)
		got := modelDecode(c.cfg, in)
		for _, dec := range []decResult{got, decodeChunkedCfg(c.cfg, in, len(in)+1, len(in)+1)} {
			if string(dec.out) != c.out || dec.consumed != len(in) {
				t.Errorf("%+v %q: %v, want out %q and all consumed", c.cfg, c.in, dec, c.out)
			}
			switch {
			case len(c.want) == 0:
				if dec.err != io.EOF {
					t.Errorf("%+v %q: err %v, want io.EOF", c.cfg, c.in, dec.err)
				}
				continue
			case len(c.want) == 1 && c.want[0] != ErrBareLF && c.want[0] != ErrBareCR:
				if dec.err != c.want[0] {
					t.Errorf("%+v %q: err %v, want exactly %v", c.cfg, c.in, dec.err, c.want[0])
				}
			}
			for _, w := range c.want {
				if !errors.Is(dec.err, w) {
					t.Errorf("%+v %q: err %v does not match %v", c.cfg, c.in, dec.err, w)
				}
			}
			if dec.err.Error() != c.text {
				t.Errorf("%+v %q: text %q, want %q", c.cfg, c.in, dec.err.Error(), c.text)
			}
		}
	}
}

// modelConfigs lists the decoder set-ups the model tests sweep.
func modelConfigs() []modelConfig {
	var cs []modelConfig
	for _, mode := range kModes {
		for _, bare := range barePolicies {
			if mode == Compat && bare != BareReject {
				continue // Bare is ignored
			}
			for _, maxSize := range []int64{0, 1, 4, 9} {
				for _, maxLine := range []int{0, 1, 2, 3, 6} {
					cs = append(cs, modelConfig{mode, bare, maxSize, maxLine})
				}
			}
		}
	}
	return cs
}

// TestDecoderModel decodes short inputs with every kernel, every set-up
// and every split of src and dst, and compares the results with the
// model's.
func TestDecoderModel(t *testing.T) {
	ins := append([]string(nil), decodeInputs...)
	for _, c := range policyCases {
		ins = append(ins, c.in)
	}
	r := rand.New(rand.NewPCG(13, 14))
	for range 40 {
		ins = append(ins, string(randomInput(r, 8+r.IntN(24))))
	}
	forKernels(t, func(t *testing.T, k kernel) {
		withKernel(k, func() {
			for _, cfg := range modelConfigs() {
				for i, s := range ins {
					if testing.Short() && i%4 != 0 {
						continue
					}
					in := []byte(s)
					checkSplits(t, cfg, in, modelDecode(cfg, in))
				}
			}
		})
	})
}

// TestDecoderModelRandom compares longer random inputs with the model,
// under random windows and dst sizes.
func TestDecoderModelRandom(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		withKernel(k, func() {
			r := rand.New(rand.NewPCG(15, 16))
			n := 4000
			if testing.Short() {
				n = 400
			}
			cs := modelConfigs()
			for i := range n {
				in := kInput(r, r.IntN(400), i)
				if r.IntN(2) == 0 {
					in = append(in, ".\r\n"...)
				}
				cfg := cs[r.IntN(len(cs))]
				cfg.maxSize *= int64(r.IntN(40))
				cfg.maxLine *= r.IntN(30)
				want := modelDecode(cfg, in)
				got := decodeChunkedCfg(cfg, in, 1+r.IntN(len(in)+1), 1+r.IntN(2*len(in)+2))
				if !got.equal(want) {
					t.Fatalf("%+v %q:\n got %v\nwant %v", cfg, in, got, want)
				}
			}
		})
	})
}

// TestDecoderCleanAllocs checks that a clean block allocates nothing with
// any policy or line limit.
func TestDecoderCleanAllocs(t *testing.T) {
	in := []byte(strings.Repeat("line of mail\r\n..dot\r\n\r\n", 200) + ".\r\n")
	dst := make([]byte, 1<<10)
	forKernels(t, func(t *testing.T, k kernel) {
		withKernel(k, func() {
			for _, cfg := range []modelConfig{
				{mode: Strict, maxLine: 998}, {mode: Raw, bare: BareKeep, maxLine: 20},
				{mode: Strict, bare: BareNormalize, maxSize: 1 << 20, maxLine: 13}, {mode: Compat, maxLine: 998},
			} {
				d := cfg.decoder()
				a := testing.AllocsPerRun(20, func() {
					d.Reset()
					for i := 0; ; {
						_, n, err := d.Transform(dst, in[i:], true)
						i += n
						if err == ErrShortDst {
							continue
						}
						if err != io.EOF {
							panic(fmt.Sprint(cfg, err))
						}
						break
					}
				})
				if a != 0 {
					t.Errorf("%+v: %v allocs per block", cfg, a)
				}
			}
		})
	})
}

// TestDecoderSize checks Size along a block.
func TestDecoderSize(t *testing.T) {
	d := Decoder{Mode: Raw, MaxSize: 7}
	dst := make([]byte, 4)
	in := []byte("ab\r\n..cd\r\n.\r\n")
	total := 0
	for i := 0; ; {
		nd, ns, err := d.Transform(dst, in[i:], true)
		i += ns
		total += nd
		if d.Size() != int64(total) {
			t.Fatalf("Size() = %d after %d bytes of output", d.Size(), total)
		}
		if err != ErrShortDst {
			if err != ErrTooLarge || total != 7 {
				t.Fatalf("err %v, %d bytes", err, total)
			}
			break
		}
	}
	d.Reset()
	if d.Size() != 0 || d.MaxSize != 7 {
		t.Fatalf("after Reset: Size %d MaxSize %d", d.Size(), d.MaxSize)
	}
}

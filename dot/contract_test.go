package dot

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	stdtp "net/textproto"
	"slices"
	"testing/iotest"

	"golang.org/x/text/transform"
	"testing"
)

// Tests of the Transformer contract as a caller that drives Transform
// itself relies on it: each call's results on their own (not only the
// sum of a run), under irregular splits with empty src and empty dst
// calls in between, Reset in the middle of a block, and the accessors
// (Size, Err, Done) after every call. The expected block comes from the
// model (model_test.go) or the encoder oracles.

// decCall checks what one Decoder.Transform call returned against the
// contract in its documentation, given what it was passed. total is the
// output of the block so far, this call included.
func decCall(d *Decoder, cfg modelConfig, dst, src []byte, atEOF bool, nd, ns int, err error, total int64) error {
	switch {
	case nd < 0 || nd > len(dst) || ns < 0 || ns > len(src):
		return fmt.Errorf("nDst=%d nSrc=%d for len(dst)=%d len(src)=%d", nd, ns, len(dst), len(src))
	case d.Size() != total:
		return fmt.Errorf("Size() = %d after %d bytes of output", d.Size(), total)
	case cfg.maxSize > 0 && total > cfg.maxSize:
		return fmt.Errorf("%d bytes of output, over MaxSize %d", total, cfg.maxSize)
	}
	switch {
	case err == nil:
		if ns != len(src) || d.Done() {
			return fmt.Errorf("nil error with nSrc=%d of %d, Done %v", ns, len(src), d.Done())
		}
	case err == ErrShortDst:
		if ns == len(src) || d.Done() {
			return fmt.Errorf("ErrShortDst with nSrc=%d of %d, Done %v", ns, len(src), d.Done())
		}
		// Every input byte's output is at most 2 bytes ("\r\n" in Raw
		// mode), and in Compat and Strict mode 1: dst must be full, or
		// too short for the next output.
		short := 1
		if cfg.mode == Raw {
			short = 2
		}
		if len(dst)-nd >= short {
			return fmt.Errorf("ErrShortDst with %d bytes of dst left (nSrc=%d of %d)", len(dst)-nd, ns, len(src))
		}
		if d.Err() != nil {
			return fmt.Errorf("ErrShortDst after a problem (%v): output has stopped, dst is not needed", d.Err())
		}
	case err == io.ErrUnexpectedEOF:
		if !atEOF || ns != len(src) || d.Done() {
			return fmt.Errorf("io.ErrUnexpectedEOF with atEOF %v, nSrc=%d of %d, Done %v", atEOF, ns, len(src), d.Done())
		}
	default: // io.EOF or a data error: the block has ended
		if !d.Done() {
			return fmt.Errorf("%v, but Done is false", err)
		}
		if err == io.EOF {
			if d.Err() != nil {
				return fmt.Errorf("io.EOF, but Err() = %v", d.Err())
			}
		} else if e := d.Err(); e != err {
			return fmt.Errorf("final error %v, but Err() = %v", err, e)
		}
	}
	if err != io.EOF && err != nil && err != ErrShortDst && err != io.ErrUnexpectedEOF {
		for _, kind := range []error{ErrTooLarge, ErrLineTooLong, ErrBareLF, ErrBareCR} {
			if errors.Is(err, kind) {
				return nil
			}
		}
		return fmt.Errorf("error %v (%T) matches none of the documented errors", err, err)
	}
	return nil
}

// irregular decodes in with a fresh decoder set up as cfg, in calls whose
// src and dst lengths come from r (either may be empty), checking every
// call, and returns the result of the block.
func irregular(t *testing.T, r *rand.Rand, cfg modelConfig, in []byte) decResult {
	t.Helper()
	d := cfg.decoder()
	var out []byte
	pos := 0
	buf := make([]byte, 2*len(in)+8)
	grain := []int{1, 2, 3, 5, 8, 64, len(in)}[r.IntN(7)] // of src and dst lengths
	for calls := 0; ; calls++ {
		if calls > 20*len(in)+200 {
			t.Fatalf("%+v %q: no end after %d calls", cfg, in, calls)
		}
		dst, src, off, atEOF := pickCall(r, in, pos, grain, 2, buf)
		dstLen := len(dst)
		nd, ns, err := d.Transform(dst, src, atEOF)
		if i := writtenOutside(buf, off, dstLen); i >= 0 {
			t.Fatalf("%+v %q: byte %d of the buffer around dst[%d:%d] written", cfg, in, i, off, off+dstLen)
		}
		out = append(out, dst[:nd]...)
		pos += ns
		if e := decCall(d, cfg, dst, src, atEOF, nd, ns, err, int64(len(out))); e != nil {
			t.Fatalf("%+v %q: call %d (src %q, dst %d, atEOF %v): %v", cfg, in, calls, src, dstLen, atEOF, e)
		}
		if err != nil && err != ErrShortDst {
			// Every later call returns the same, consuming nothing.
			nd2, ns2, err2 := d.Transform(buf, in[pos:], true)
			if err != io.ErrUnexpectedEOF && (nd2 != 0 || ns2 != 0 || err2 != err) {
				t.Fatalf("%+v %q: after %v, a call returned %d %d %v", cfg, in, err, nd2, ns2, err2)
			}
			return decResult{out, pos, err}
		}
	}
}

// pickCall shapes a Transform call of the contract tests: src the next
// bytes of in from pos (up to grain of them, or now and then the rest),
// dst up to grain+slack bytes (now and then none, or any length) at a
// random place in buf, whose other bytes are set to 0xEE: they are not
// the transformer's to write (writtenOutside).
func pickCall(r *rand.Rand, in []byte, pos, grain, slack int, buf []byte) (dst, src []byte, off int, atEOF bool) {
	srcLen := min(r.IntN(grain+1), len(in)-pos)
	if r.IntN(8) == 0 {
		srcLen = len(in) - pos
	}
	dstLen := min(r.IntN(grain+slack), len(buf))
	switch r.IntN(8) {
	case 0:
		dstLen = r.IntN(len(buf) + 1)
	case 1:
		dstLen = 0
	}
	for i := range buf {
		buf[i] = 0xEE
	}
	off = r.IntN(len(buf) - dstLen + 1)
	return buf[off : off+dstLen : off+dstLen], slices.Clone(in[pos : pos+srcLen]), off, pos+srcLen == len(in)
}

// writtenOutside returns the index of a byte of buf outside
// buf[off:off+n] that is no longer 0xEE, or -1.
func writtenOutside(buf []byte, off, n int) int {
	for i, c := range buf {
		if (i < off || i >= off+n) && c != 0xEE {
			return i
		}
	}
	return -1
}

// contractInputs are short blocks for the contract tests: the golden
// inputs, the policy cases, and random ones, some with the end marker
// and something after it.
func contractInputs(r *rand.Rand, n int) [][]byte {
	var ins [][]byte
	for _, s := range decodeInputs {
		ins = append(ins, []byte(s))
	}
	for _, c := range policyCases {
		ins = append(ins, []byte(c.in))
	}
	for i := range n {
		in := kInput(r, r.IntN(200), i)
		if i%3 == 0 {
			in = append(in, ".\r\nQUIT\r\n"...)
		}
		ins = append(ins, in)
	}
	return ins
}

// TestDecoderCallContract decodes blocks with every kernel and set-up in
// irregular calls, checks each call, and compares the block with the
// model.
func TestDecoderCallContract(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		withKernel(k, func() {
			r := rand.New(rand.NewPCG(164, 1))
			n := 600
			if testing.Short() {
				n = 60
			}
			ins := contractInputs(r, n)
			cfgs := modelConfigs()
			for i, in := range ins {
				for j := range 10 {
					cfg := cfgs[(i*7+j*13)%len(cfgs)]
					want := modelDecode(cfg, in)
					if got := irregular(t, r, cfg, in); !got.equal(want) {
						t.Fatalf("%+v %q:\n got %v\nwant %v", cfg, in, got, want)
					}
				}
			}
		})
	})
}

// TestDecoderResetMidBlock stops a block after every prefix of its input
// (in any state, a problem found or not, ended or not), resets the
// decoder and decodes another block: the result is a fresh decoder's.
func TestDecoderResetMidBlock(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		withKernel(k, func() {
			r := rand.New(rand.NewPCG(164, 2))
			next := []byte("a\r\n..b\r\n.\r\nX")
			for _, cfg := range []modelConfig{
				{mode: Compat}, {mode: Strict}, {mode: Raw, bare: BareKeep},
				{mode: Strict, bare: BareNormalize, maxSize: 5, maxLine: 3},
				{mode: Raw, maxSize: 3}, {mode: Compat, maxLine: 2},
			} {
				want := modelDecode(cfg, next)
				for _, in := range contractInputs(r, 10) {
					for cut := 0; cut <= len(in); cut++ {
						d := cfg.decoder()
						dst := make([]byte, 1+r.IntN(8))
						for i := 0; i < cut; {
							nd, ns, err := d.Transform(dst, in[i:cut], false)
							i += ns
							if err != ErrShortDst {
								break
							}
							if nd == 0 && ns == 0 {
								dst = make([]byte, 2*len(dst)) // Raw writes "\r\n" whole
							}
						}
						d.Reset()
						if d.Size() != 0 || d.Done() || d.Err() != nil {
							t.Fatalf("%+v: after Reset at %d of %q: Size %d Done %v Err %v", cfg, cut, in, d.Size(), d.Done(), d.Err())
						}
						if d.Mode != cfg.mode || d.Bare != cfg.bare || d.MaxSize != cfg.maxSize || d.MaxLine != cfg.maxLine {
							t.Fatalf("Reset changed the set-up: %+v", d)
						}
						fresh := cfg.decoder()
						fd, dd := make([]byte, 64), make([]byte, 64)
						fnd, fns, ferr := fresh.Transform(fd, next, true)
						dnd, dns, derr := d.Transform(dd, next, true)
						if !bytes.Equal(dd[:dnd], fd[:fnd]) || dns != fns || !sameErr(derr, ferr) {
							t.Fatalf("%+v: reset decoder %q %d %v, fresh %q %d %v", cfg, dd[:dnd], dns, derr, fd[:fnd], fns, ferr)
						}
						if !(decResult{fd[:fnd], fns, ferr}).equal(want) {
							t.Fatalf("%+v: fresh decoder %q %d %v, model %v", cfg, fd[:fnd], fns, ferr, want)
						}
					}
				}
			}
		})
	})
}

// TestTransformWrappers runs Decoders and Encoders through the wrappers
// of golang.org/x/text/transform (NewReader over a source that gives a
// byte or half a buffer at a time, NewWriter with writes of random size,
// String, Bytes, Append, Chain) and compares each with the model or the
// encoder oracles.
func TestTransformWrappers(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		withKernel(k, func() {
			r := rand.New(rand.NewPCG(164, 3))
			n := 200
			if testing.Short() {
				n = 20
			}
			ins := contractInputs(r, n)
			// Long ones too, past transform's 4096-byte buffers.
			for i := range 8 {
				in := kInput(r, 5000+r.IntN(9000), i)
				if i%2 == 0 {
					in = append(in, "\r\n.\r\nNEXT"...)
				}
				ins = append(ins, in)
			}
			cfgs := modelConfigs()
			for i, in := range ins {
				cfg := cfgs[(i*11)%len(cfgs)]
				if len(in) > 1000 && cfg.maxSize > 0 {
					cfg.maxSize *= 1000
				}
				if len(in) > 1000 && cfg.maxLine > 0 {
					cfg.maxLine *= 50
				}
				wrapDecode(t, r, cfg, in)
				mode := kModes[i%3]
				if mode != Compat && i%2 == 0 {
					in = bytes.ReplaceAll(bytes.ReplaceAll(in, []byte("\r"), nil), []byte("\n"), []byte("\r\n"))
				}
				wrapEncode(t, r, mode, in)
			}
		})
	})
}

// wantRead is what reading a transform.Reader to the end returns for a
// block that ends with err: io.ReadAll's nil for io.EOF.
func wantRead(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

func wrapDecode(t *testing.T, r *rand.Rand, cfg modelConfig, in []byte) {
	t.Helper()
	want := modelDecode(cfg, in)
	d := cfg.decoder()
	what := func(how string) string { return fmt.Sprintf("%s %+v %q", how, cfg, clip(in)) }

	for _, src := range []io.Reader{iotest.OneByteReader(bytes.NewReader(in)), iotest.HalfReader(bytes.NewReader(in))} {
		d.Reset()
		tr := transform.NewReader(src, d)
		var out []byte
		p := make([]byte, 1+r.IntN(7))
		var err error
		for {
			var m int
			m, err = tr.Read(p)
			out = append(out, p[:m]...)
			if err != nil {
				break
			}
		}
		if err == io.EOF {
			err = nil
		}
		if !bytes.Equal(out, want.out) || !sameErr(err, wantRead(want.err)) {
			t.Fatalf("%s:\n got %q %v\nwant %v", what("transform.NewReader"), out, err, want)
		}
	}

	var buf bytes.Buffer
	consumed, err := writePieces(r, transform.NewWriter(&buf, d), in) // resets d
	if !bytes.Equal(buf.Bytes(), want.out) || consumed != want.consumed || !sameErr(err, want.err) {
		t.Fatalf("%s:\n got %q consumed=%d %v\nwant %v", what("transform.NewWriter"), buf.Bytes(), consumed, err, want)
	}

	s, n, err := transform.String(d, string(in))
	if s != string(want.out) || n != want.consumed || !sameErr(err, want.err) {
		t.Fatalf("%s:\n got %q consumed=%d %v\nwant %v", what("transform.String"), s, n, err, want)
	}
	b, n, err := transform.Bytes(d, in)
	if !bytes.Equal(b, want.out) || n != want.consumed || !sameErr(err, want.err) {
		t.Fatalf("%s:\n got %q consumed=%d %v\nwant %v", what("transform.Bytes"), b, n, err, want)
	}
	b, n, err = transform.Append(d, []byte("prefix"), in)
	if string(b) != "prefix"+string(want.out) || n != want.consumed || !sameErr(err, want.err) {
		t.Fatalf("%s:\n got %q consumed=%d %v\nwant %v", what("transform.Append"), b, n, err, want)
	}
}

// writePieces writes in to w in pieces of random lengths under 20, up to
// the first error, closes w and returns what w took and the first error.
func writePieces(r *rand.Rand, w io.WriteCloser, in []byte) (consumed int, err error) {
	for rest := in; len(rest) > 0; {
		m := min(len(rest), r.IntN(20))
		var k int
		k, err = w.Write(rest[:m])
		consumed += k
		if err != nil {
			break
		}
		rest = rest[m:]
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return consumed, err
}

func wrapEncode(t *testing.T, r *rand.Rand, mode Mode, in []byte) {
	t.Helper()
	want := encOracle(mode, in)
	e := &Encoder{Mode: mode}
	what := func(how string) string { return fmt.Sprintf("%s %v %q", how, mode, clip(in)) }

	out, err := io.ReadAll(transform.NewReader(iotest.OneByteReader(bytes.NewReader(in)), e))
	if !bytes.Equal(out, want.out) || !sameErr(err, want.err) {
		t.Fatalf("%s:\n got %q %v\nwant %v", what("transform.NewReader"), out, err, want)
	}

	var buf bytes.Buffer
	consumed, err := writePieces(r, transform.NewWriter(&buf, e), in)
	if !bytes.Equal(buf.Bytes(), want.out) || consumed > want.consumed || !sameErr(err, want.err) {
		t.Fatalf("%s:\n got %q consumed=%d %v\nwant %v", what("transform.NewWriter"), buf.Bytes(), consumed, err, want)
	}

	s, n, err := transform.String(e, string(in))
	if s != string(want.out) || n != want.consumed || !sameErr(err, want.err) {
		t.Fatalf("%s:\n got %q consumed=%d %v\nwant %v", what("transform.String"), s, n, err, want)
	}
	b, n, err := transform.Bytes(e, in)
	if !bytes.Equal(b, want.out) || n != want.consumed || !sameErr(err, want.err) {
		t.Fatalf("%s:\n got %q consumed=%d %v\nwant %v", what("transform.Bytes"), b, n, err, want)
	}

	// Encoding then decoding gives the text back (with LF line endings
	// but in Raw mode), the end marker consumed.
	if want.err != nil {
		return
	}
	dec := &Decoder{Mode: mode}
	dwant := decResult{}
	if mode == Compat {
		dwant = stdDecode(want.out)
	} else {
		dwant = modelDecode(modelConfig{mode: mode}, want.out)
	}
	s, n, err = transform.String(transform.Chain(e, dec), string(in))
	if s != string(dwant.out) || n != len(in) || err != io.EOF {
		t.Fatalf("%s:\n got %q consumed=%d %v\nwant %q consumed=%d EOF", what("transform.Chain(Encoder, Decoder)"), s, n, err, dwant.out, len(in))
	}
}

// TestEncoderCallContract encodes with every kernel in irregular calls
// (empty src and dst among them), checks each call against the
// documentation, and the whole against the oracles.
func TestEncoderCallContract(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		withKernel(k, func() {
			r := rand.New(rand.NewPCG(164, 4))
			n := 600
			if testing.Short() {
				n = 60
			}
			for i, in := range contractInputs(r, n) {
				mode := kModes[i%3]
				if mode != Compat && i%2 == 0 {
					in = bytes.ReplaceAll(bytes.ReplaceAll(in, []byte("\r"), nil), []byte("\n"), []byte("\r\n"))
				}
				want := encOracle(mode, in)
				if got := irregularEnc(t, r, mode, in); !got.equal(want) {
					t.Fatalf("%v %q:\n got %v\nwant %v", mode, in, got, want)
				}
			}
		})
	})
}

func irregularEnc(t *testing.T, r *rand.Rand, mode Mode, in []byte) encResult {
	t.Helper()
	e := &Encoder{Mode: mode}
	var out []byte
	pos := 0
	buf := make([]byte, 2*len(in)+8)
	grain := []int{1, 2, 3, 5, 8, 64, len(in)}[r.IntN(7)]
	for calls := 0; ; calls++ {
		if calls > 20*len(in)+200 {
			t.Fatalf("%v %q: no end after %d calls", mode, in, calls)
		}
		dst, src, off, atEOF := pickCall(r, in, pos, grain, 3, buf)
		dstLen := len(dst)
		nd, ns, err := e.Transform(dst, src, atEOF)
		if i := writtenOutside(buf, off, dstLen); i >= 0 {
			t.Fatalf("%v %q: byte %d of the buffer around dst[%d:%d] written", mode, in, i, off, off+dstLen)
		}
		if nd < 0 || nd > len(dst) || ns < 0 || ns > len(src) {
			t.Fatalf("%v %q: nDst=%d nSrc=%d for len(dst)=%d len(src)=%d", mode, in, nd, ns, len(dst), len(src))
		}
		out = append(out, dst[:nd]...)
		pos += ns
		switch err {
		case nil:
			if ns != len(src) {
				t.Fatalf("%v %q: nil error with nSrc=%d of %d", mode, in, ns, len(src))
			}
			if atEOF {
				// The end marker is written: what follows is ErrClosed,
				// and ending again writes nothing.
				if _, _, err := e.Transform(buf, []byte("x"), false); err != ErrClosed {
					t.Fatalf("%v %q: input after the end: %v, want ErrClosed", mode, in, err)
				}
				if nd, ns, err := e.Transform(buf, nil, true); nd != 0 || ns != 0 || err != nil {
					t.Fatalf("%v %q: ending again: %d %d %v", mode, in, nd, ns, err)
				}
				return encResult{out, pos, nil}
			}
		case ErrShortDst:
			// A byte's output is at most 2 bytes, and the end marker
			// is written as far as dst has room.
			if (ns == len(src) && !atEOF) || len(dst)-nd >= 2 || (ns == len(src) && nd != len(dst)) {
				t.Fatalf("%v %q: ErrShortDst with nSrc=%d of %d, %d bytes of dst left, atEOF %v", mode, in, ns, len(src), len(dst)-nd, atEOF)
			}
		default:
			var se *SyntaxError
			if mode == Compat || !errors.As(err, &se) || !(errors.Is(err, ErrBareCR) || errors.Is(err, ErrBareLF)) {
				t.Fatalf("%v %q: error %v (%T)", mode, in, err, err)
			}
			// The error is sticky.
			if nd, ns, err2 := e.Transform(buf, in[pos:], true); nd != 0 || ns != 0 || err2 != err {
				t.Fatalf("%v %q: after %v: %d %d %v", mode, in, err, nd, ns, err2)
			}
			e.Reset()
			if nd, ns, err := e.Transform(buf, []byte("ok\r\n"), true); string(buf[:nd]) != "ok\r\n.\r\n" || ns != 4 || err != nil {
				t.Fatalf("%v: after Reset: %q %d %v", mode, buf[:nd], ns, err)
			}
			return encResult{out, pos, err}
		}
	}
}

// TestLimitsOutOfRange: a MaxSize or MaxLine that is not positive is no
// limit, and one too large to reach is none either, with every kernel
// and in every mode and policy.
func TestLimitsOutOfRange(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		withKernel(k, func() {
			r := rand.New(rand.NewPCG(164, 5))
			ins := contractInputs(r, 100)
			for i := range 6 {
				ins = append(ins, append(kInput(r, 3000+r.IntN(3000), i), "\r\n.\r\n"...))
			}
			for i, in := range ins {
				for _, bare := range barePolicies {
					mode := kModes[i%3]
					want := modelDecode(modelConfig{mode: mode, bare: bare}, in)
					for _, lim := range []struct {
						size int64
						line int
					}{{-1, 0}, {0, -1}, {math.MinInt64, math.MinInt}, {math.MaxInt64, math.MaxInt}, {math.MaxInt64 - 1, math.MaxInt - 1}} {
						cfg := modelConfig{mode: mode, bare: bare, maxSize: lim.size, maxLine: lim.line}
						for _, step := range []int{1, 7, 64, len(in) + 1} {
							if got := decodeChunkedCfg(cfg, in, step, step+1); !got.equal(want) {
								t.Fatalf("%+v %q src=%d:\n got %v\nwant %v", cfg, clip(in), step, got, want)
							}
						}
					}
				}
			}
		})
	})
}

// TestCompatConsumesAsStd checks the Compat decoder's consumption call by
// call against net/textproto's DotReader: for a Read into a buffer of the
// same size as dst, both take the same input and give the same bytes (the
// Decoder stops as soon as dst is full, as DotReader does).
func TestCompatConsumesAsStd(t *testing.T) {
	forKernels(t, func(t *testing.T, k kernel) {
		withKernel(k, func() {
			r := rand.New(rand.NewPCG(164, 6))
			for i, in := range contractInputs(r, 400) {
				compatConsumes(t, r, i, in)
			}
			for i := range 10 {
				compatConsumes(t, r, 4, append(kInput(r, 5000, i), "\r\n.\r\n"...))
			}
		})
	})
}

func compatConsumes(t *testing.T, r *rand.Rand, i int, in []byte) {
	br := bufio.NewReaderSize(bytes.NewReader(in), len(in)+16)
	dr := stdtp.NewReader(br).DotReader()
	var d Decoder
	pos := 0
	grain := []int{1, 2, 3, 8, 100}[i%5]
	for call := 0; ; call++ {
		p := make([]byte, 1+r.IntN(grain))
		sn, serr := dr.Read(p)
		dst := make([]byte, len(p))
		// (Without atEOF: DotReader reports a cut block only
		// at the Read after its last byte.)
		nd, ns, err := d.Transform(dst, in[pos:], false)
		pos += ns
		stdPos := len(in) - br.Buffered()
		if string(dst[:nd]) != string(p[:sn]) || pos != stdPos {
			t.Fatalf("%q, call %d into %d bytes: decoded %q and consumed %d (%v); net/textproto %q and %d (%v)",
				in, call, len(p), dst[:nd], pos, err, p[:sn], stdPos, serr)
		}
		switch {
		case serr == io.ErrUnexpectedEOF && err == nil && pos == len(in):
			return
		case serr != nil || (err != nil && err != ErrShortDst):
			if serr != err {
				t.Fatalf("%q, call %d: error %v, net/textproto %v", in, call, err, serr)
			}
			return
		}
	}
}

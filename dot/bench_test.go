package dot

import (
	"bufio"
	"bytes"
	"io"
	stdtp "net/textproto"
	"sync"
	"testing"

	"github.com/wirespeed/wirespeed/internal/corpus"
)

// Kernel benchmarks. Compare the kernels with
//
//	go test -run '^$' -bench . -count 6 ./dot | benchstat -col /impl -
//
// impl=copy is a plain copy of the same bytes through the same 32 KiB
// buffer, impl=stdlib is net/textproto's DotReader or DotWriter over the
// whole input, and impl=generic, avx2 and avx512 run Transform with that
// kernel forced (kernels this CPU lacks are skipped).

type benchCorpus struct {
	name    string
	plain   []byte // encoder input
	encoded []byte // decoder input: plain dot-encoded, with the end marker
}

var benchCorpora = sync.OnceValue(func() []benchCorpus {
	cs := []benchCorpus{
		{name: "mail", plain: corpus.Mail(corpus.Size)},
		{name: "base64", plain: corpus.Base64(corpus.Size)},
		{name: "binary", plain: corpus.Binary(corpus.Size)},
		{name: "tiny", plain: corpus.Tiny(corpus.Size)},
		{name: "longline", plain: corpus.LongLine(corpus.Size)},
		{name: "dots", plain: corpus.Dots(corpus.Size)},
	}
	for i := range cs {
		var buf bytes.Buffer
		bw := bufio.NewWriter(&buf)
		w := stdtp.NewWriter(bw).DotWriter()
		w.Write(cs[i].plain)
		w.Close()
		cs[i].encoded = buf.Bytes()
	}
	return cs
})

const benchBuf = 32 << 10

var benchImpls = []string{"copy", "stdlib", "generic", "avx2", "avx512"}

// benchKernel runs f with the named kernel active, or skips.
func benchKernel(b *testing.B, name string, f func()) {
	restore, ok := useKernel(name)
	if !ok {
		b.Skipf("no %s kernel on this CPU or build", name)
	}
	defer restore()
	f()
}

// benchCopy copies src through a buffer of benchBuf bytes.
func benchCopy(b *testing.B, src []byte) {
	buf := make([]byte, benchBuf)
	for b.Loop() {
		for i := 0; i < len(src); {
			i += copy(buf, src[i:])
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, c := range benchCorpora() {
		for _, impl := range benchImpls {
			b.Run("corpus="+c.name+"/impl="+impl, func(b *testing.B) {
				b.SetBytes(int64(len(c.encoded)))
				b.ReportAllocs()
				switch impl {
				case "copy":
					benchCopy(b, c.encoded)
				case "stdlib":
					br := bufio.NewReader(nil)
					r := stdtp.NewReader(br)
					for b.Loop() {
						br.Reset(bytes.NewReader(c.encoded))
						io.Copy(io.Discard, r.DotReader())
					}
				default:
					benchKernel(b, impl, func() { benchDecode(b, c.encoded) })
				}
			})
		}
	}
}

// BenchmarkDecodeLimits measures what Bare, MaxLine and MaxSize cost a Raw decoder
// on corpora whose lines are short and end in CRLF, and the other modes with
// and without a limit. Compare with
//
//	go test -run '^$' -bench DecodeLimits -count 6 ./dot | benchstat -col /cfg -
func BenchmarkDecodeLimits(b *testing.B) {
	cfgs := []struct {
		name string
		d    Decoder
	}{
		{"none", Decoder{Mode: Raw}},
		{"maxline=998", Decoder{Mode: Raw, MaxLine: 998}},
		{"maxsize=1g", Decoder{Mode: Raw, MaxSize: 1 << 30}},
		{"bare=keep", Decoder{Mode: Raw, Bare: BareKeep}},
		{"bare=normalize", Decoder{Mode: Raw, Bare: BareNormalize}},
		{"compat,maxline=998", Decoder{MaxLine: 998}}, // net/textproto's decoding, a server's limit
		{"strict", Decoder{Mode: Strict}},             // RFC 5321's framing, LF output
	}
	for _, c := range benchCorpora() {
		if c.name != "mail" && c.name != "base64" && c.name != "tiny" {
			continue // lines too long, or bare CRs
		}
		for _, impl := range []string{"generic", "avx2", "avx512"} {
			for _, cfg := range cfgs {
				b.Run("corpus="+c.name+"/impl="+impl+"/cfg="+cfg.name, func(b *testing.B) {
					b.SetBytes(int64(len(c.encoded)))
					b.ReportAllocs()
					benchKernel(b, impl, func() { benchDecodeWith(b, cfg.d, c.encoded) })
				})
			}
		}
	}
}

// benchDecode decodes src into a benchBuf-byte buffer, as DotReader's
// WriteTo does.
func benchDecode(b *testing.B, src []byte) { benchDecodeWith(b, Decoder{}, src) }

// benchDecodeWith is benchDecode with a decoder set up as d.
func benchDecodeWith(b *testing.B, d Decoder, src []byte) {
	dst := make([]byte, benchBuf)
	for b.Loop() {
		d.Reset()
		for i := 0; ; {
			_, n, err := d.Transform(dst, src[i:], true)
			i += n
			if err != ErrShortDst {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, c := range benchCorpora() {
		for _, impl := range benchImpls {
			b.Run("corpus="+c.name+"/impl="+impl, func(b *testing.B) {
				b.SetBytes(int64(len(c.plain)))
				b.ReportAllocs()
				switch impl {
				case "copy":
					benchCopy(b, c.plain)
				case "stdlib":
					bw := bufio.NewWriter(io.Discard)
					w := stdtp.NewWriter(bw)
					for b.Loop() {
						d := w.DotWriter()
						d.Write(c.plain)
						d.Close()
					}
				default:
					benchKernel(b, impl, func() { benchEncode(b, c.plain) })
				}
			})
		}
	}
}

// BenchmarkEncodeStrict measures the Strict encoder on the corpora whose
// lines all end in CRLF (Strict refuses a bare CR or LF).
func BenchmarkEncodeStrict(b *testing.B) {
	for _, c := range benchCorpora() {
		if c.name != "mail" && c.name != "base64" && c.name != "tiny" {
			continue
		}
		for _, impl := range []string{"generic", "avx2", "avx512"} {
			b.Run("corpus="+c.name+"/impl="+impl, func(b *testing.B) {
				b.SetBytes(int64(len(c.plain)))
				b.ReportAllocs()
				benchKernel(b, impl, func() { benchEncodeWith(b, Encoder{Mode: Strict}, c.plain) })
			})
		}
	}
}

// benchEncode encodes src into a benchBuf-byte buffer.
func benchEncode(b *testing.B, src []byte) { benchEncodeWith(b, Encoder{}, src) }

// benchEncodeWith is benchEncode with an encoder set up as e.
func benchEncodeWith(b *testing.B, e Encoder, src []byte) {
	dst := make([]byte, benchBuf)
	for b.Loop() {
		e.Reset()
		for i := 0; ; {
			_, n, err := e.Transform(dst, src[i:], true)
			i += n
			if err != ErrShortDst {
				if err != nil {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

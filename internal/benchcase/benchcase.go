// Package benchcase holds the benchmark bodies that `go test -bench` and
// `wirespeed bench` share, so both measure the same code paths: the ones
// users call.
package benchcase

import (
	"bufio"
	"bytes"
	"io"
	stdtp "net/textproto"
	"testing"

	"github.com/wirespeed/wirespeed/internal/corpus"
	"github.com/wirespeed/wirespeed/textproto"
)

// FillReader is the endless reader of golang/go#56047: every Read fills p
// with one byte value, by doubling copies.
type FillReader byte

func (f FillReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = byte(f)
	for n := 1; n < len(p); n *= 2 {
		copy(p[n:], p[:n])
	}
	return len(p), nil
}

// SeedSize is the payload of every seed benchmark.
const SeedSize = 4 << 20

// seedSource returns the seed input: 4 MiB of dots, through an
// io.LimitedReader as in the report. The reader is reused, so that the
// benchmarks count only the allocations of the code under test.
func seedSource() func() io.Reader {
	lr := &io.LimitedReader{R: FillReader('.')}
	return func() io.Reader {
		lr.N = SeedSize
		return lr
	}
}

// The seed table of golang/go#56047, each op moving 4 MiB of dots.

func IONull(b *testing.B) {
	src := seedSource()
	for b.Loop() {
		io.Copy(io.Discard, src())
	}
}

func BufioWrite(b *testing.B) {
	bw := bufio.NewWriter(io.Discard)
	src := seedSource()
	for b.Loop() {
		io.Copy(bw, src())
		bw.Flush()
	}
}

func BufioRead(b *testing.B) {
	br := bufio.NewReader(nil)
	src := seedSource()
	for b.Loop() {
		br.Reset(src())
		io.Copy(io.Discard, br)
	}
}

func BufioWriteByte(b *testing.B) {
	bw := bufio.NewWriter(io.Discard)
	for b.Loop() {
		for range SeedSize {
			bw.WriteByte('.')
		}
		bw.Flush()
	}
}

func BufioReadByte(b *testing.B) {
	br := bufio.NewReader(nil)
	src := seedSource()
	for b.Loop() {
		br.Reset(src())
		for {
			if _, err := br.ReadByte(); err != nil {
				break
			}
		}
	}
}

// onlyReader hides a reader's other methods (as io.LimitReader does), so
// that io.Copy takes the DotReader's or DotWriter's own path.
type onlyReader struct{ io.Reader }

// reuse returns a source of data that allocates nothing per op.
func reuse(data []byte) func() io.Reader {
	br := bytes.NewReader(nil)
	var r io.Reader = onlyReader{br}
	return func() io.Reader {
		br.Reset(data)
		return r
	}
}

// DotWriter copies src through a DotWriter into io.Discard. The Writer is
// reused across ops, as a connection's would be.
func DotWriter(b *testing.B, impl string, src func() io.Reader) {
	bw := bufio.NewWriter(io.Discard)
	switch impl {
	case "stdlib":
		w := stdtp.NewWriter(bw)
		for b.Loop() {
			d := w.DotWriter()
			io.Copy(d, src())
			d.Close()
		}
	case "wirespeed":
		w := textproto.NewWriter(bw)
		for b.Loop() {
			d := w.DotWriter()
			io.Copy(d, src())
			d.Close()
		}
	default:
		panic("unknown impl " + impl)
	}
}

// DotReader copies a DotReader over src into io.Discard. The Reader is
// reused across ops, as a connection's would be.
func DotReader(b *testing.B, impl string, src func() io.Reader) {
	br := bufio.NewReader(nil)
	switch impl {
	case "stdlib":
		r := stdtp.NewReader(br)
		for b.Loop() {
			br.Reset(src())
			io.Copy(io.Discard, r.DotReader())
		}
	case "wirespeed":
		r := textproto.NewReader(br)
		for b.Loop() {
			br.Reset(src())
			io.Copy(io.Discard, r.DotReader())
		}
	default:
		panic("unknown impl " + impl)
	}
}

// SeedDotWriter and SeedDotReader are the seed benchmark's dot rows.
func SeedDotWriter(impl string) func(*testing.B) {
	return func(b *testing.B) { DotWriter(b, impl, seedSource()) }
}

func SeedDotReader(impl string) func(*testing.B) {
	return func(b *testing.B) { DotReader(b, impl, seedSource()) }
}

// A Corpus is a named benchmark input in its plain and dot-encoded forms.
type Corpus struct {
	Name    string
	Plain   []byte // DotWriter input
	Encoded []byte // DotReader input: Plain dot-encoded, with the end marker
}

// Corpora returns the standard corpora, each about 4 MiB.
func Corpora() []Corpus {
	cs := []Corpus{
		{Name: "mail", Plain: corpus.Mail(corpus.Size)},
		{Name: "longline", Plain: corpus.LongLine(corpus.Size)},
		{Name: "tiny", Plain: corpus.Tiny(corpus.Size)},
		{Name: "base64", Plain: corpus.Base64(corpus.Size)},
		{Name: "binary", Plain: corpus.Binary(corpus.Size)},
	}
	for i := range cs {
		cs[i].Encoded = Encode(cs[i].Plain)
	}
	return cs
}

// Encode dot-encodes plain with net/textproto, the reference.
func Encode(plain []byte) []byte {
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	d := stdtp.NewWriter(bw).DotWriter()
	d.Write(plain)
	d.Close()
	return buf.Bytes()
}

// CorpusDotReader and CorpusDotWriter run DotReader and DotWriter on c.
func CorpusDotReader(c Corpus, impl string) func(*testing.B) {
	return func(b *testing.B) {
		DotReader(b, impl, reuse(c.Encoded))
	}
}

func CorpusDotWriter(c Corpus, impl string) func(*testing.B) {
	return func(b *testing.B) {
		DotWriter(b, impl, reuse(c.Plain))
	}
}

// CorpusCopy is the plain-copy baseline for a DotReader: copying the same
// encoded bytes into a buffer of the same size, which is what moving them
// costs at the least.
func CorpusCopy(c Corpus) func(*testing.B) {
	return func(b *testing.B) {
		dst := make([]byte, len(c.Encoded))
		for b.Loop() {
			copy(dst, c.Encoded)
		}
	}
}

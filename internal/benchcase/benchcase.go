// Package benchcase holds the benchmark bodies that `go test -bench` and
// `wirespeed bench` share, so both measure the same code paths: the ones
// users call.
package benchcase

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	stdtp "net/textproto"
	"testing"

	"github.com/wirespeed/wirespeed/internal/corpus"
	"github.com/wirespeed/wirespeed/textproto"
)

// B is what a benchmark body needs of its driver: *testing.B under go test,
// or the driver of `wirespeed bench`. Loop reports whether to run another op
// and, like testing.B.Loop, starts the timer at its first call, so setup
// before the loop is not measured; StartTimer and StopTimer time work
// after it.
type B interface {
	Loop() bool
	StartTimer()
	StopTimer()
	Fatal(args ...any)
}

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
//
// bufio.Writer.ReadFrom and bufio.Reader.WriteTo hand a copy over to the
// other side's io.ReaderFrom when their buffer is empty, and io.Discard has
// one: io.Copy through a bufio.Writer or from a bufio.Reader into io.Discard
// would run IONull's code and never touch bufio's buffer. The BufioWrite
// and BufioRead rows are about that buffer, so they write to io.Discard
// without its ReadFrom method.

// SeedNote explains the BufioWrite and BufioRead rows where a table shows
// them.
const SeedNote = "seed: bufio.Writer.ReadFrom and bufio.Reader.WriteTo hand a copy to io.Discard's own ReadFrom, skipping bufio's buffer, " +
	"so the BufioWrite and BufioRead rows write to io.Discard with ReadFrom hidden."

// A SeedOp is one row of the seed table that has a single implementation.
type SeedOp struct {
	Name string
	Fn   func(B)
}

// SeedOps returns the seed rows that compare bufio with itself.
func SeedOps() []SeedOp { return seedOps(io.Discard, seedSource) }

// seedOps returns the seed rows writing to dst (io.Discard, or a test's
// counting writer) and reading from the sources src returns.
func seedOps(dst io.Writer, src func() func() io.Reader) []SeedOp {
	return []SeedOp{
		{"IONull", func(b B) { ioNull(b, dst, src()) }},
		{"BufioWrite", func(b B) { bufioWrite(b, onlyWriter{dst}, src()) }},
		{"BufioRead", func(b B) { bufioRead(b, onlyWriter{dst}, src()) }},
		{"BufioWriteByte", func(b B) { bufioWriteByte(b, dst) }},
		{"BufioReadByte", func(b B) { bufioReadByte(b, src()) }},
	}
}

func seedOp(name string) func(B) {
	for _, op := range SeedOps() {
		if op.Name == name {
			return op.Fn
		}
	}
	panic("benchcase: no seed op " + name)
}

// IONull, BufioWrite, BufioRead, BufioWriteByte and BufioReadByte are the
// SeedOps for go test -bench.
func IONull(b *testing.B)         { seedOp("IONull")(b) }
func BufioWrite(b *testing.B)     { seedOp("BufioWrite")(b) }
func BufioRead(b *testing.B)      { seedOp("BufioRead")(b) }
func BufioWriteByte(b *testing.B) { seedOp("BufioWriteByte")(b) }
func BufioReadByte(b *testing.B)  { seedOp("BufioReadByte")(b) }

// ioNull copies each source into dst with io.Copy.
func ioNull(b B, dst io.Writer, src func() io.Reader) {
	for b.Loop() {
		io.Copy(dst, src())
	}
}

// bufioWrite copies each source through a default-size bufio.Writer.
func bufioWrite(b B, dst io.Writer, src func() io.Reader) {
	bw := bufio.NewWriter(dst)
	for b.Loop() {
		io.Copy(bw, src())
		bw.Flush()
	}
}

// bufioRead copies each source through a default-size bufio.Reader.
func bufioRead(b B, dst io.Writer, src func() io.Reader) {
	br := bufio.NewReader(nil)
	for b.Loop() {
		br.Reset(src())
		io.Copy(dst, br)
	}
}

func bufioWriteByte(b B, dst io.Writer) {
	bw := bufio.NewWriter(dst)
	for b.Loop() {
		for range SeedSize {
			bw.WriteByte('.')
		}
		bw.Flush()
	}
}

func bufioReadByte(b B, src func() io.Reader) {
	br := bufio.NewReader(nil)
	for b.Loop() {
		br.Reset(src())
		for {
			if _, err := br.ReadByte(); err != nil {
				break
			}
		}
	}
}

// onlyWriter hides a writer's other methods, such as io.Discard's ReadFrom.
type onlyWriter struct{ io.Writer }

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
// reused across ops, as a connection's would be. Each op must take all of
// src, with no error.
func DotWriter(b B, impl string, src func() io.Reader) {
	want, _ := io.Copy(io.Discard, src())
	bw := bufio.NewWriter(io.Discard)
	check := func(n int64, err, cerr error) {
		if n != want || err != nil || cerr != nil {
			b.Fatal(impl, " DotWriter: ", n, " bytes of ", want, ", ", err, ", Close: ", cerr)
		}
	}
	switch impl {
	case "stdlib":
		w := stdtp.NewWriter(bw)
		for b.Loop() {
			d := w.DotWriter()
			n, err := io.Copy(d, src())
			check(n, err, d.Close())
		}
	case "wirespeed":
		w := textproto.NewWriter(bw)
		for b.Loop() {
			d := w.DotWriter()
			n, err := io.Copy(d, src())
			check(n, err, d.Close())
		}
	default:
		panic("unknown impl " + impl)
	}
}

// DotReader copies a DotReader over src into io.Discard. The Reader is
// reused across ops, as a connection's would be. Each op must give what
// net/textproto's gives, counted before the measurement: as many bytes,
// and the same error.
func DotReader(b B, impl string, src func() io.Reader) {
	want, wantErr := io.Copy(io.Discard, stdtp.NewReader(bufio.NewReader(src())).DotReader())
	check := func(n int64, err error) {
		if n != want || !errors.Is(err, wantErr) {
			b.Fatal(impl, " DotReader: ", n, " bytes, ", err, "; net/textproto: ", want, ", ", wantErr)
		}
	}
	br := bufio.NewReader(nil)
	switch impl {
	case "stdlib":
		r := stdtp.NewReader(br)
		for b.Loop() {
			br.Reset(src())
			check(io.Copy(io.Discard, r.DotReader()))
		}
	case "wirespeed":
		r := textproto.NewReader(br)
		for b.Loop() {
			br.Reset(src())
			check(io.Copy(io.Discard, r.DotReader()))
		}
	default:
		panic("unknown impl " + impl)
	}
}

// SeedDotWriter and SeedDotReader are the seed benchmark's dot rows.
func SeedDotWriter(impl string) func(B) {
	return func(b B) { DotWriter(b, impl, seedSource()) }
}

func SeedDotReader(impl string) func(B) {
	return func(b B) { DotReader(b, impl, seedSource()) }
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
func CorpusDotReader(c Corpus, impl string) func(B) {
	return func(b B) {
		DotReader(b, impl, reuse(c.Encoded))
	}
}

func CorpusDotWriter(c Corpus, impl string) func(B) {
	return func(b B) {
		DotWriter(b, impl, reuse(c.Plain))
	}
}

// CorpusCopy is the plain-copy baseline for a DotReader: copying the same
// encoded bytes into a buffer of the same size, which is what moving them
// costs at the least.
func CorpusCopy(c Corpus) func(B) {
	return func(b B) {
		dst := make([]byte, len(c.Encoded))
		for b.Loop() {
			copy(dst, c.Encoded)
		}
	}
}

package benchcase

import (
	"fmt"
	"io"
	"slices"
	"testing"
)

// oneOp is a driver that runs a body's loop once.
type oneOp struct{ done bool }

func (b *oneOp) Loop() bool {
	r := !b.done
	b.done = true
	return r
}

func (b *oneOp) StartTimer()       {}
func (b *oneOp) StopTimer()        {}
func (b *oneOp) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

// sink counts what reaches it. Like io.Discard it has ReadFrom, and it
// counts the copies that were handed to it that way.
type sink struct {
	writes   []int
	readFrom int
}

func (s *sink) Write(p []byte) (int, error) {
	s.writes = append(s.writes, len(p))
	return len(p), nil
}

func (s *sink) ReadFrom(r io.Reader) (int64, error) {
	s.readFrom++
	return io.Copy(onlyWriter{s}, r)
}

// source counts the reads of the seed input (which, like the
// io.LimitedReader it wraps, has no WriteTo).
type source struct {
	r     io.Reader
	reads []int
}

func (s *source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.reads = append(s.reads, len(p))
	}
	return n, err
}

// Each seed row runs the code path its name says: IONull hands the copy to
// the destination's ReadFrom, the bufio rows move every byte through
// bufio's default 4096-byte buffer.
func TestSeedOpsPaths(t *testing.T) {
	const bufSize = 4096
	all := func(sizes []int, n int) bool {
		return len(sizes) > 0 && !slices.ContainsFunc(sizes, func(x int) bool { return x != n })
	}
	for _, want := range []struct {
		name             string
		readFrom         int // copies handed to the sink's ReadFrom
		writeSize        int // 0: not checked
		readSize         int // 0: not checked
		writes, srcReads int // expected counts, 0: not checked
	}{
		{name: "IONull", readFrom: 1},
		{name: "BufioWrite", writeSize: bufSize, writes: SeedSize / bufSize},
		{name: "BufioRead", writeSize: bufSize, readSize: bufSize, srcReads: SeedSize / bufSize},
		{name: "BufioWriteByte", writeSize: bufSize, writes: SeedSize / bufSize},
		{name: "BufioReadByte", readSize: bufSize, srcReads: SeedSize / bufSize},
	} {
		dst := &sink{}
		var src *source
		ops := seedOps(dst, func() func() io.Reader {
			next := seedSource()
			return func() io.Reader {
				src = &source{r: next()}
				return src
			}
		})
		i := slices.IndexFunc(ops, func(op SeedOp) bool { return op.Name == want.name })
		if i < 0 {
			t.Fatalf("no seed op %s", want.name)
		}
		ops[i].Fn(&oneOp{})
		if dst.readFrom != want.readFrom {
			t.Errorf("%s: %d copies handed to the destination's ReadFrom, want %d", want.name, dst.readFrom, want.readFrom)
		}
		if want.writeSize != 0 && !all(dst.writes, want.writeSize) {
			t.Errorf("%s: writes of %v bytes, want all %d", want.name, dst.writes[:min(len(dst.writes), 5)], want.writeSize)
		}
		if want.writes != 0 && len(dst.writes) != want.writes {
			t.Errorf("%s: %d writes, want %d", want.name, len(dst.writes), want.writes)
		}
		if want.readSize != 0 && (src == nil || !all(src.reads, want.readSize)) {
			t.Errorf("%s: reads into buffers of %v bytes, want all %d", want.name, src.reads[:min(len(src.reads), 5)], want.readSize)
		}
		if want.srcReads != 0 && len(src.reads) != want.srcReads {
			t.Errorf("%s: %d reads, want %d", want.name, len(src.reads), want.srcReads)
		}
	}
}

// Without hiding ReadFrom, bufio would skip its buffer: the reason the
// rows above wrap the destination.
func TestBufioHandsOverToReadFrom(t *testing.T) {
	dst := &sink{}
	bufioWrite(&oneOp{}, dst, seedSource())
	bufioRead(&oneOp{}, dst, seedSource())
	if dst.readFrom != 2 {
		t.Errorf("bufio.Writer.ReadFrom and bufio.Reader.WriteTo handed %d of 2 copies to ReadFrom", dst.readFrom)
	}
}

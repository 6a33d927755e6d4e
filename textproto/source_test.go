package textproto

import (
	"errors"
	"io"
	"testing/iotest"
)

// errInjected is the error the test sources fail with.
var errInjected = errors.New("injected read error")

// A feed describes how the bytes of an input reach a bufio.Reader: how many
// bytes each Read returns at most, and how and when reading fails. Both
// implementations under test get a fresh source from the same feed, so
// they see identical Read results as long as they make identical calls.
type feed struct {
	name  string
	chunk int   // bytes per Read at most; 0: as many as fit
	final error // the error at the end (io.EOF if nil)
	// withData delivers the final error with the last bytes instead of in
	// a Read of its own.
	withData bool
	// onceAt, if positive, makes one Read fail with errInjected (no
	// data) once onceAt bytes have been delivered; reading then goes on.
	onceAt int
	// zeroReads makes every other Read return (0, nil).
	zeroReads bool
	// stall makes Reads at the end return (0, nil) forever, so bufio
	// reports io.ErrNoProgress.
	stall bool
	// wrap, if set, wraps the source (the iotest readers).
	wrap func(io.Reader) io.Reader
	// pieces, if set, cuts the input at fixed offsets, whatever the Reads
	// asked for: the sizes of its pieces are pieces[i]%16+1, in turn,
	// over and over.
	pieces []byte
}

// feeds are the read patterns every differential case runs with.
var feeds = []feed{
	{name: "whole"},
	{name: "chunk1", chunk: 1},
	{name: "chunk2", chunk: 2},
	{name: "chunk3", chunk: 3},
	{name: "chunk7", chunk: 7},
	{name: "onebyte", wrap: iotest.OneByteReader},
	{name: "half", wrap: iotest.HalfReader},
	{name: "dataerr", chunk: 5, wrap: iotest.DataErrReader},
	{name: "timeout", chunk: 4, wrap: iotest.TimeoutReader},
	{name: "err", chunk: 3, final: errInjected},
	{name: "errwithdata", chunk: 5, final: errInjected, withData: true},
	{name: "eofwithdata", chunk: 6, withData: true},
	{name: "onceerr", chunk: 5, onceAt: -1}, // -1: fails half way
	{name: "zeroreads", chunk: 4, zeroReads: true},
	{name: "stall", chunk: 8, stall: true},
}

// splits returns how many lines a feed's read errors can split in two:
// one for each error it recovers from (bufio.Reader.ReadLine returns the
// part of a line before an error as a line of its own).
func (f feed) splits() int {
	if f.name == "timeout" || f.onceAt != 0 {
		return 1
	}
	return 0
}

// source is the io.Reader a feed makes for one input.
type source struct {
	f         feed
	data      []byte
	delivered int
	onceAt    int
	fired     bool
	calls     int
}

// open returns a reader of data as f describes, which counts the bytes it
// hands to its caller.
func (f feed) open(data []byte) *counter {
	s := &source{f: f, data: data, onceAt: f.onceAt}
	if s.onceAt < 0 {
		s.onceAt = len(data) / 2
	}
	if f.wrap != nil {
		return &counter{r: f.wrap(s)}
	}
	return &counter{r: s}
}

// A counter counts the bytes read through it and logs every Read's result.
type counter struct {
	r   io.Reader
	n   int
	log []readRec
}

type readRec struct {
	n   int
	err error
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	c.log = append(c.log, readRec{n, err})
	return n, err
}

// A replay reader returns data in the recorded Read results, then fails
// with end forever.
type replay struct {
	data []byte
	recs []readRec
	end  error
}

func (r *replay) Read(p []byte) (int, error) {
	if len(r.recs) == 0 {
		return 0, r.end
	}
	rec := r.recs[0]
	r.recs = r.recs[1:]
	if rec.n > len(p) {
		panic("replay: Read with a smaller buffer than recorded")
	}
	n := copy(p, r.data[:rec.n])
	r.data = r.data[n:]
	return n, rec.err
}

func (s *source) Read(p []byte) (int, error) {
	s.calls++
	if s.f.zeroReads && s.calls%2 == 0 {
		return 0, nil
	}
	if s.onceAt > 0 && !s.fired && s.delivered >= s.onceAt {
		s.fired = true
		return 0, errInjected
	}
	rest := s.data[s.delivered:]
	if len(rest) == 0 {
		if s.f.stall {
			return 0, nil
		}
		return 0, s.finalErr()
	}
	n := len(p)
	if s.f.chunk > 0 && n > s.f.chunk {
		n = s.f.chunk
	}
	if len(s.f.pieces) > 0 {
		// The end of the piece that holds offset delivered.
		end := 0
		for i := 0; end <= s.delivered; i++ {
			end += int(s.f.pieces[i%len(s.f.pieces)])%16 + 1
		}
		n = min(n, end-s.delivered)
	}
	if s.onceAt > 0 && !s.fired && s.delivered < s.onceAt && s.delivered+n > s.onceAt {
		n = s.onceAt - s.delivered
	}
	n = copy(p[:n], rest)
	s.delivered += n
	if s.delivered == len(s.data) && s.f.withData && !s.f.stall {
		return n, s.finalErr()
	}
	return n, nil
}

func (s *source) finalErr() error {
	if s.f.final != nil {
		return s.f.final
	}
	return io.EOF
}

package textproto

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	stdtp "net/textproto"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// staleFuzzOpts are the blocks FuzzStaleDotReaders makes: the first takes
// the Reader's limits (none, or those of staleFuzzLimits), the last sets
// none whatever the Reader's.
var staleFuzzOpts = []DotOptions{
	{},
	{Mode: dot.Strict},
	{Mode: dot.Raw},
	{Mode: dot.Strict, Bare: dot.BareKeep},
	{Mode: dot.Raw, Bare: dot.BareNormalize},
	{MaxBytes: 4},
	{MaxLineBytes: 5},
	{MaxBytes: 4, MaxDiscardBytes: 6},
	{Mode: dot.Strict, MaxDiscardBytes: 3},
	{MaxBytes: -1, MaxLineBytes: -1, MaxDiscardBytes: -1},
}

var staleFuzzLimits = []Limits{
	{},
	{MaxLineBytes: 8},
	{MaxDotBytes: 6, MaxDiscardBytes: 5},
	{MaxLineBytes: 3, MaxDiscardBytes: 4},
}

// staleFuzzSeq turns ops into a sequence of calls: each byte's low three
// bits choose the call, the rest the handle it is made on (or the options
// of a new block, as the handle field).
func staleFuzzSeq(ops []byte) []staleStep {
	var seq []staleStep
	handles := 0
	for _, b := range ops[:min(len(ops), 12)] {
		kind, arg := b%8, int(b/8)
		if kind >= 1 && kind <= 3 && handles == 0 || handles < 4 && kind == 0 {
			seq = append(seq, staleStep{kind: "new", handle: -1, n: arg % len(staleFuzzOpts)})
			handles++
			continue
		}
		switch kind {
		case 0, 1:
			seq = append(seq, staleStep{kind: "read", handle: arg % handles, n: 1})
		case 2:
			seq = append(seq, staleStep{kind: "read", handle: arg % handles, n: 64})
		case 3:
			seq = append(seq, staleStep{kind: "copy", handle: arg % handles})
		default:
			seq = append(seq, staleStep{kind: [...]string{"line", "dotbytes", "dotlines", "header"}[kind-4], handle: -1})
		}
	}
	return seq
}

// FuzzStaleDotReaders runs sequences of calls on a Reader and its dot
// readers, reading from old (stale) readers after the Reader has moved on,
// with a transient read error at offset at (255: none).
//
// Without limits, with Compat readers, every result and how far R was
// consumed must be net/textproto's. Otherwise, as DotReaderWith documents,
// a reader of any other block, used once the Reader has moved on (a newer
// block, or another Reader call), reads nothing from R: it has either
// ended (io.EOF, or its block's data error) or fails with an error
// matching io.ErrUnexpectedEOF, for good; and once a call has failed
// with ErrNotInStep, every later call fails with it, reading nothing,
// unless it is on a reader whose block had ended.
//
//	go test -fuzz FuzzStaleDotReaders -parallel 1 -fuzztime 3m ./textproto
func FuzzStaleDotReaders(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	for _, in := range []string{
		"one\r\n..1\r\n.\r\ntwo\r\n.\r\nthree\r\n.\r\nline\r\n",
		"a\n.\nb\r\n.\r",
		"x\r\n.\r\nunterminated",
		"toolong line\r\n.\r\nb\n.\nc\r\n.\r\n",
		"abcdefghijklmnopqrstijk\r\nCMD\r\nx\r\n.\r\nEND\r\n",
	} {
		for _, ops := range []string{"\x00\x02\x00\x0a\x11", "\x00\x03\x04\x0b\x01", "\x08\x01\x05\x01\x03", "\x38\x02\x40\x0a\x13\x06\x01",
			"\x28\x03\x00\x0a\x04\x01\x09", "\x48\x01\x04\x00\x01\x09\x07\x11"} {
			for _, ctl := range []byte{0, 1, 2, 3, 4, 7} {
				for _, at := range []byte{255, 0, 4, 9} {
					f.Add([]byte(in), []byte(ops), ctl, at)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data, ops []byte, ctl, at byte) {
		if len(data) > 512 {
			return
		}
		seq := staleFuzzSeq(ops)
		chunk := []int{1, 3, 4096}[int(ctl/4)%3]
		errAt := -1
		if at != 255 {
			errAt = int(at) % (len(data) + 1)
		}
		// Compat without limits against net/textproto. The buffer holds
		// every line, so the deviation (a line cut off at a full buffer)
		// does not come up.
		open := func(size int) (*bufio.Reader, *hiccupReader) {
			src := &hiccupReader{data: data, n: chunk, at: errAt}
			return bufio.NewReaderSize(src, size), src
		}
		sb, ssrc := open(4096)
		ob, osrc := open(4096)
		want := runStaleReader(stdtp.NewReader(sb), sb, ssrc, seq)
		got := runStaleReader(NewReader(ob), ob, osrc, seq)
		if got != want {
			t.Fatalf("chunk %d, error at %d, calls %v:\nnet/textproto:\n%swirespeed:\n%s", chunk, errAt, seq, want, got)
		}

		// Every mode and limit, on the rules alone.
		size := []int{16, 4096}[int(ctl/12)%2]
		lim := staleFuzzLimits[int(ctl)%len(staleFuzzLimits)]
		br, src := open(size)
		if err := checkStaleRules(br, src, lim, seq); err != nil {
			t.Fatalf("bufio %d, chunk %d, error at %d, limits %+v, calls %v:\n%v", size, chunk, errAt, lim, seq, err)
		}
	})
}

// checkStaleRules runs seq on a Reader of br with limits lim, the blocks
// made with staleFuzzOpts, and checks the rules of stale dot readers
// (see FuzzStaleDotReaders).
func checkStaleRules(br *bufio.Reader, src *hiccupReader, lim Limits, seq []staleStep) error {
	r := NewReader(br)
	r.SetLimits(lim)
	type handle struct {
		d    *DotReader
		made int  // the step that made it
		free bool // Compat without limits: reads on when stale, as net/textproto's
		raw  bool // Raw: may hold back one byte of a "\r\n" it has read
		// unfinished: its last error was not its end (a read error),
		// so the Reader does not drain it
		unfinished bool
		ended      bool // returned io.EOF or a data error of its block
		afterNS    bool // made after ErrNotInStep
	}
	var hs []*handle
	last := -1       // the last step that moved r on
	var lost error   // ErrNotInStep, once a call has failed with it
	var log []string // the results so far
	pos := func() int { return src.pos - br.Buffered() }
	for i, s := range seq {
		before := pos()
		var n int64
		var err error
		switch s.kind {
		case "new":
			o := staleFuzzOpts[s.n]
			free := o.Mode == dot.Compat && (o.MaxBytes < 0 || o.MaxBytes == 0 && lim.MaxDotBytes == 0) &&
				(o.MaxLineBytes < 0 || o.MaxLineBytes == 0 && lim.MaxLineBytes == 0) &&
				(o.MaxDiscardBytes < 0 || o.MaxDiscardBytes == 0 && lim.MaxDiscardBytes == 0)
			hs = append(hs, &handle{d: r.DotReaderWith(o), made: i, free: free, raw: o.Mode == dot.Raw, afterNS: lost != nil})
			last = i
		case "read":
			var k int
			k, err = hs[s.handle].d.Read(make([]byte, s.n))
			n = int64(k)
		case "copy":
			n, err = hs[s.handle].d.WriteTo(io.Discard)
			if err == nil {
				err = io.EOF // the block has ended
			}
		case "line":
			_, err = r.ReadLine()
		case "dotbytes":
			_, err = r.ReadDotBytes()
		case "dotlines":
			_, err = r.ReadDotLines()
		case "header":
			_, err = r.ReadMIMEHeader()
		}
		moved := pos() - before
		log = append(log, fmt.Sprintf("%v: %d %v (consumed %d)", s, n, err, moved))
		fail := func(msg string) error {
			return fmt.Errorf("step %d %v: %s\n%s", i, s, msg, strings.Join(log, "\n"))
		}
		ended := err == io.EOF || isDataErr(err)
		if s.handle < 0 {
			if s.kind != "new" {
				last = i
			}
			if lost != nil && s.kind != "new" && (!errors.Is(err, ErrNotInStep) || moved != 0) {
				return fail("a Reader call after ErrNotInStep did not fail with it at once")
			}
		} else {
			h := hs[s.handle]
			stale := last > h.made
			switch {
			case lost != nil:
				// Only a reader whose block may have ended (drained by
				// the Reader, unseen here) may report its end instead.
				if moved != 0 || n > 1 || n == 1 && !h.raw {
					return fail("a reader read after ErrNotInStep")
				}
				if !errors.Is(err, ErrNotInStep) && (h.afterNS || h.unfinished || !ended) {
					return fail("a reader that had not ended did not fail with ErrNotInStep")
				}
			case stale && !h.free:
				if moved != 0 {
					return fail("a stale reader consumed R")
				}
				if n > 1 || n == 1 && !h.raw {
					return fail("a stale reader returned data")
				}
				switch {
				case errors.Is(err, io.ErrUnexpectedEOF):
				case errors.Is(err, ErrNotInStep):
					// A block the Reader drained (at a "new") gave up,
					// unseen here till now.
				case h.unfinished:
					return fail("a stale reader cut short by a read error did not fail with io.ErrUnexpectedEOF")
				case !ended && !(n == 1 && err == nil):
					return fail("a stale reader failed with neither its end nor io.ErrUnexpectedEOF")
				}
			}
			switch {
			case ended:
				h.ended, h.unfinished = true, false
			case err != nil:
				// A read error, or giving up: nothing drains the
				// block; it ends only if it reads on itself.
				h.unfinished = true
			default:
				// It read on after a read error: if that error came
				// as the block started, the block is open again, and
				// the Reader may drain it.
				h.unfinished = false
			}
		}
		if errors.Is(err, ErrNotInStep) && lost == nil {
			lost = err
		}
	}
	return nil
}

// isDataErr reports whether err is a problem with a block's data, which
// ends the block.
func isDataErr(err error) bool {
	var se *dot.SyntaxError
	return err != nil && !errors.Is(err, ErrNotInStep) && !errors.Is(err, io.ErrUnexpectedEOF) &&
		(errors.Is(err, dot.ErrTooLarge) || errors.Is(err, dot.ErrLineTooLong) || errors.As(err, &se))
}

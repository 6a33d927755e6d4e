package textproto

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// A dot reader is stale once its Reader has moved on: a newer block has
// begun, or another Reader method has run. net/textproto's reader, cut by
// a read error and left stale, reads on from the stream, whatever comes
// next (TestStaleDotReaderMatchesStdlib checks that Compat does the same).
// A Strict, Raw or limited block must not: it would take another block's
// bytes, or break its limits on them and give up behind its Reader's back.

// staleModes are the blocks that must read nothing once stale.
var staleModes = []struct {
	name string
	opt  DotOptions
}{
	{"Strict", DotOptions{Mode: dot.Strict}},
	{"Raw", DotOptions{Mode: dot.Raw}},
	{"Strict BareKeep", DotOptions{Mode: dot.Strict, Bare: dot.BareKeep}},
	{"Compat MaxBytes", DotOptions{MaxBytes: 1 << 10}},
	{"Compat MaxLineBytes", DotOptions{MaxLineBytes: 100}},
	{"Compat MaxDiscardBytes", DotOptions{MaxDiscardBytes: 1 << 10}},
}

// staleRead reads from a stale d with Read and then WriteTo, and checks
// that both fail without reading R.
func staleRead(t *testing.T, what string, d *DotReader, br *bufio.Reader, src *hiccupReader) {
	t.Helper()
	pos := src.pos - br.Buffered()
	b := make([]byte, 64)
	n, err := d.Read(b)
	if n != 0 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%s: stale Read: %q, %v; want an error matching io.ErrUnexpectedEOF", what, b[:n], err)
	}
	var w bytes.Buffer
	m, err := d.WriteTo(&w)
	if m != 0 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%s: stale WriteTo: %q, %v; want an error matching io.ErrUnexpectedEOF", what, w.Bytes(), err)
	}
	if now := src.pos - br.Buffered(); now != pos {
		t.Errorf("%s: the stale reader consumed R from %d to %d", what, pos, now)
	}
}

// TestStaleDotReaderModesReadNothing: a block cut by a read error, left
// stale by a newer block, by ReadLine or by a BDAT chunk, reads nothing
// more, and the Reader goes on in step.
func TestStaleDotReaderModesReadNothing(t *testing.T) {
	const in = "one\r\nrest\r\n.\r\nCMD\r\ntwo\r\n.\r\n"
	for _, m := range staleModes {
		for _, move := range []string{"new", "line", "chunk"} {
			what := m.name + ", then " + move
			src := &hiccupReader{data: []byte(in), n: 4096, at: 5} // fails after "one\r\n"
			br := bufio.NewReaderSize(src, 16)
			r := NewReader(br)
			d1 := r.DotReaderWith(m.opt)
			if _, err := io.Copy(io.Discard, d1); err != errHiccup {
				t.Fatalf("%s: first block: %v, want the read error", what, err)
			}
			var next func() (string, error) // what r reads next, in step
			switch move {
			case "new":
				d2 := r.DotReaderWith(m.opt)
				next = func() (string, error) { b, err := io.ReadAll(d2); return string(b), err }
			case "line":
				if l, err := r.ReadLine(); l != "rest" || err != nil {
					t.Fatalf("%s: ReadLine: %q, %v", what, l, err)
				}
				next = r.ReadLine
			case "chunk":
				k := r.Chunks(ChunkOptions{}).Next(6, true)
				if b, err := io.ReadAll(k); string(b) != "rest\r\n" || err != nil {
					t.Fatalf("%s: chunk: %q, %v", what, b, err)
				}
				next = r.ReadLine
			}
			staleRead(t, what, d1, br, src)
			want := map[string]string{"new": "rest\n", "line": ".", "chunk": "."}[move]
			if m.opt.Mode == dot.Raw && move == "new" {
				want = "rest\r\n"
			}
			if got, err := next(); got != want || err != nil {
				t.Errorf("%s: the Reader read on: %q, %v; want %q", what, got, err, want)
			}
		}
	}
}

// TestStaleDotReaderGiveUp: a limited block cut by a read error while it
// discards, and left stale by a newer block, used to read on through the
// newer block and give up (ErrNotInStep) without failing its Reader, which
// then read the rest of the stream as if in step. Now it reads nothing, and
// the newer block is read whole.
func TestStaleDotReaderGiveUp(t *testing.T) {
	opt := DotOptions{MaxBytes: 4, MaxDiscardBytes: 12}
	const in = "toolong\r\nsecond block\r\n.\r\nCMD\r\n"
	src := &hiccupReader{data: []byte(in), n: 4096, at: 9} // fails after "toolong\r\n"
	br := bufio.NewReaderSize(src, 16)
	r := NewReader(br)
	d1 := r.DotReaderWith(opt)
	if _, err := d1.WriteTo(io.Discard); !errors.Is(err, errHiccup) || !errors.Is(err, dot.ErrTooLarge) {
		t.Fatalf("first block: %v, want the read error and dot.ErrTooLarge", err)
	}
	d2 := r.DotReaderWith(DotOptions{})
	pos := src.pos - br.Buffered()
	_, err := d1.Read(make([]byte, 64))
	if errors.Is(err, ErrNotInStep) {
		if _, rerr := r.ReadLine(); rerr != err {
			t.Errorf("a stale reader gave up (%v), but its Reader read on: %v", err, rerr)
		}
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("stale Read: %v, want an error matching io.ErrUnexpectedEOF", err)
	}
	if now := src.pos - br.Buffered(); now != pos {
		t.Errorf("the stale reader consumed R from %d to %d", pos, now)
	}
	if b, err := io.ReadAll(d2); string(b) != "second block\n" || err != nil {
		t.Errorf("newer block: %q, %v", b, err)
	}
	if l, err := r.ReadLine(); l != "CMD" || err != nil {
		t.Errorf("ReadLine: %q, %v", l, err)
	}
}

// TestStaleDotReaderUnstarted: a block whose start failed (on a read error
// while discarding what a limit error left) and that the Reader then moved
// past used to start again on its next Read, at whatever the stream then
// held, and decode the next block as its own.
func TestStaleDotReaderUnstarted(t *testing.T) {
	const in = "abcdefghijklmnopqrst" + "ijk\r\nCMD\r\nx\r\n.\r\nEND\r\n"
	src := &hiccupReader{data: []byte(in), n: 1, at: 20} // past the line limit error

	br := bufio.NewReaderSize(src, 16)
	r := NewReader(br)
	r.SetLimits(Limits{MaxLineBytes: 4})
	if _, err := r.ReadLine(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("ReadLine: %v, want ErrLineTooLong", err)
	}
	d1 := r.DotReaderMode(dot.Strict).(*DotReader)
	if _, err := d1.Read(make([]byte, 8)); err != errHiccup {
		t.Fatalf("block: %v, want the read error", err)
	}
	// The read error ended the line being discarded: "ijk" is a line.
	for _, want := range []string{"ijk", "CMD"} {
		if l, err := r.ReadLine(); l != want || err != nil {
			t.Fatalf("ReadLine: %q, %v; want %q", l, err, want)
		}
	}
	staleRead(t, "unstarted block", d1, br, src)
	if l, err := r.ReadLine(); l != "x" || err != nil {
		t.Errorf("ReadLine: %q, %v", l, err)
	}
}

// TestStaleDotReaderAfterNotInStep: once the Reader is out of step, a
// block made before it gave up and left unstarted (its start failed with
// ErrNotInStep) fails with that error too, reading nothing; it used to
// read R on its next Read, as if in step.
func TestStaleDotReaderAfterNotInStep(t *testing.T) {
	for _, opt := range []DotOptions{{}, {Mode: dot.Strict}} {
		r, src, lost := outOfStep(t)
		before := src.n
		d1 := r.DotReaderWith(opt)
		d2 := r.DotReaderWith(opt) // its closeDot tries d1's start, which fails
		for i, d := range []*DotReader{d1, d2, d1} {
			if n, err := d.Read(make([]byte, 8)); n != 0 || err != lost {
				t.Errorf("mode %v, reader %d: %d, %v; want %v", opt.Mode, i, n, err, lost)
			}
			if n, err := d.WriteTo(io.Discard); n != 0 || err != lost {
				t.Errorf("mode %v, reader %d: WriteTo %d, %v; want %v", opt.Mode, i, n, err, lost)
			}
		}
		if src.n != before {
			t.Errorf("mode %v: %d bytes of the stream read after ErrNotInStep", opt.Mode, src.n-before)
		}
	}
}

// TestStaleDotReaderModesSequences runs every short sequence of calls on
// dot readers and their Reader, with read errors at several offsets, and
// checks that a Strict, Raw or limited reader never consumes R once a
// newer block or another Reader call has come after it was made.
func TestStaleDotReaderModesSequences(t *testing.T) {
	inputs := []string{
		"one\r\n..1\r\n.\r\ntwo\r\n.\r\nthree\r\n.\r\nline\r\n",
		"toolong line\r\n.\r\nb\n.\nc\r\n.\r\n",
	}
	perHandle := []staleStep{{kind: "read", n: 1}, {kind: "read", n: 64}, {kind: "copy"}}
	global := []staleStep{{kind: "line", handle: -1}, {kind: "dotbytes", handle: -1}}
	maxLen := 5
	if testing.Short() || raceEnabled {
		maxLen = 4
	}
	opts := append([]DotOptions{{MaxBytes: 4, MaxDiscardBytes: 6}}, func() (o []DotOptions) {
		for _, m := range staleModes {
			o = append(o, m.opt)
		}
		return o
	}()...)
	for _, in := range inputs {
		for _, opt := range opts {
			for _, at := range []int{-1, 0, 4, 9, 16} {
				staleSeqs(maxLen, 3, perHandle, global, func(seq []staleStep) {
					src := &hiccupReader{data: []byte(in), n: 3, at: at}
					br := bufio.NewReaderSize(src, 16)
					r := NewReader(br)
					var handles []*DotReader
					var made []int // the step each handle was made at
					last := -1     // the last step that moved r on
					for i, s := range seq {
						pos := src.pos - br.Buffered()
						switch s.kind {
						case "new":
							handles = append(handles, r.DotReaderWith(opt))
							made = append(made, i)
							last = i
						case "read":
							handles[s.handle].Read(make([]byte, s.n))
						case "copy":
							handles[s.handle].WriteTo(io.Discard)
						case "line":
							r.ReadLine()
							last = i
						case "dotbytes":
							r.ReadDotBytes()
							last = i
						}
						if s.handle >= 0 && last > made[s.handle] {
							if now := src.pos - br.Buffered(); now != pos {
								t.Fatalf("input %q, options %+v, error at %d, calls %v: stale reader %d consumed R from %d to %d",
									in, opt, at, seq[:i+1], s.handle, pos, now)
							}
						}
					}
				})
			}
		}
	}
}

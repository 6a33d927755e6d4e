package textproto

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// TestNotInStepReadsNothing: once a dot reader has given up discarding
// (ErrNotInStep), every Reader method fails at once with that error and
// reads nothing more from the underlying stream, not even a peek.
func TestNotInStepReadsNothing(t *testing.T) {
	methods := []struct {
		name string
		call func(r *Reader) error
	}{
		{"ReadLine", func(r *Reader) error { _, err := r.ReadLine(); return err }},
		{"ReadLineBytes", func(r *Reader) error { _, err := r.ReadLineBytes(); return err }},
		{"ReadContinuedLine", func(r *Reader) error { _, err := r.ReadContinuedLine(); return err }},
		{"ReadContinuedLineBytes", func(r *Reader) error { _, err := r.ReadContinuedLineBytes(); return err }},
		{"ReadCodeLine", func(r *Reader) error { _, _, err := r.ReadCodeLine(250); return err }},
		{"ReadResponse", func(r *Reader) error { _, _, err := r.ReadResponse(250); return err }},
		{"ReadDotLines", func(r *Reader) error { _, err := r.ReadDotLines(); return err }},
		{"ReadDotBytes", func(r *Reader) error { _, err := r.ReadDotBytes(); return err }},
		{"DotReader", func(r *Reader) error { _, err := r.DotReader().Read(make([]byte, 8)); return err }},
		{"DotReaderWith WriteTo", func(r *Reader) error {
			_, err := r.DotReaderWith(DotOptions{Mode: dot.Strict}).WriteTo(io.Discard)
			return err
		}},
		{"Chunks", func(r *Reader) error {
			_, err := r.Chunks(ChunkOptions{}).Next(4, true).Read(make([]byte, 8))
			return err
		}},
		{"ReadMIMEHeader", func(r *Reader) error { _, err := r.ReadMIMEHeader(); return err }},
	}
	for _, m := range methods {
		r, src, lost := outOfStep(t)
		before := src.n
		for i := range 2 {
			if err := m.call(r); err != lost {
				t.Errorf("%s (call %d) after ErrNotInStep: %v, want %v", m.name, i+1, err, lost)
			}
		}
		if src.n != before {
			t.Errorf("%s after ErrNotInStep read %d bytes of the stream", m.name, src.n-before)
		}
	}
}

// outOfStep returns a Reader whose dot reader has given up (lost, an
// error matching ErrNotInStep) on src, an endless stream of lines, with
// the Reader's buffer emptied: any peek or read now reads src.
func outOfStep(t *testing.T) (r *Reader, src *lineStream, lost error) {
	t.Helper()
	src = &lineStream{pattern: "x\r\n", size: 1 << 20}
	br := bufio.NewReaderSize(src, 16)
	r = NewReader(br)
	_, lost = r.DotReaderWith(DotOptions{MaxBytes: 4, MaxDiscardBytes: 8}).WriteTo(io.Discard)
	if !errors.Is(lost, ErrNotInStep) {
		t.Fatalf("giving up: %v", lost)
	}
	br.Discard(br.Buffered())
	return r, src, lost
}

// TestNotInStepOrder: the error of a dot reader that gave up discarding
// matches each problem with the block's data and then ErrNotInStep, in
// that order, its text too: the order of the problems and the read error
// that cuts message data short, ErrNotInStep in the read error's place.
// ErrNotInStep used to come first, before the data error.
func TestNotInStepOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  DotOptions
		head string
		want []error
		text string
	}{
		{"too large", DotOptions{MaxBytes: 4, MaxDiscardBytes: 8}, "",
			[]error{dot.ErrTooLarge, ErrNotInStep},
			"dot: data too large; textproto: gave up discarding: the session is no longer in step (discarded 8 bytes)"},
		{"too large, line too long", DotOptions{MaxBytes: 4, MaxLineBytes: 5, MaxDiscardBytes: 64}, "abcdefgh\r\n",
			[]error{dot.ErrTooLarge, dot.ErrLineTooLong, ErrNotInStep},
			"dot: data too large; dot: line too long; textproto: gave up discarding: the session is no longer in step (discarded 64 bytes)"},
		{"bare LF", DotOptions{Mode: dot.Strict, MaxDiscardBytes: 8}, "ab\ncd\r\n",
			[]error{dot.ErrBareLF, ErrNotInStep},
			"dot: bare LF at offset 2; textproto: gave up discarding: the session is no longer in step (discarded 8 bytes)"},
	} {
		for _, rs := range []int{0, 1, 7} {
			src := &lineStream{pattern: tc.head + strings.Repeat("x\r\n", 1000), size: 1 << 20}
			r := NewReader(bufio.NewReaderSize(src, 16))
			err := readBlock(r.DotReaderWith(tc.opt), rs)
			m, ok := err.(interface{ Unwrap() []error })
			if !ok {
				t.Fatalf("%s, reads of %d: %v does not unwrap to several errors", tc.name, rs, err)
			}
			got := m.Unwrap()
			if len(got) != len(tc.want) {
				t.Fatalf("%s, reads of %d: %v unwraps to %q, want errors matching %q", tc.name, rs, err, got, tc.want)
			}
			for i, w := range tc.want {
				if !errors.Is(got[i], w) || !errors.Is(err, w) {
					t.Errorf("%s, reads of %d: %v: error %d is %v, want one matching %v", tc.name, rs, err, i, got[i], w)
				}
			}
			if err.Error() != tc.text {
				t.Errorf("%s, reads of %d: text %q, want %q", tc.name, rs, err.Error(), tc.text)
			}
			if _, err2 := r.ReadLine(); err2 != err {
				t.Errorf("%s, reads of %d: ReadLine after giving up: %v, want %v", tc.name, rs, err2, err)
			}
		}
	}
}

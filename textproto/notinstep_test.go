package textproto

import (
	"bufio"
	"errors"
	"io"
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

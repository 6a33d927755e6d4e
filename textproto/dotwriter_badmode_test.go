package textproto

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// TestDotWriterUnknownModeNotSticky: a dot writer given a mode that is none
// of dot's constants fails its Write and Close with an error matching
// dot.ErrMode and writes nothing, as dot's Encoder does, and the Writer
// goes on: nothing unfinished is on the wire, so its later calls write as
// usual, as the next Reader call reads on after a dot reader of an unknown
// mode. (It used to make the error sticky, as if a Strict or Raw writer had
// failed mid-message, and every later PrintfLine failed with it.)
func TestDotWriterUnknownModeNotSticky(t *testing.T) {
	for _, how := range []string{"Write", "Close", "ReadFrom"} {
		var out bytes.Buffer
		w := NewWriter(bufio.NewWriter(&out))
		d := w.DotWriterMode(dot.Raw + 1)
		var err error
		switch how {
		case "Write":
			_, err = d.Write([]byte("abc\r\n"))
		case "Close":
			err = d.Close()
		case "ReadFrom":
			_, err = d.(io.ReaderFrom).ReadFrom(strings.NewReader("abc\r\n"))
		}
		if !errors.Is(err, dot.ErrMode) {
			t.Errorf("%s: %v, want dot.ErrMode", how, err)
		}
		if err := w.PrintfLine("QUIT"); err != nil {
			t.Errorf("%s, then PrintfLine: %v", how, err)
		}
		if out.String() != "QUIT\r\n" {
			t.Errorf("%s: wrote %q, want only the command", how, out.String())
		}
	}
}

// TestDotWriterUnknownModeAfterClose: such a writer fails with dot.ErrMode
// after Close too (it is neither Strict nor Raw, whose writers refuse with
// dot.ErrClosed once closed).
func TestDotWriterUnknownModeAfterClose(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(bufio.NewWriter(&out))
	d := w.DotWriterMode(dot.Raw + 1)
	d.Close()
	if _, err := d.Write([]byte("x")); !errors.Is(err, dot.ErrMode) {
		t.Errorf("Write after Close: %v, want dot.ErrMode", err)
	}
	if err := d.Close(); !errors.Is(err, dot.ErrMode) {
		t.Errorf("Close again: %v, want dot.ErrMode", err)
	}
	if out.Len() != 0 {
		t.Errorf("wrote %q", out.String())
	}
}

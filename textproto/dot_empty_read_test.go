package textproto

import (
	"bufio"
	"errors"
	"io"
	stdtp "net/textproto"
	"strings"
	"testing"
)

// countingReader is a chunkReader that counts the Reads made on it.
type countingReader struct {
	chunkReader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.chunkReader.Read(p)
}

// emptyReads makes a Read with a nil and with an empty buffer on d, and
// fails t unless both return 0 and nil without reading src or consuming
// any of br.
func emptyReads(t *testing.T, name string, d io.Reader, src *countingReader, br *bufio.Reader) {
	t.Helper()
	reads, buffered := src.reads, br.Buffered()
	for _, b := range [][]byte{nil, {}} {
		if n, err := d.Read(b); n != 0 || err != nil {
			t.Errorf("%s: Read(%#v) = %d, %v; want 0, <nil> (net/textproto's)", name, b, n, err)
		}
	}
	if src.reads != reads || br.Buffered() != buffered {
		t.Errorf("%s: an empty Read read the input: %d source Reads, %d buffered; before %d, %d",
			name, src.reads, br.Buffered(), reads, buffered)
	}
}

// TestDotReaderEmptyReadOwedError: after the documented deviation (a
// line that filled the buffer, then io.EOF), ours owes the error; an empty
// Read on a new block returns 0 and nil as net/textproto's does, and the
// owed error comes with the first Read that has room.
func TestDotReaderEmptyReadOwedError(t *testing.T) {
	in := strings.Repeat("x", 16)
	open := func() (*countingReader, *bufio.Reader) {
		src := &countingReader{chunkReader: chunkReader{data: []byte(in), n: 16}}
		return src, bufio.NewReaderSize(src, 16)
	}
	ssrc, sbr := open()
	std := stdtp.NewReader(sbr)
	osrc, obr := open()
	ours := NewReader(obr)

	if _, err := std.ReadLine(); err != io.EOF {
		t.Fatalf("net/textproto ReadLine: %v, want io.EOF (the line dropped)", err)
	}
	if line, err := ours.ReadLine(); line != in || err != nil {
		t.Fatalf("ReadLine = %q, %v; want the line and the error owed", line, err)
	}
	emptyReads(t, "net/textproto", std.DotReader(), ssrc, sbr)
	d := ours.DotReader()
	emptyReads(t, "ours", d, osrc, obr)
	if n, err := d.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Errorf("Read after the empty ones = %d, %v; want 0 and the owed io.EOF", n, err)
	}
}

// TestDotReaderEmptyReadAfterLimit: after a limit error, an empty Read on
// a new block does not discard what the error left (which could block on
// a quiet peer); it returns 0 and nil as net/textproto's does, and the
// Read with room then discards and decodes the block as net/textproto's
// reader does after reading the whole line.
func TestDotReaderEmptyReadAfterLimit(t *testing.T) {
	in := strings.Repeat("x", 40) + "\r\nhello\r\n..dot\r\n.\r\nnext\r\n"
	open := func() (*countingReader, *bufio.Reader) {
		src := &countingReader{chunkReader: chunkReader{data: []byte(in), n: 5}}
		return src, bufio.NewReaderSize(src, 16)
	}
	ssrc, sbr := open()
	std := stdtp.NewReader(sbr)
	osrc, obr := open()
	ours := NewReader(obr)
	ours.SetLimits(Limits{MaxLineBytes: 8})

	if _, err := std.ReadLine(); err != nil {
		t.Fatal(err)
	}
	if _, err := ours.ReadLine(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("ReadLine: %v, want ErrLineTooLong", err)
	}
	sd, od := std.DotReader(), ours.DotReader()
	emptyReads(t, "net/textproto", sd, ssrc, sbr)
	emptyReads(t, "ours", od, osrc, obr)

	want, werr := io.ReadAll(onlyReader{sd})
	got, gerr := io.ReadAll(onlyReader{od})
	if string(got) != string(want) || gerr != werr {
		t.Errorf("block = %q, %v; net/textproto's %q, %v", got, gerr, want, werr)
	}
	// Ended, an empty Read returns io.EOF in both.
	if n, err := sd.Read(nil); n != 0 || err != io.EOF {
		t.Fatalf("net/textproto: Read(nil) at the end = %d, %v", n, err)
	}
	if n, err := od.Read(nil); n != 0 || err != io.EOF {
		t.Errorf("Read(nil) at the end = %d, %v; want 0, io.EOF", n, err)
	}
	sl, serr := std.ReadLine()
	ol, oerr := ours.ReadLine()
	if sl != ol || serr != oerr {
		t.Errorf("ReadLine after the block = %q, %v; net/textproto's %q, %v", ol, oerr, sl, serr)
	}
}

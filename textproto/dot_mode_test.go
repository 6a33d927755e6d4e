package textproto

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// TestDotReaderStrictSmuggling: in Strict and Raw mode, none of the public
// smuggling sequences ends the data; the block fails with the offset of the
// bad byte, and the next command read is the one after the real end.
func TestDotReaderStrictSmuggling(t *testing.T) {
	for _, seq := range []string{"\n.\n", "\n.\r\n", "\r\n.\n", "\r.\r\n", "\r\n.\r", "\r\n\x00.\r\n"} {
		in := "body" + seq + "MAIL FROM:<smuggled>\r\n.\r\nQUIT\r\n"
		for _, mode := range []dot.Mode{dot.Strict, dot.Raw} {
			r := NewReader(bufio.NewReaderSize(strings.NewReader(in), 16))
			data, err := io.ReadAll(r.DotReaderMode(mode))
			var se *dot.SyntaxError
			if seq == "\r\n\x00.\r\n" {
				// Not a line ending problem: the NUL line is data.
				if err != nil || !bytes.Contains(data, []byte("MAIL FROM")) {
					t.Errorf("%v %q: %q %v", mode, seq, data, err)
				}
			} else if !errors.As(err, &se) || se.Offset < 4 || se.Offset > 7 {
				t.Errorf("%v %q: err = %v, want a SyntaxError inside the sequence", mode, seq, err)
			}
			if bytes.Contains(data, []byte("smuggled")) && err != nil {
				t.Errorf("%v %q: data after the error was returned: %q", mode, seq, data)
			}
			if line, err := r.ReadLine(); line != "QUIT" || err != nil {
				t.Errorf("%v %q: next line %q %v, want QUIT", mode, seq, line, err)
			}
		}
	}
}

func TestDotReaderRaw(t *testing.T) {
	r := NewReader(bufio.NewReader(strings.NewReader("a\r\n..b\r\n\r\n.\r\nNEXT\r\n")))
	got, err := r.DotReaderMode(dot.Raw).(io.WriterTo).WriteTo(new(bytes.Buffer))
	if err != nil || got != int64(len("a\r\n.b\r\n\r\n")) {
		t.Fatalf("WriteTo: %d %v", got, err)
	}
	if line, _ := r.ReadLine(); line != "NEXT" {
		t.Fatalf("next line %q", line)
	}
}

// TestDotReaderLimit: a block over MaxDotBytes fails with dot.ErrTooLarge
// after being consumed to its end, through Read, WriteTo and ReadDotBytes.
func TestDotReaderLimit(t *testing.T) {
	in := "0123456789\r\n.\r\nQUIT\r\n"
	for _, how := range []string{"read", "writeto", "readdotbytes"} {
		r := NewReader(bufio.NewReaderSize(strings.NewReader(in), 16))
		r.SetLimits(Limits{MaxDotBytes: 4})
		var err error
		switch how {
		case "read":
			_, err = io.ReadAll(r.DotReader())
		case "writeto":
			_, err = io.Copy(io.Discard, r.DotReader())
		case "readdotbytes":
			_, err = r.ReadDotBytes()
		}
		if !errors.Is(err, dot.ErrTooLarge) {
			t.Errorf("%s: err = %v, want ErrTooLarge", how, err)
		}
		if line, err := r.ReadLine(); line != "QUIT" || err != nil {
			t.Errorf("%s: next line %q %v", how, line, err)
		}
	}
}

// endlessLines yields "xxxx...\r\n" lines forever: a client that never ends its
// data.
type endlessLines struct{ n int64 }

func (e *endlessLines) Read(p []byte) (int, error) {
	for i := range p {
		if e.n%100 == 98 {
			p[i] = '\r'
		} else if e.n%100 == 99 {
			p[i] = '\n'
		} else {
			p[i] = 'x'
		}
		e.n++
	}
	return len(p), nil
}

// TestDotReaderLimitMemory: with MaxDotBytes, an endlessLines block costs no
// more memory than the limit, however much of it is read.
func TestDotReaderLimitMemory(t *testing.T) {
	const limit = 1 << 20
	const feed = 64 << 20
	src := &endlessLines{}
	r := NewReader(bufio.NewReader(io.LimitReader(src, feed)))
	r.SetLimits(Limits{MaxDotBytes: limit})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	data, err := r.ReadDotBytes()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(data) != limit {
		t.Fatalf("got %d bytes, %v; want %d bytes and ErrUnexpectedEOF (the feed ended)", len(data), err, limit)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8*limit {
		t.Errorf("reading %d MiB with a %d MiB limit allocated %d MiB", feed>>20, limit>>20, grew>>20)
	}
	if src.n != feed {
		t.Errorf("consumed %d of %d bytes", src.n, feed)
	}
}

func TestDotWriterStrict(t *testing.T) {
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	w := NewWriter(bw)
	d := w.DotWriterMode(dot.Strict)
	n, err := d.Write([]byte("ok\r\n.dot\r\nbare\nlf\r\n"))
	if !errors.Is(err, dot.ErrBareLF) || n != len("ok\r\n.dot\r\nbare") {
		t.Fatalf("Write: %d %v", n, err)
	}
	if err := d.Close(); !errors.Is(err, dot.ErrBareLF) {
		t.Fatalf("Close: %v", err)
	}
	bw.Flush()
	if got := buf.String(); got != "ok\r\n..dot\r\nbare" {
		t.Fatalf("wrote %q: no end marker may follow a refused write", got)
	}

	// The Writer keeps the error: its connection can only be dropped.
	if err := w.DotWriterMode(dot.Raw).Close(); !errors.Is(err, dot.ErrBareLF) {
		t.Fatalf("Close of a new DotWriter after a failed one: %v", err)
	}

	// A valid message, without a final CRLF, gets one before the marker.
	buf.Reset()
	w = NewWriter(bw)
	d = w.DotWriterMode(dot.Raw)
	io.WriteString(d, "line\r\n.x")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "line\r\n..x\r\n.\r\n" {
		t.Fatalf("wrote %q", got)
	}
}

// TestDotRawRoundTrip: Raw writer then Raw reader give back the input.
func TestDotRawRoundTrip(t *testing.T) {
	msg := "Subject: x\r\n\r\n.\r\n..\r\n.a\r\nend\r\n"
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	d := NewWriter(bw).DotWriterMode(dot.Raw)
	io.WriteString(d, msg)
	d.Close()
	got, err := NewReader(bufio.NewReader(&buf)).DotReaderMode(dot.Raw).(io.WriterTo).WriteTo(io.Discard)
	if err != nil || got != int64(len(msg)) {
		t.Fatalf("%d %v", got, err)
	}
}

// TestDotReaderAfterLimitError: a block read after a line broke MaxLineBytes
// starts after the rest of that line, as the next ReadLine would.
func TestDotReaderAfterLimitError(t *testing.T) {
	r := NewReader(bufio.NewReaderSize(strings.NewReader("a line that is too long\r\nxx\r\n.\r\nQUIT\r\n"), 16))
	r.SetLimits(Limits{MaxLineBytes: 5})
	if _, err := r.ReadLine(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("ReadLine: %v", err)
	}
	got, err := io.ReadAll(r.DotReader())
	if string(got) != "xx\n" || err != nil {
		t.Fatalf("DotReader: %q %v", got, err)
	}
	if line, _ := r.ReadLine(); line != "QUIT" {
		t.Fatalf("next line %q", line)
	}
}

// TestDotReaderOwedError: when ReadLine returned a line net/textproto would
// have lost and owes the read error behind it, the DotReader's first read
// returns that error, where net/textproto's would have returned it.
func TestDotReaderOwedError(t *testing.T) {
	for _, how := range []string{"read", "writeto"} {
		r := NewReader(bufio.NewReaderSize(&chunkReader{data: []byte("0123456789abcdef"), n: 16, err: errBroken}, 16))
		if line, err := r.ReadLine(); line != "0123456789abcdef" || err != nil {
			t.Fatalf("ReadLine: %q %v", line, err)
		}
		d := r.DotReader()
		var err error
		if how == "read" {
			_, err = d.Read(make([]byte, 8))
		} else {
			_, err = io.Copy(io.Discard, d)
		}
		if err != errBroken {
			t.Errorf("%s: first result %v, want the owed error", how, err)
		}
		if line, err := r.ReadLine(); err != errBroken || line != "" {
			// The source keeps failing; the owed error was not the cause.
			t.Errorf("%s: then ReadLine %q %v", how, line, err)
		}
	}
}

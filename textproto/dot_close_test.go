package textproto

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	stdtp "net/textproto"
	"testing"
)

// lineReader is the part of both Readers the tests below drive.
type lineReader interface {
	DotReader() io.Reader
	ReadLine() (string, error)
	ReadDotBytes() ([]byte, error)
	ReadDotLines() ([]string, error)
}

// earlyClose reads `reads` times from a DotReader, then abandons it by
// calling ReadLine twice (which must drain the block first), then reads a
// whole block with ReadDotBytes and one with ReadDotLines.
func earlyClose(r lineReader, reads, size int) string {
	var log bytes.Buffer
	d := r.DotReader()
	b := make([]byte, size)
	for i := 0; i < reads; i++ {
		n, err := d.Read(b)
		fmt.Fprintf(&log, "read %q %s; ", b[:n], errString(err))
	}
	for i := 0; i < 2; i++ {
		l, err := r.ReadLine()
		fmt.Fprintf(&log, "line %q %s; ", l, errString(err))
	}
	all, err := r.ReadDotBytes()
	fmt.Fprintf(&log, "dotbytes %q %s; ", all, errString(err))
	lines, err := r.ReadDotLines()
	fmt.Fprintf(&log, "dotlines %q %s; ", lines, errString(err))
	return log.String()
}

func TestDotReaderEarlyCloseMatchesStdlib(t *testing.T) {
	inputs := []string{
		"abc\r\ndef\r\n.\r\nNEXT\r\nmore\r\n..x\r\n.\r\ny\r\n.\r\n",
		"a\n.\nB\nC\n.\n..\n.\n",
		"partial\r\n",
		"\r\n.\r\n\r\n.\r\n.\r\n.\r\n",
	}
	for _, in := range inputs {
		for _, bs := range []int{16, 4096} {
			for _, chunk := range []int{1, 5, 4096} {
				for reads := 0; reads < 4; reads++ {
					for _, size := range []int{1, 3, 100} {
						std := stdtp.NewReader(bufio.NewReaderSize(&chunkReader{data: []byte(in), n: chunk}, bs))
						ws := NewReader(bufio.NewReaderSize(&chunkReader{data: []byte(in), n: chunk}, bs))
						want, got := earlyClose(std, reads, size), earlyClose(ws, reads, size)
						if want != got {
							t.Fatalf("%q buf=%d chunk=%d reads=%d size=%d:\nstdlib:    %s\nwirespeed: %s", in, bs, chunk, reads, size, want, got)
						}
					}
				}
			}
		}
	}
}

// TestDotZeroAllocs checks that io.Copy through a DotReader or into a
// DotWriter allocates nothing per window once the Reader or Writer has been
// used: a block of many windows costs only the one allocation of its dot
// reader or writer.
func TestDotZeroAllocs(t *testing.T) {
	plain := bytes.Repeat([]byte("some line of text\r\n.dotted\r\n"), 2000)
	var encBuf bytes.Buffer
	ew := stdtp.NewWriter(bufio.NewWriter(&encBuf)).DotWriter()
	ew.Write(plain)
	ew.Close()
	enc := encBuf.Bytes()
	br := bufio.NewReader(nil)
	src := bytes.NewReader(nil)
	r := NewReader(br)
	readBlock := func() {
		src.Reset(enc)
		br.Reset(src)
		if n, err := io.Copy(io.Discard, r.DotReader()); err != nil || n != int64(len(plain)-bytes.Count(plain, []byte("\r"))) {
			t.Fatalf("copy: %d %v", n, err)
		}
	}
	readBlock()
	if a := testing.AllocsPerRun(20, readBlock); a != 1 {
		t.Errorf("DotReader: %v allocs per block, want 1", a)
	}

	bw := bufio.NewWriter(io.Discard)
	w := NewWriter(bw)
	var srcOnly io.Reader = struct{ io.Reader }{src} // hides WriteTo, so io.Copy uses ReadFrom
	writeBlock := func() {
		src.Reset(plain)
		d := w.DotWriter()
		if _, err := io.Copy(d, srcOnly); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	writeBlock()
	if a := testing.AllocsPerRun(20, writeBlock); a != 1 {
		t.Errorf("DotWriter: %v allocs per block, want 1", a)
	}
}

// TestCloseDotZeroAllocs: starting a block and abandoning it (every Reader
// method does this first) allocates nothing but the block's dot reader or
// writer once the Reader or Writer has been used.
func TestCloseDotZeroAllocs(t *testing.T) {
	in := []byte("a\r\nb\r\n.\r\n")
	src := bytes.NewReader(nil)
	br := bufio.NewReader(src)
	r := NewReader(br)
	run := func() {
		src.Reset(in)
		br.Reset(src)
		r.DotReader()
		r.closeDot()
	}
	run()
	if a := testing.AllocsPerRun(50, run); a != 1 {
		t.Errorf("%v allocs, want 1", a)
	}
	w := NewWriter(bufio.NewWriter(io.Discard))
	line := []byte("x\n")
	wrun := func() {
		d := w.DotWriter()
		d.Write(line)
		w.closeDot()
	}
	wrun()
	if a := testing.AllocsPerRun(50, wrun); a != 1 {
		t.Errorf("writer: %v allocs, want 1", a)
	}
}

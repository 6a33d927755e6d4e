package textproto

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// TestLimitReadErrorAfterDataLimit: when a read error cuts message data
// short after a limit has failed in it, every entry point (ReadDotLines,
// ReadDotBytes, DotReader and DotReaderWith's Read and WriteTo, a BDAT
// Chunk's Read and WriteTo, and Chunks.Err) returns an error that matches
// every limit broken so far and the read error, the limits first, too
// large before line too long. ReadDotLines and the other readers returned
// the read error alone. The error is injected at several offsets from
// well past the limit to the end line, with the data or in a Read of its
// own, over several bufio and Read sizes.
func TestLimitReadErrorAfterDataLimit(t *testing.T) {
	const (
		prefix = "a\r\n"
		long   = "..xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n" // 62 bytes and CRLF
		rest   = "b\r\nc\r\n"
		block  = prefix + long + rest + ".\r\n"
		data   = prefix + long + rest // a BDAT chunk's data
	)
	type limit struct {
		name      string
		lim       Limits
		tooLarge  bool
		lineError bool
	}
	limits := []limit{
		{"line", Limits{MaxLineBytes: 20}, false, true},
		{"size", Limits{MaxDotBytes: 30}, true, false},
		{"both", Limits{MaxLineBytes: 20, MaxDotBytes: 30}, true, true},
	}
	type entry struct {
		name  string
		chunk bool // a BDAT chunk of data, not the dot block
		run   func(r *Reader) error
	}
	readAll := func(rd io.Reader) error {
		b := make([]byte, 5)
		for {
			if _, err := rd.Read(b); err != nil {
				return err
			}
		}
	}
	entries := []entry{
		{"ReadDotLines", false, func(r *Reader) error { _, err := r.ReadDotLines(); return err }},
		{"ReadDotBytes", false, func(r *Reader) error { _, err := r.ReadDotBytes(); return err }},
		{"DotReader.Read", false, func(r *Reader) error { return readAll(r.DotReader()) }},
		{"DotReaderWith(Strict).Read", false, func(r *Reader) error {
			return readAll(r.DotReaderWith(DotOptions{Mode: dot.Strict}))
		}},
		{"DotReaderWith(Raw, MaxDiscardBytes).Read", false, func(r *Reader) error {
			return readAll(r.DotReaderWith(DotOptions{Mode: dot.Raw, MaxDiscardBytes: 1000}))
		}},
		{"DotReaderWith.WriteTo", false, func(r *Reader) error {
			_, err := r.DotReaderWith(DotOptions{}).WriteTo(io.Discard)
			return err
		}},
		{"Chunk.Read", true, func(r *Reader) error {
			c := r.Chunks(ChunkOptions{})
			err := readAll(c.Next(int64(len(data)), true))
			if cerr := c.Err(); cerr != err {
				return fmt.Errorf("Chunks.Err %v, not the chunk's error %v", cerr, err)
			}
			return err
		}},
		{"Chunk.WriteTo", true, func(r *Reader) error {
			c := r.Chunks(ChunkOptions{})
			_, err := c.Next(int64(len(data)), true).WriteTo(io.Discard)
			if cerr := c.Err(); cerr != err {
				return fmt.Errorf("Chunks.Err %v, not the chunk's error %v", cerr, err)
			}
			return err
		}},
	}
	checked := 0
	for _, l := range limits {
		for _, e := range entries {
			in := block
			if e.chunk {
				in = data
			}
			// Both limits have failed once 36 bytes of the long line
			// have come (ReadDotLines charges 16 bytes a line).
			after := len(prefix) + len(long)
			offsets := []int{len(prefix) + 36, len(prefix) + 50, after - 1, after, after + 3, after + len(rest)}
			if e.name != "ReadDotLines" {
				// Within a line after the long one. ReadDotLines drops a
				// read error there, splitting the line, as net/textproto
				// does (as without limits: see the Limits doc).
				offsets = append(offsets, after+1, len(in)-1)
			}
			for _, at := range offsets {
				if at >= len(in) {
					continue // a chunk's data all came: nothing cut short
				}
				for _, size := range []int{16, 64, 4096} {
					for _, chunk := range []int{0, 1, 7} {
						for _, withData := range []bool{false, true} {
							src := &errAtReader{data: []byte(in + "NEXT\r\n"), at: at, chunk: chunk, withData: withData}
							r := NewReader(bufio.NewReaderSize(src, size))
							r.SetLimits(l.lim)
							err := e.run(r)
							where := fmt.Sprintf("%s, %s limit, error at %d (with data %v), bufio %d, reads of %d",
								e.name, l.name, at, withData, size, chunk)
							if err := checkDataReadErr(err, l.tooLarge, l.lineError); err != nil {
								t.Errorf("%s: %v", where, err)
							}
							checked++
						}
					}
				}
			}
		}
	}
	t.Logf("%d cases", checked)
}

// checkDataReadErr checks that err matches the limit errors wanted and
// errInjected, and that its text names them in that order.
func checkDataReadErr(err error, tooLarge, lineTooLong bool) error {
	if err == nil {
		return errors.New("no error")
	}
	msg := err.Error()
	var order []int
	if tooLarge {
		if !errors.Is(err, dot.ErrTooLarge) {
			return fmt.Errorf("%q does not match dot.ErrTooLarge", msg)
		}
		order = append(order, strings.Index(msg, dot.ErrTooLarge.Error()))
	}
	if lineTooLong {
		if !errors.Is(err, dot.ErrLineTooLong) {
			return fmt.Errorf("%q does not match dot.ErrLineTooLong", msg)
		}
		i := strings.Index(msg, dot.ErrLineTooLong.Error())
		if i < 0 {
			i = strings.Index(msg, ErrLineTooLong.Error())
		}
		order = append(order, i)
	}
	if !errors.Is(err, errInjected) {
		return fmt.Errorf("%q does not match the read error", msg)
	}
	order = append(order, strings.Index(msg, errInjected.Error()))
	for i := 1; i < len(order); i++ {
		if order[i-1] < 0 || order[i] <= order[i-1] {
			return fmt.Errorf("%q does not name the limits first, too large first, then the read error", msg)
		}
	}
	return nil
}

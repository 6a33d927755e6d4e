package gosmtp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/textproto"
)

// A decoded block is what one of wirespeed's decoders made of a stream that
// starts with a DATA payload.
type decoded struct {
	data []byte
	err  error // nil for a block that ended cleanly
	end  int64 // bytes of the stream consumed by the block
	// next are the lines a textproto.Reader reads after the block, up to
	// two (the follow-up commands), when the decoder is a textproto one.
	next []string
}

// A decoder is one way wirespeed decodes a block.
type decoder struct {
	name string
	// keep is set when bare CR and LF stay in the data, as in go-smtp.
	keep bool
	// lines is set when decode reads the lines after the block.
	lines  bool
	decode func(stream []byte) decoded
}

// decoders lists the wirespeed decoders compared with go-smtp: textproto's
// Raw dot readers (bare CR and LF rejected, and kept) and package dot's Raw
// decoder with each bare policy that go-smtp's behaviour can be held
// against, fed in pieces of several sizes.
func decoders() []decoder {
	ds := []decoder{
		{name: "textproto/DotReaderMode(Raw)/buf4096", lines: true, decode: func(s []byte) decoded {
			return textprotoDecode(s, 4096, func(r *textproto.Reader) io.Reader { return r.DotReaderMode(dot.Raw) })
		}},
		{name: "textproto/DotReaderMode(Raw)/buf16", lines: true, decode: func(s []byte) decoded {
			return textprotoDecode(s, 16, func(r *textproto.Reader) io.Reader { return r.DotReaderMode(dot.Raw) })
		}},
	}
	ds = append(ds, withDecoders()...)
	for _, bare := range []dot.BarePolicy{dot.BareReject, dot.BareKeep} {
		for _, sz := range []struct{ src, dst int }{{1 << 20, 1 << 20}, {1, 1 << 20}, {7, 3}, {1, 1}} {
			ds = append(ds, decoder{
				name: fmt.Sprintf("dot/Raw/%v/src%d/dst%d", bare, sz.src, sz.dst),
				keep: bare == dot.BareKeep,
				decode: func(s []byte) decoded {
					return dotDecode(s, &dot.Decoder{Mode: dot.Raw, Bare: bare}, sz.src, sz.dst)
				},
			})
		}
	}
	return ds
}

// textprotoDecode reads one block from stream through a textproto.Reader
// over a bufio.Reader of the given size, then the lines after it.
func textprotoDecode(stream []byte, size int, open func(*textproto.Reader) io.Reader) decoded {
	src := bytes.NewReader(stream)
	br := bufio.NewReaderSize(src, size)
	r := textproto.NewReader(br)
	var d decoded
	d.data, d.err = io.ReadAll(open(r))
	d.end = int64(len(stream)) - int64(src.Len()) - int64(br.Buffered())
	for range 2 {
		line, err := r.ReadLine()
		if err != nil {
			break
		}
		d.next = append(d.next, line)
	}
	return d
}

// dotDecode runs dec over stream, srcChunk bytes of input and dstSize bytes
// of output room at a time, until the block ends.
func dotDecode(stream []byte, dec *dot.Decoder, srcChunk, dstSize int) decoded {
	var d decoded
	dst := make([]byte, dstSize)
	pos := 0
	stuck := 0
	for {
		hi := min(pos+srcChunk, len(stream))
		nDst, nSrc, err := dec.Transform(dst, stream[pos:hi], hi == len(stream))
		d.data = append(d.data, dst[:nDst]...)
		pos += nSrc
		if nDst == 0 && nSrc == 0 {
			stuck++
		} else {
			stuck = 0
		}
		switch {
		case errors.Is(err, dot.ErrShortDst) && stuck > 0:
			// Raw mode writes a CRLF whole: give it room, as
			// package dot's own tests do.
			dst = make([]byte, 2*len(dst))
			continue
		case err == nil && stuck > 2:
			d.err = fmt.Errorf("no progress at offset %d: %w", pos, io.ErrNoProgress)
			d.end = int64(pos)
			return d
		case err == nil, errors.Is(err, dot.ErrShortDst):
			continue
		case errors.Is(err, io.EOF):
			err = nil
		}
		d.err = err
		d.end = int64(pos)
		return d
	}
}

// bareFree reports whether b has no CR or LF outside a CRLF.
func bareFree(b []byte) bool {
	for i, c := range b {
		switch {
		case c == '\r' && (i+1 == len(b) || b[i+1] != '\n'):
			return false
		case c == '\n' && (i == 0 || b[i-1] != '\r'):
			return false
		}
	}
	return true
}

// q quotes b for a test message, shortening runs of more than 16 equal
// bytes to the byte and a count.
func q(b []byte) string {
	var out []byte
	lit := 0 // start of the bytes not yet quoted
	for i := 0; i < len(b); {
		j := i
		for j < len(b) && b[j] == b[i] {
			j++
		}
		if j-i > 16 {
			if lit < i {
				out = fmt.Appendf(out, "%q", b[lit:i])
			}
			out = fmt.Appendf(out, "%q×%d", b[i:i+1], j-i)
			lit = j
		}
		i = j
	}
	if lit < len(b) || len(b) == 0 {
		out = fmt.Appendf(out, "%q", b[lit:])
	}
	return string(out)
}

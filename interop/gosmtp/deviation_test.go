package gosmtp

import (
	"errors"
	"io"

	"github.com/wirespeed/wirespeed/dot"
)

// go-smtp's data reader departs from RFC 5321 in two places, both at a CR
// that turns out not to start a CRLF. Its comment says it is net/textproto's
// dotReader with CRLF kept; net/textproto, on such a CR, emits the CR and
// then reads the byte after it again in the new state (UnreadByte), where
// go-smtp emits the byte after the CR as plain data and goes on:
//
//  1. A CR after a CR ("\r\r"): the second CR is taken as data, not as the
//     possible start of a line ending, so in "a\r\r\n" the CRLF ends no line.
//     The next line is then not a line to go-smtp: a "." on it does not end
//     the data ("a\r\r\n.\r\n" runs on) and a leading dot is not removed
//     ("a\r\r\n..b" keeps both dots). RFC 5321 §2.3.8 and §4.1.1.4: a line
//     ends at CRLF, so "a\r" is a line (with a bare CR) and the "." after
//     it ends the mail data.
//  2. A line that starts with ".\r" and goes on with anything but LF: go-smtp
//     drops the CR with the dot (".\rx\r\n" arrives as "x\r\n"), and if that
//     byte is another CR it is data as in 1 (".\r\r\n.\r\n" runs on). §4.5.2
//     deletes only the first character of such a line, the dot, so the data
//     is "\rx\r\n".
//
// Both need a bare CR, which §2.3.8 forbids clients to send, so go-smtp
// handles every conforming stream as RFC 5321 does; wirespeed's Raw mode with
// BareKeep decodes such a stream exactly as the RFC's framing says.
//
// goSMTPDeviation returns the offset in stream[:limit] of the first byte at
// which one of them starts, or -1. Before that byte go-smtp and the RFC agree
// on every line, so the scan can follow the RFC's lines.
func goSMTPDeviation(stream []byte, limit int64) int {
	lineStart := true
	for i := range int(limit) {
		c := stream[i]
		if c == '\r' && i+1 < len(stream) && stream[i+1] == '\r' {
			return i
		}
		if lineStart && c == '.' && i+2 < len(stream) && stream[i+1] == '\r' && stream[i+2] != '\n' {
			return i
		}
		lineStart = c == '\n' && i > 0 && stream[i-1] == '\r'
	}
	return -1
}

// decidedPrefix returns the data a Raw BareKeep decoder has decided on after
// reading b, with more input to come: a prefix of the data of any stream
// that starts with b.
func decidedPrefix(b []byte) ([]byte, error) {
	dec := &dot.Decoder{Mode: dot.Raw, Bare: dot.BareKeep}
	dst := make([]byte, len(b)+16)
	nDst, nSrc, err := dec.Transform(dst, b, false)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if nSrc != len(b) && err == nil {
		return nil, io.ErrShortBuffer
	}
	return dst[:nDst], nil
}

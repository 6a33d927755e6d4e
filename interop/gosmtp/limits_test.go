package gosmtp

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"
	"github.com/wirespeed/wirespeed/dot"
)

// sizeLimit is go-smtp's MaxMessageBytes and wirespeed's MaxSize (MaxBytes)
// in TestMaxSize.
const sizeLimit = 64

// TestMaxSize compares go-smtp's Server.MaxMessageBytes with MaxSize
// (dot.Decoder) and MaxBytes (textproto.DotOptions) on messages around the
// limit. All count decoded bytes, CRLFs included and stuffing dots not, and
// all read a block that is too large to its end line, reply and go on. They
// differ on a message of exactly the limit: go-smtp rejects it (its reader
// fails as soon as the limit has been read, before it has seen whether the
// end line follows), wirespeed accepts it. RFC 1870 makes the SIZE value
// "the maximum size of a message" the server will accept, so a message of
// that size is acceptable: go-smtp is off by one.
func TestMaxSize(t *testing.T) {
	p := startPeer(t, false, func(s *smtp.Server) { s.MaxMessageBytes = sizeLimit })
	for _, size := range []int{0, 2, 3, sizeLimit - 2, sizeLimit - 1, sizeLimit, sizeLimit + 1, sizeLimit + 2, 3 * sizeLimit} {
		for _, shape := range []struct {
			name string
			line func(n int) string // a line of n > 2 decoded bytes, CRLF included
		}{
			{"plain", func(n int) string { return strings.Repeat("a", n-2) + "\r\n" }},
			{"stuffed", func(n int) string { return "." + strings.Repeat(".", n-2) + "\r\n" }},
			{"bare-LF", func(n int) string { return strings.Repeat("\n", n-2) + "\r\n" }},
		} {
			t.Run(fmt.Sprintf("%s/%d", shape.name, size), func(t *testing.T) {
				// Lines of 20 decoded bytes, the last one of what is left.
				var msg strings.Builder
				for rest := size; rest > 0; {
					n := rest
					if rest > 22 {
						n = 20
					}
					if n == 2 {
						msg.WriteString("\r\n")
					} else {
						msg.WriteString(shape.line(n))
					}
					rest -= n
				}
				tr := p.exchange(t, []byte(msg.String()+".\r\n"), transfer{serverChunk: oneByte, followUp: true, followUpAt: -1})
				checkTranscript(t, tr)
				full := dotDecode(tr.sent, &dot.Decoder{Mode: dot.Raw, Bare: dot.BareKeep}, len(tr.sent), len(tr.sent)+1)
				if len(full.data) != size {
					t.Fatalf("the message has %d decoded bytes, want %d", len(full.data), size)
				}
				for _, d := range limitDecoders(sizeLimit, 0) {
					t.Run(d.name, func(t *testing.T) { checkMaxSize(t, tr, d.decode(tr.sent), full) })
				}
			})
		}
	}
}

// checkMaxSize compares go-smtp's transcript with ws, what a decoder with a
// MaxSize of sizeLimit made of the same bytes; full is their decoding
// without a limit.
func checkMaxSize(t *testing.T, tr transcript, ws, full decoded) {
	got := tr.msgs[0]
	goRejects := errors.Is(got.err, smtp.ErrDataTooLarge)
	wsRejects := errors.Is(ws.err, dot.ErrTooLarge)
	if goRejects != strings.HasPrefix(tr.dataReply, "552 ") || (got.err != nil && !goRejects) {
		t.Errorf("go-smtp: Data error %v, reply %q", got.err, tr.dataReply)
	}
	if wsRejects != (len(full.data) > sizeLimit) || (ws.err != nil && !wsRejects) {
		t.Errorf("MaxSize %d on %d decoded bytes: %v", sizeLimit, len(full.data), ws.err)
	}
	if tr.end != ws.end || tr.closerSent {
		t.Errorf("go-smtp ends after %d bytes (closer %v), MaxSize after %d", tr.end, tr.closerSent, ws.end)
	}
	switch {
	case !goRejects && !wsRejects:
		if !bytes.Equal(got.body, ws.data) || !bytes.Equal(ws.data, full.data) {
			t.Errorf("go-smtp keeps %s, MaxSize %s, of %s", q(got.body), q(ws.data), q(full.data))
		}
	case !bytes.HasPrefix(full.data, got.body) || !bytes.HasPrefix(full.data, ws.data) ||
		len(got.body) > sizeLimit || len(ws.data) > sizeLimit:
		// A rejected message: each keeps at most the limit. go-smtp
		// keeps exactly the limit; MaxSize keeps one byte less where a
		// CRLF straddles it, as Raw mode writes a CRLF whole.
		t.Errorf("go-smtp keeps %s, MaxSize %s, want prefixes of %s of at most %d bytes", q(got.body), q(ws.data), q(full.data), sizeLimit)
	}
	switch {
	case len(full.data) == sizeLimit:
		// The known difference: see TestMaxSize.
		if !goRejects || wsRejects {
			t.Errorf("a message of exactly the limit: go-smtp error %v, MaxSize error %v; want go-smtp to reject it and MaxSize to accept it", got.err, ws.err)
		}
	case goRejects != wsRejects:
		t.Errorf("%d decoded bytes, limit %d: go-smtp error %v, MaxSize error %v", len(full.data), sizeLimit, got.err, ws.err)
	}
}

// lineLimit is go-smtp's MaxLineLength in TestMaxLine.
const lineLimit = 40

// TestMaxLine compares go-smtp's Server.MaxLineLength with MaxLine
// (dot.Decoder) and MaxLineBytes (textproto.DotOptions). go-smtp counts the
// bytes since the last LF, that LF included, so a data line may hold
// MaxLineLength-2 bytes before its CRLF: MaxLine = MaxLineLength-2 is the
// same bound (and go-smtp's default of 2000 is 1998, where RFC 5321
// §4.5.3.1.6 says 998). Two differences are known and checked as such:
//   - go-smtp's line counter restarts at every LF, a bare one too, though
//     its data reader keeps a bare LF as data inside the line; MaxLine with
//     BareKeep counts a bare LF as a byte of the line. A line of short
//     pieces between bare LFs passes go-smtp's limit and fails MaxLine.
//   - go-smtp stops reading at the byte too many, replies 554, then 500 and
//     closes the connection; MaxLine reads the block to its end line and
//     reports ErrLineTooLong there, so the server can reply and read on.
func TestMaxLine(t *testing.T) {
	p := startPeer(t, false, func(s *smtp.Server) { s.MaxLineLength = lineLimit })
	type lineCase struct {
		name string
		line string // a data line without its CRLF
		// bareLF marks the lines that go-smtp counts in pieces.
		bareLF bool
	}
	var cases []lineCase
	for _, n := range []int{lineLimit - 4, lineLimit - 3, lineLimit - 2, lineLimit - 1, lineLimit, lineLimit + 10} {
		cases = append(cases,
			lineCase{name: fmt.Sprintf("plain-%d", n), line: strings.Repeat("a", n)},
			lineCase{name: fmt.Sprintf("stuffed-%d", n), line: "." + strings.Repeat(".", n-1)},
			lineCase{name: fmt.Sprintf("bare-CR-%d", n), line: strings.Repeat("a\r", n/2) + strings.Repeat("b", n%2)},
		)
	}
	cases = append(cases,
		lineCase{name: "bare-LF-pieces", line: strings.Repeat(strings.Repeat("c", 10)+"\n", 6), bareLF: true},
		lineCase{name: "bare-LF-long-piece", line: "d\n" + strings.Repeat("d", lineLimit)},
	)
	const after = "\r\nshort line\r\n.\r\n"
	for _, c := range cases {
		for _, before := range []string{"", "Subject: x\r\n\r\n"} {
			name := c.name + "/first"
			if before != "" {
				name = c.name + "/later"
			}
			t.Run(name, func(t *testing.T) {
				tr := p.exchange(t, []byte(before+c.line+after), transfer{serverChunk: oneByte, followUp: true, followUpAt: -1})
				checkTranscript(t, tr)
				full := dotDecode(tr.sent, &dot.Decoder{Mode: dot.Raw, Bare: dot.BareKeep}, len(tr.sent), len(tr.sent)+1)
				for _, d := range limitDecoders(0, lineLimit-2) {
					t.Run(d.name, func(t *testing.T) { checkMaxLine(t, tr, d.decode(tr.sent), full, len(before), c.line, c.bareLF) })
				}
			})
		}
	}
}

// checkMaxLine compares go-smtp's transcript with ws, what a decoder with a
// MaxLine of lineLimit-2 made of the same bytes: full decoded without a
// limit, before bytes, then line and the rest.
func checkMaxLine(t *testing.T, tr transcript, ws, full decoded, before int, line string, bareLF bool) {
	got := tr.msgs[0]
	goRejects := errors.Is(got.err, smtp.ErrTooLongLine)
	wsRejects := errors.Is(ws.err, dot.ErrLineTooLong)
	if ws.err != nil && !wsRejects {
		t.Fatalf("MaxLine: %v", ws.err)
	}
	if got.err != nil && !goRejects {
		t.Fatalf("go-smtp: %v", got.err)
	}
	if bareLF {
		// The first known difference.
		if goRejects || !wsRejects {
			t.Errorf("go-smtp error %v, MaxLine error %v; want go-smtp to pass the bare-LF pieces and MaxLine to count them as one line", got.err, ws.err)
		}
		return
	}
	if goRejects != wsRejects {
		t.Errorf("a line of %d bytes: go-smtp error %v, MaxLine %d error %v", len(line), got.err, lineLimit-2, ws.err)
	}
	if !goRejects {
		if tr.end != ws.end || !bytes.Equal(got.body, ws.data) {
			t.Errorf("go-smtp keeps %s and ends after %d, MaxLine keeps %s and ends after %d", q(got.body), tr.end, q(ws.data), ws.end)
		}
		return
	}
	// The second known difference: go-smtp stops at the byte too many,
	// MaxLine reads on to the end line. Both keep the lines before and a
	// part of the line too long: go-smtp up to the byte too many in its
	// count, MaxLine up to the byte too many in its own.
	if !strings.HasPrefix(tr.dataReply, "554 ") || tr.end >= ws.end || ws.end != int64(len(tr.sent)) {
		t.Errorf("go-smtp replies %q after %d bytes, MaxLine ends after %d of %d", tr.dataReply, tr.end, ws.end, len(tr.sent))
	}
	for _, b := range [][]byte{got.body, ws.data} {
		if !bytes.HasPrefix(full.data, b) || len(b) < before || len(b) >= before+len(line)+2 {
			t.Errorf("go-smtp keeps %s, MaxLine %s: want the %d bytes before the line and a part of the line of %s", q(got.body), q(ws.data), before, q(full.data))
		}
	}
}

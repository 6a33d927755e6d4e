package gosmtp

import (
	"bytes"
	"io"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/textproto"
)

// TestKnownDeviations pins down what go-smtp does where it departs from RFC
// 5321 (see goSMTPDeviation), beside what wirespeed's Raw mode with BareKeep
// does: the RFC's reading. Every case has a bare CR, which RFC 5321 §2.3.8
// forbids a client to send; a server meets it when a client or relay sends
// it anyway, as in SMTP smuggling.
func TestKnownDeviations(t *testing.T) {
	p := startPeer(t, false)
	cases := []struct {
		name, data string
		// goSMTP is the data go-smtp keeps; it takes closer too when it
		// reads on past the RFC's end line.
		goSMTP       string
		goSMTPCloser bool
		// wirespeed is the data of the RFC's reading, next the line a
		// server reads after the block.
		wirespeed, next string
	}{
		{
			// "a\r" is a line (a bare CR, then CRLF), "." ends the data
			// and RSET is the next command. go-smtp takes the second CR
			// as data, so the CRLF ends no line: the "." line and the
			// command become part of the message. Behind a relay that
			// ends the data where the RFC does, go-smtp reads the
			// relay's next commands as message text.
			name: "CR-CRLF-dot", data: "a\r\r\n.\r\nRSET\r\n",
			goSMTP: "a\r\r\n.\r\nRSET\r\nZ\r\n", goSMTPCloser: true,
			wirespeed: "a\r\r\n", next: "RSET",
		},
		{
			// The same line start lost: go-smtp does not remove the
			// stuffing dot.
			name: "CR-CRLF-stuffed", data: "a\r\r\n..b\r\n.\r\n",
			goSMTP:    "a\r\r\n..b\r\n",
			wirespeed: "a\r\r\n.b\r\n",
		},
		{
			// ".\r" then "x": §4.5.2 removes the dot only; go-smtp drops
			// the CR with it.
			name: "dot-CR-x", data: ".\rx\r\n.\r\n",
			goSMTP:    "x\r\n",
			wirespeed: "\rx\r\n",
		},
		{
			// ".\r" then CRLF: go-smtp drops the first CR and takes the
			// second as data, so it also loses the line start and reads
			// on past the end line.
			name: "dot-CR-CRLF-dot", data: ".\r\r\n.\r\n",
			goSMTP: "\r\n.\r\nZ\r\n", goSMTPCloser: true,
			wirespeed: "\r\r\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := p.exchange(t, []byte(c.data), transfer{serverChunk: oneByte, followUp: true, followUpAt: -1})
			checkTranscript(t, tr)
			if got := tr.msgs[0]; string(got.body) != c.goSMTP || got.err != nil || tr.closerSent != c.goSMTPCloser {
				t.Errorf("go-smtp keeps %s (error %v, closer sent %v), want %q (closer sent %v)", q(got.body), got.err, tr.closerSent, c.goSMTP, c.goSMTPCloser)
			}
			ws := textprotoDecode(tr.sent, 4096, func(r *textproto.Reader) io.Reader {
				return r.DotReaderMode(dot.Raw)
			})
			keep := dotDecode(tr.sent, &dot.Decoder{Mode: dot.Raw, Bare: dot.BareKeep}, len(tr.sent), len(tr.sent)+1)
			if string(keep.data) != c.wirespeed || keep.err != nil {
				t.Errorf("Raw with BareKeep keeps %s (error %v), want %q", q(keep.data), keep.err, c.wirespeed)
			}
			if ws.end != keep.end {
				t.Errorf("DotReaderMode(Raw) ends after %d bytes, Raw with BareKeep after %d", ws.end, keep.end)
			}
			if c.next != "" && (len(ws.next) == 0 || ws.next[0] != c.next) {
				t.Errorf("after the block textproto reads %q, want %q first", ws.next, c.next)
			}
			if !c.goSMTPCloser && tr.end != keep.end {
				t.Errorf("go-smtp ends after %d bytes, wirespeed after %d", tr.end, keep.end)
			}
			if c.goSMTPCloser && !(tr.end > keep.end && bytes.Contains(tr.msgs[0].body, []byte("\r\n.\r\n"))) {
				t.Errorf("go-smtp ends after %d bytes, wirespeed after %d: want go-smtp to read the end line as data", tr.end, keep.end)
			}
		})
	}
}

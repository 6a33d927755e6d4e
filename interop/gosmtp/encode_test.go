package gosmtp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/textproto"
)

// messageBodies returns message texts with CRLF line endings only: what a
// Raw (or Strict) encoder accepts. They are the data wirespeed decodes from
// the hand-written payloads that have no bare CR or LF, and seeded random
// texts of dot-heavy lines.
func messageBodies() []string {
	var bodies []string
	for _, c := range handPayloads() {
		wire := []byte(c.data + closer)
		d := dotDecode(wire, &dot.Decoder{Mode: dot.Raw}, len(wire), len(wire)+1)
		if d.err == nil {
			bodies = append(bodies, string(d.data))
		}
	}
	lines := []string{"", ".", "..", "...", ". ", ".a", "a.", "a", "From x", strings.Repeat("w", 1200), strings.Repeat(".", 999)}
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 0xe2c))
		var b strings.Builder
		n := r.IntN(12)
		for i := range n {
			b.WriteString(lines[r.IntN(len(lines))])
			if i < n-1 || r.IntN(3) != 0 {
				b.WriteString("\r\n")
			}
		}
		bodies = append(bodies, b.String())
	}
	return bodies
}

// TestDotWriterToGoSMTP encodes message texts with textproto's Raw dot
// writer, in writes of several sizes, and checks that go-smtp's backend gets
// each text unchanged (with the CRLF the writer adds to an unterminated last
// line), ended exactly where the writer's end line ends.
func TestDotWriterToGoSMTP(t *testing.T) {
	p := startPeer(t, false)
	for i, body := range messageBodies() {
		for _, step := range []int{1, 7, 1 << 20} {
			t.Run(fmt.Sprintf("%d/step%d", i, step), func(t *testing.T) {
				var wire bytes.Buffer
				bw := bufio.NewWriterSize(&wire, 16)
				w := textproto.NewWriter(bw).DotWriterMode(dot.Raw)
				for b := []byte(body); len(b) > 0; {
					n := min(step, len(b))
					if _, err := w.Write(b[:n]); err != nil {
						t.Fatalf("Write: %v", err)
					}
					b = b[n:]
				}
				if err := w.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				if err := bw.Flush(); err != nil {
					t.Fatal(err)
				}
				want := body
				if want != "" && !strings.HasSuffix(want, "\r\n") {
					want += "\r\n"
				}
				tr := p.exchange(t, wire.Bytes(), transfer{serverChunk: oneByte, followUp: true, followUpAt: -1})
				checkTranscript(t, tr)
				if got := tr.msgs[0]; string(got.body) != want || got.err != nil || tr.closerSent || tr.end != int64(wire.Len()) {
					t.Errorf("wirespeed wrote %s for %s; go-smtp kept %s (error %v) and ended after %d bytes (closer %v)",
						q(wire.Bytes()), q([]byte(body)), q(got.body), got.err, tr.end, tr.closerSent)
				}
			})
		}
	}
}

// TestDotWriterRefusesBare checks that the Raw dot writer refuses what
// go-smtp would take apart differently from the RFC (see goSMTPDeviation),
// so that a wirespeed client never sends it: every bare CR or LF.
func TestDotWriterRefusesBare(t *testing.T) {
	for _, body := range []string{"a\r\r\n", ".\rx\r\n", "a\n.\n", "\r", "x\ny\r\n"} {
		var wire bytes.Buffer
		bw := bufio.NewWriter(&wire)
		w := textproto.NewWriter(bw).DotWriterMode(dot.Raw)
		_, werr := w.Write([]byte(body))
		cerr := w.Close()
		var se *dot.SyntaxError
		if !errors.As(errors.Join(werr, cerr), &se) {
			t.Errorf("Raw dot writer on %q: Write %v, Close %v; want a *dot.SyntaxError", body, werr, cerr)
		}
	}
}

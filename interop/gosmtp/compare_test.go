package gosmtp

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// oneByte makes go-smtp read a byte at a time, so that its DATA reply's
// offset is where it ended the block.
func oneByte(int) int { return 1 }

// randomChunks returns a chunk-size function drawing from 1..max with seed;
// it is used from one goroutine only.
func randomChunks(seed uint64, max int) func(int) int {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	return func(int) int { return 1 + r.IntN(max) }
}

// outcome is what a payload did, for the tests that count.
type outcome struct {
	deviation int  // offset of go-smtp's known deviation, or -1
	differs   bool // go-smtp's data or end differs from Raw with BareKeep
}

// differential sends payload to go-smtp twice, once read a byte at a time
// (exact offsets) and once in random pieces from random writes, and a third
// time with the next commands right behind it if it ends the block at its
// last byte. It decodes the same bytes with every wirespeed decoder and
// fails t on any difference that goSMTPDeviation does not explain.
func differential(t testing.TB, p *peer, payload []byte, seed uint64) outcome {
	t.Helper()
	exact := p.exchange(t, payload, transfer{serverChunk: oneByte, followUp: true, followUpAt: -1})
	checkTranscript(t, exact)

	// go-smtp itself must not depend on how the bytes arrive.
	stream := p.exchange(t, payload, transfer{
		serverChunk: randomChunks(seed, 4096),
		clientChunk: randomChunks(seed+1, 64),
		followUp:    true,
		followUpAt:  exact.end,
	})
	if !bytes.Equal(exact.sent, stream.sent) || exact.dataReply != stream.dataReply ||
		!slices.Equal(exact.after, stream.after) || !sameMessages(exact.msgs, stream.msgs) {
		t.Errorf("go-smtp differs between byte-at-a-time and chunked reads of %s:\n%s\n%s", q(payload), exact, stream)
	}
	if exact.end == int64(len(payload)) && !exact.closerSent {
		// The payload ends the block at its last byte: the commands
		// after it may come in the same writes and reads.
		piped := p.exchange(t, payload, transfer{
			serverChunk: randomChunks(seed+2, 4096),
			clientChunk: randomChunks(seed+3, 64),
			pipeline:    true,
		})
		if !bytes.Equal(exact.sent, piped.sent) || exact.dataReply != piped.dataReply ||
			!slices.Equal(exact.after, piped.after) || !sameMessages(exact.msgs, piped.msgs) {
			t.Errorf("go-smtp differs between a payload alone and one pipelined with %q:\n%s\n%s", followUp, exact, piped)
		}
	}

	wire := exact.sent
	if exact.after != nil {
		wire = append(slices.Clip(wire), followUp...)
	}
	got := exact.msgs[0]
	ref := dotDecode(wire, &dot.Decoder{Mode: dot.Raw, Bare: dot.BareKeep}, len(wire), len(wire)+1)
	out := outcome{
		deviation: goSMTPDeviation(wire, min(ref.end, int64(len(wire)))),
		differs:   ref.end != exact.end || !bytes.Equal(ref.data, got.body) || ref.err != nil || got.err != nil,
	}
	for _, d := range decoders() {
		res := d.decode(wire)
		if res.end != ref.end {
			t.Errorf("%s ends the block of %s after %d bytes, Raw with BareKeep after %d", d.name, q(wire), res.end, ref.end)
		}
		if out.deviation >= 0 {
			checkDeviation(t, d, wire, out.deviation, exact, res)
			continue
		}
		if res.end != exact.end {
			t.Errorf("%s ends the block of %s after %d bytes, go-smtp after %d", d.name, q(wire), res.end, exact.end)
		}
		if d.keep || bareFree(got.body) {
			if res.err != nil || got.err != nil || !bytes.Equal(res.data, got.body) {
				t.Errorf("%s decodes %s as\n%s (error %v), go-smtp as\n%s (error %v)", d.name, q(wire), q(res.data), res.err, q(got.body), got.err)
			}
		} else {
			// go-smtp keeps what Raw with BareReject refuses: the
			// block still ends at the same byte, with the error in
			// place of io.EOF and the data cut before the bare byte.
			var se *dot.SyntaxError
			if !errors.As(res.err, &se) || !(errors.Is(res.err, dot.ErrBareCR) || errors.Is(res.err, dot.ErrBareLF)) {
				t.Errorf("%s on %s: error %v, want a *dot.SyntaxError for the bare CR or LF go-smtp kept in %s", d.name, q(wire), res.err, q(got.body))
			}
			if !bytes.HasPrefix(got.body, res.data) {
				t.Errorf("%s on %s: data %s is not a prefix of go-smtp's %s", d.name, q(wire), q(res.data), q(got.body))
			}
		}
		if d.lines && exact.after != nil {
			if want := []string{"RSET", "QUIT"}; !slices.Equal(res.next, want) {
				t.Errorf("%s reads %q after the block of %s, want %q", d.name, res.next, q(wire), want)
			}
		}
	}
	return out
}

// checkTranscript checks what holds for every exchange with go-smtp.
func checkTranscript(t testing.TB, tr transcript) {
	t.Helper()
	if len(tr.msgs) != 1 {
		t.Fatalf("go-smtp took %d messages from %s, want 1", len(tr.msgs), q(tr.sent))
	}
	if tr.msgs[0].err == nil && !strings.HasPrefix(tr.dataReply, "250 ") {
		t.Errorf("go-smtp read %s without error but replied %q", q(tr.sent), tr.dataReply)
	}
	if tr.end == int64(len(tr.sent)) {
		if len(tr.after) != 2 || !strings.HasPrefix(tr.after[0], "250 ") || !strings.HasPrefix(tr.after[1], "221 ") {
			t.Errorf("go-smtp replied %q to %q after %s", tr.after, followUp, q(tr.sent))
		}
	}
}

// checkDeviation checks a payload on which go-smtp is known to depart from
// RFC 5321 at offset dev (see goSMTPDeviation): the two may differ after
// dev, but only as go-smtp's reader can: it never ends a block earlier than
// the RFC's framing does (every line it sees starts after a CRLF), and up to
// dev both keep the same bytes.
func checkDeviation(t testing.TB, d decoder, wire []byte, dev int, exact transcript, res decoded) {
	t.Helper()
	if exact.end < res.end {
		t.Errorf("%s ends the block of %s after %d bytes, go-smtp earlier, after %d", d.name, q(wire), res.end, exact.end)
	}
	pre, err := decidedPrefix(wire[:dev])
	if err != nil {
		t.Fatalf("decoding %s: %v", q(wire[:dev]), err)
	}
	if !bytes.HasPrefix(exact.msgs[0].body, pre) {
		t.Errorf("go-smtp's data %s for %s does not start with %s, the data before its deviation at %d", q(exact.msgs[0].body), q(wire), q(pre), dev)
	}
	if d.keep && !bytes.HasPrefix(res.data, pre) {
		t.Errorf("%s data %s for %s does not start with %s", d.name, q(res.data), q(wire), q(pre))
	}
	if d.keep && res.err != nil {
		t.Errorf("%s on %s: %v", d.name, q(wire), res.err)
	}
}

func sameMessages(a, b []message) bool {
	return slices.EqualFunc(a, b, func(x, y message) bool {
		return bytes.Equal(x.body, y.body) && errors.Is(x.err, y.err) && errors.Is(y.err, x.err)
	})
}

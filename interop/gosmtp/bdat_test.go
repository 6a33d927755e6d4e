package gosmtp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"
	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/textproto"
)

// A bdatTranscript is what go-smtp did with a message sent in BDAT chunks.
type bdatTranscript struct {
	replies []string  // one per BDAT command, then RSET's and QUIT's
	msgs    []message // the Session.Data calls
}

// bdatExchange sends stream, BDAT commands with their chunks, to go-smtp
// after MAIL (with mailParams) and RCPT, pipelined with followUp behind it,
// and reads a reply for each of the cmds commands and for followUp.
func (p *peer) bdatExchange(tb testing.TB, stream []byte, cmds int, mailParams string, clientChunk func(int) int) bdatTranscript {
	tb.Helper()
	cl := p.open(tb, nil, mailParams)
	defer cl.close()
	cl.send(append(slices.Clip(stream), followUp...), clientChunk)
	var t bdatTranscript
	for range cmds + 2 {
		t.replies = append(t.replies, cl.readLine("BDAT"))
	}
	// The last BDAT reply came after Session.Data returned.
	t.msgs = cl.m.messages()
	return t
}

// A chunked message is what wirespeed's Chunks reader made of a stream of
// BDAT commands and chunks.
type chunked struct {
	data []byte
	errs []error  // the error each chunk ended with (nil for io.EOF)
	next []string // the lines after the LAST chunk
}

// wsChunks reads stream as a server would: each BDAT command line, then
// its chunk through Chunks.Next, up to the LAST one, then the lines after.
func wsChunks(tb testing.TB, stream []byte, bufSize int, opt textproto.ChunkOptions) chunked {
	tb.Helper()
	r := textproto.NewReader(bufio.NewReaderSize(bytes.NewReader(stream), bufSize))
	chunks := r.Chunks(opt)
	var c chunked
	for last := false; !last; {
		line, err := r.ReadLine()
		if err != nil {
			tb.Fatalf("reading a BDAT command: %v", err)
		}
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "BDAT" {
			tb.Fatalf("not a BDAT command: %q", line)
		}
		size, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			tb.Fatal(err)
		}
		last = len(f) == 3 && f[2] == "LAST"
		b, err := io.ReadAll(chunks.Next(size, last))
		c.data = append(c.data, b...)
		c.errs = append(c.errs, err)
	}
	for {
		line, err := r.ReadLine()
		if err != nil {
			break
		}
		c.next = append(c.next, line)
	}
	return c
}

// bdatMessages are message texts for BDAT, where nothing is dot-stuffed and
// nothing is special: bare CR and LF, "\r\n.\r\n", NUL and 8-bit bytes, a
// line run over chunk boundaries.
func bdatMessages() []string {
	ms := []string{
		"",
		"a",
		"Subject: x\r\n\r\nbody\r\n",
		"a\r\n.\r\nMAIL FROM:<e@x>\r\n.\r\n",
		"a\r\r\n.\r\n..b\r\n",
		"\n.\n\r.\r\r\n",
		".\rx\r\n",
		"\x00\xff\r\n\x80",
		strings.Repeat("y", 5000) + "\r\n",
		strings.Repeat("z\r", 300),
	}
	for seed := range uint64(30) {
		ms = append(ms, string(randomPayload(seed)))
	}
	return ms
}

// TestBDAT sends messages in BDAT chunks written by textproto's ChunkWriter
// to go-smtp, and reads the same bytes with textproto's Chunks as a server:
// go-smtp's backend, the BareKeep reader and the message itself must agree
// byte for byte, and both must read RSET and QUIT after the LAST chunk.
// BDAT has no dot-stuffing and no end line, so unlike DATA there is no
// framing to disagree on; BareReject must refuse exactly the messages with a
// bare CR or LF, and Binary (BODY=BINARYMIME) must take every message.
func TestBDAT(t *testing.T) {
	p := startPeer(t, false, func(s *smtp.Server) { s.EnableBINARYMIME = true })
	for i, msg := range bdatMessages() {
		for _, size := range []int{1, 3, 64, 1 << 20} {
			t.Run(fmt.Sprintf("%d/chunk%d", i, size), func(t *testing.T) {
				stream, cmds := chunkStream(t, msg, size, uint64(i))
				for _, params := range []string{"", " BODY=BINARYMIME"} {
					gs := p.bdatExchange(t, stream, cmds, params, randomChunks(uint64(i), 512))
					// 250 for each chunk, RSET and QUIT's 250 and 221.
					wantCodes := append(slices.Repeat([]string{"250"}, cmds+1), "221")
					if !slices.Equal(replyCodes(gs.replies), wantCodes) || len(gs.msgs) != 1 ||
						string(gs.msgs[0].body) != msg || gs.msgs[0].err != nil {
						t.Fatalf("go-smtp%s replied %q and kept %v for %s", params, gs.replies, gs.msgs, q([]byte(msg)))
					}
				}

				wire := append(slices.Clip(stream), followUp...)
				for _, opt := range []textproto.ChunkOptions{{Bare: dot.BareKeep}, {}, {Binary: true}} {
					for _, buf := range []int{16, 4096} {
						ws := wsChunks(t, wire, buf, opt)
						if !slices.Equal(ws.next, []string{"RSET", "QUIT"}) {
							t.Errorf("Chunks(%+v) then reads %q, want RSET and QUIT", opt, ws.next)
						}
						err := errors.Join(ws.errs...)
						if opt.Bare == dot.BareReject && !opt.Binary && !bareFree([]byte(msg)) {
							var se *dot.SyntaxError
							if !errors.As(err, &se) || !bytes.HasPrefix([]byte(msg), ws.data) {
								t.Errorf("Chunks(%+v) on %s: %s, %v; want a prefix and a *dot.SyntaxError", opt, q([]byte(msg)), q(ws.data), err)
							}
							continue
						}
						if string(ws.data) != msg || err != nil {
							t.Errorf("Chunks(%+v) reads %s (%v), go-smtp %s", opt, q(ws.data), err, q([]byte(msg)))
						}
					}
				}
			})
		}
	}
}

// chunkStream writes msg with textproto's ChunkWriter in chunks of size
// bytes, in writes of random sizes drawn with seed, and returns what it sent
// and the number of chunks.
func chunkStream(t *testing.T, msg string, size int, seed uint64) ([]byte, int) {
	t.Helper()
	var stream bytes.Buffer
	bw := bufio.NewWriterSize(&stream, 16)
	cw := textproto.NewWriter(bw).ChunkWriter(size)
	r := rand.New(rand.NewPCG(seed, uint64(size)))
	for b := []byte(msg); len(b) > 0; {
		n := min(len(b), 1+r.IntN(2*size))
		if _, err := cw.Write(b[:n]); err != nil {
			t.Fatal(err)
		}
		b = b[n:]
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	// Full chunks as they fill, then the rest (maybe nothing) with LAST.
	if want := len(msg)/size + 1; cw.Chunks() != want {
		t.Errorf("ChunkWriter(%d) sent %d chunks for %d bytes, want %d", size, cw.Chunks(), len(msg), want)
	}
	return stream.Bytes(), cw.Chunks()
}

// TestBDATMaxSize compares go-smtp's MaxMessageBytes with ChunkOptions'
// MaxBytes on messages in BDAT chunks around the limit. Both accept a
// message of exactly the limit here (go-smtp's BDAT check is right where its
// DATA reader is off by one, see TestMaxSize) and reject a larger one, and
// both stay in step for the commands after the LAST chunk. go-smtp decides
// on a chunk's announced size before reading it: it rejects the chunk that
// would cross the limit with 552 and ends the transaction, so the chunks
// after it get 502 (no RCPT); Chunks reads the data up to the limit and ends
// that chunk and every later one with dot.ErrTooLarge.
func TestBDATMaxSize(t *testing.T) {
	p := startPeer(t, false, func(s *smtp.Server) { s.MaxMessageBytes = sizeLimit })
	for _, n := range []int{sizeLimit - 1, sizeLimit, sizeLimit + 1, 3 * sizeLimit} {
		for _, size := range []int{7, sizeLimit, 1000} {
			t.Run(fmt.Sprintf("%d/chunk%d", n, size), func(t *testing.T) {
				msg := strings.Repeat("abc\r\n", n/5+1)[:n]
				stream, cmds := chunkStream(t, msg, size, uint64(n))
				gs := p.bdatExchange(t, stream, cmds, "", nil)
				codes := replyCodes(gs.replies)
				goRejects := slices.Contains(codes, "552")
				if !slices.Equal(codes[cmds:], []string{"250", "221"}) {
					t.Errorf("go-smtp replied %q after the LAST chunk, want RSET's 250 and QUIT's 221", gs.replies[cmds:])
				}
				if !goRejects && (len(gs.msgs) != 1 || string(gs.msgs[0].body) != msg) {
					t.Errorf("go-smtp replied %q and kept %v", gs.replies, gs.msgs)
				}
				for _, buf := range []int{16, 4096} {
					ws := wsChunks(t, append(slices.Clip(stream), followUp...), buf, textproto.ChunkOptions{Bare: dot.BareKeep, MaxBytes: sizeLimit})
					err := errors.Join(ws.errs...)
					wsRejects := errors.Is(err, dot.ErrTooLarge)
					if goRejects != wsRejects || goRejects != (n > sizeLimit) || (err != nil && !wsRejects) {
						t.Errorf("%d bytes, limit %d: go-smtp replied %q, Chunks failed with %v", n, sizeLimit, gs.replies, err)
					}
					if !slices.Equal(ws.next, []string{"RSET", "QUIT"}) {
						t.Errorf("Chunks then reads %q, want RSET and QUIT", ws.next)
					}
					if !strings.HasPrefix(msg, string(ws.data)) || len(ws.data) > sizeLimit || !wsRejects && string(ws.data) != msg {
						t.Errorf("Chunks keeps %s of %s", q(ws.data), q([]byte(msg)))
					}
				}
			})
		}
	}
}

// replyCodes returns the codes of reply lines.
func replyCodes(lines []string) []string {
	codes := make([]string, len(lines))
	for i, l := range lines {
		codes[i], _, _ = strings.Cut(l, " ")
	}
	return codes
}

package textproto

import (
	"io"
	"testing"

	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// piecesCase turns the control bytes of FuzzReaderPieces into a bufio
// size, a feed cutting the input into the pieces given, and the calls.
// Each byte of ops is one call: its low four bits choose the method
// (dot blocks among them, read whole or in part by a DotReader), the rest
// its argument.
func piecesCase(pieces, ops []byte, size, end byte) (int, feed, []op) {
	f := feed{name: "pieces", pieces: pieces}
	switch end % 6 {
	case 1:
		f.final = errInjected
	case 2:
		f.final, f.withData = errInjected, true
	case 3:
		f.withData = true
	case 4:
		f.onceAt = -1
	case 5:
		f.final = io.ErrUnexpectedEOF
	}
	bufSize := []int{16, 17, 18, 19, 23, 31, 32, 64, 4096}[int(size)%9]
	var seq []op
	for _, b := range ops[:min(len(ops), 12)] {
		kind, arg := opKind(b&15)%numAllOps, int(b>>4)
		switch kind {
		case opReadCodeLine, opReadResponse:
			arg = expectCodes[arg%len(expectCodes)]
		case opDotReader:
			// Read size 0 (io.Copy), 1, 2, 3, 5 or 64; left after one or
			// two Reads, or read to the end.
			arg = []int{0, 1, 2, 3, 5, 64}[arg%6] | arg/6%3<<8
		}
		seq = append(seq, op{kind: kind, arg: arg})
	}
	if len(seq) == 0 {
		seq = []op{{kind: opReadLine}}
	}
	return bufSize, f, seq
}

// FuzzReaderPieces compares every Reader method, the dot blocks
// (ReadDotBytes, DotReader read whole, by Reads of any size, or in part
// and left) with the others, with net/textproto's: the same input, cut
// into the same pieces of 1 to 16 bytes (pieces), through a bufio.Reader
// of the same size, ending in io.EOF, an error of its own or a transient
// error halfway (end). With end/6 odd the Reader has limits the input
// stays within, which must change nothing. See diffRun.
//
//	go test -run '^$' -fuzz FuzzReaderPieces -parallel 1 -fuzztime 2m ./textproto
func FuzzReaderPieces(f *testing.F) {
	tooltest.LimitMinimizing(f, 10000)
	seeds := []string{
		"line\r\n.\r\nafter\r\n",
		"a\r\n..b\r\n.\r\n250 ok\r\n",
		"a\n.\nb\r\n.\r",
		"dot\r\n.x\r\n..\r\n.\r\nKey: v\r\n\r\n",
		"\r.\r\n\r\n.\r\nrest",
		"Key: v\r\n\r\nbody\r\n.\r\n250-a\r\n250 b\r\n",
		"unterminated dot block\r\n..",
		"0123456789abcdef\r\n.\r\n0123456789abcde\r\n.\r\n",
		"0123456789abcdef0123456789abcdef\r\n.\r\n",
	}
	for i, in := range seeds {
		for j, ops := range []string{"\x08", "\x09", "\x19\x00", "\x29\x00\x09", "\x39\x08\x00", "\x09\x06\x0d", "\x49\x59\x00\x07", "\x08\x00\x08\x01"} {
			f.Add([]byte(in), []byte{byte(i * 5), byte(j * 3), 7, 15, 2}, []byte(ops), byte(i+j), byte(j))
		}
	}
	for i, in := range diffInputs {
		if len(in) <= 512 {
			f.Add([]byte(in), []byte{byte(i), 3, 9}, []byte{byte(i) * 17, byte(i) * 29}, byte(i), byte(i/3))
		}
	}
	f.Fuzz(func(t *testing.T, data, pieces, ops []byte, size, end byte) {
		if len(data) > 2048 {
			return
		}
		bufSize, fd, seq := piecesCase(pieces, ops, size, end)
		var lim Limits
		if end/6%2 == 1 {
			lim = Limits{MaxLineBytes: 4096, MaxHeaderBytes: 1 << 20, MaxHeaderFields: 4096, MaxDotBytes: 1 << 20}
		}
		var st diffStats
		if err := diffRun(data, bufSize, fd, seq, lim, &st); err != nil {
			t.Fatalf("bufio size %d, pieces %v, end %d, limits %+v, ops %v:\n%v", bufSize, pieces, end%6, lim, seq, err)
		}
	})
}

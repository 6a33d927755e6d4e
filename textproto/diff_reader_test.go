package textproto

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// diffInputs are the inputs of the table-driven differential tests: line
// endings of every kind, bare CR, NUL, long lines, continuation lines,
// code lines, dot blocks, well-formed and malformed headers, empty input
// and unterminated last lines.
var diffInputs = []string{
	"",
	"\n",
	"\r\n",
	"\r",
	"\r\r\n",
	"\n\r",
	"line1\nline2\n",
	"line1\r\nline2\r\nline3",
	"a\rb\r\nc\rd\n\re\r",
	"nul\x00byte\r\n\x00\r\n\x00",
	"trailing space \t \r\n\t  lead\r\n",
	"line1\nline\n 2\nline3\n",
	"cont\r\n \r\n\t\r\n  x  \r\n\r\nafter\r\n",
	"cont\n  \n",
	"cont\r\n   ",
	"cont\r\n\t",
	" leading space\r\nKey: v\r\n\r\n",
	"\tleading tab " + strings.Repeat("x", 100) + "\r\n\r\n",
	" " + strings.Repeat("y", 79) + "\r\nA: b\r\n\r\n",
	" " + strings.Repeat("y", 80) + "\r\n",
	" " + strings.Repeat("y", 30) + "\r" + strings.Repeat("z", 60) + "\r\n",
	"123 hi\n234 bye\n345 no way\n",
	"220 mx.example.com ESMTP\r\n250-first\r\n250-second\r\n250 last\r\n",
	"250-first\r\nfree text\r\n250-\r\n251 other\r\n250 end\r\n",
	"099 low\r\n12 short\r\n1234x\r\nabc def\r\n+12 plus\r\n-12-minus\r\n",
	"550-a\r\n550-b\r\n550 c\r\n",
	"099-x\r\n099 y\r\n",
	// No line ends a response without a valid code, for net/textproto:
	// after a limit, the rest is discarded up to the end of the input.
	"099-x\r\n099 " + strings.Repeat("y", 30) + "\r\n250 ok\r\n",
	"099-" + strings.Repeat("y", 30) + "\r\n099 z\r\n250 ok\r\n",
	"abc-x\r\nabc " + strings.Repeat("y", 30) + "\r\n250 ok\r\n",
	"000-x\r\n000 y\r\n000 z\r\n000 w\r\n250 ok\r\n",
	"230-\r\n230 \r\n",
	"dotlines\r\n.foo\r\n..bar\n...baz\nquux\r\n\r\n.\r\nanother\n",
	".\n.\r\n..\r\n.x\r\n",
	".\r\r\n.\r\n",
	"My-Key: Value 1\r\nLong-Key: Even\r\n       Longer Value\r\nmy-Key: Value 2\r\n\r\nbody\r\n",
	"Foo: bar\r\nfoo: baz\r\nFOO: qux\r\n\r\n",
	"k: v\nk2:v2\n\n",
	"A: 1\r\nB: 2",
	"A: 1\r\nB: 2\r\n",
	"A: 1\r\nB: 2\r\n\r",
	"Key With Space: v\r\nkey with space: w\r\n\r\n",
	"No-Colon\r\n\r\n",
	": no key\r\n\r\n",
	"Bad(Key): v\r\n\r\n",
	"Bad-Value: a\x00b\r\n\r\n",
	"Bad-Value: a\x7fb\r\n\r\n",
	"Ctl-Value: a\x01b\r\n\r\n",
	"Obs: \x80\xff\xfe\r\n\r\n",
	"Tab:\tv\t\r\n\r\n",
	"Empty:\r\nEmpty2:   \r\n\r\n",
	"Folded: a\r\n b\r\n\tc\r\nNext: d\r\n\r\n",
	"Folded: a\r\n  \r\n\r\n",
	"Fold-End: a\r\n ",
	"Received: from a\r\nReceived: from b\r\nreceived: from c\r\n\r\n",
	"content-type: text/plain\r\nCONTENT-LENGTH: 5\r\nx-custom-header: y\r\nmime-version: 1.0\r\ndkim-signature: v=1\r\n\r\n",
	"Foo-: v\r\n-foo: v\r\nfoo--bar: v\r\n\r\n",
	"A:b\r\n\nB: c\r\n\r\n",
	"A: b\r\n\r\nC: d\r\n\r\n",
	"Spaced : v\r\n\r\n",
	"Key: v\r\n\x00Key: w\r\n\r\n",
	"Key: a\r\nKey:b\rc\r\n\r\n",
	"Key\r\n : v\r\n\r\n",
	strings.Repeat("x", 15),
	strings.Repeat("x", 16),
	strings.Repeat("x", 17),
	strings.Repeat("x", 32),
	strings.Repeat("x", 15) + "\r",
	strings.Repeat("x", 15) + "\r\n",
	strings.Repeat("x", 16) + "\r\n",
	strings.Repeat("x", 31) + "\r\n" + strings.Repeat("y", 16),
	"Long: " + strings.Repeat("v", 26),
	"Long: " + strings.Repeat("v", 26) + "\r\n " + strings.Repeat("w", 15),
	"Long: v\r\n " + strings.Repeat("w", 31),
	"250-" + strings.Repeat("m", 28),
	"250-a\r\n250 " + strings.Repeat("m", 28),
	strings.Repeat("long line ", 500) + "\r\nshort\r\n" + strings.Repeat("z", 4096),
	strings.Repeat("y", 4096),
	strings.Repeat("y", 8192) + "\r\n",
	"Big: " + strings.Repeat("b", 5000) + "\r\n " + strings.Repeat("c", 5000) + "\r\n\r\n",
}

var diffSizes = []int{16, 17, 23, 4096}

// diffSequences are the call sequences run over every input.
func diffSequences() [][]op {
	var seqs [][]op
	for k := opKind(0); k < numOps; k++ {
		if k == opReadCodeLine || k == opReadResponse {
			for _, c := range []int{0, 2, 25, 250} {
				seqs = append(seqs, []op{{kind: k, arg: c}})
			}
			continue
		}
		seqs = append(seqs, []op{{kind: k}})
	}
	seqs = append(seqs,
		[]op{{kind: opReadMIMEHeader}, {kind: opReadLine}},
		[]op{{kind: opReadLine}, {kind: opReadMIMEHeader}},
		[]op{{kind: opReadMIMEHeader}, {kind: opReadDotLines}, {kind: opReadResponse, arg: 2}},
		[]op{{kind: opReadCodeLine, arg: 0}, {kind: opReadContinuedLine}, {kind: opReadLineBytes}},
	)
	// A few seeded random sequences.
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 4; i++ {
		seq := make([]op, 1+rng.IntN(6))
		for j := range seq {
			seq[j] = op{kind: opKind(rng.IntN(int(numOps))), arg: expectCodes[rng.IntN(len(expectCodes))]}
		}
		seqs = append(seqs, seq)
	}
	return seqs
}

func TestDiffReader(t *testing.T) {
	var st diffStats
	seqs := diffSequences()
	for _, in := range diffInputs {
		if len(in) > 512 {
			continue // in TestDiffReaderLong
		}
		for _, seq := range seqs {
			diffAll(t, []byte(in), diffSizes, seq, Limits{}, &st)
		}
	}
	t.Logf("%d calls compared, %d documented deviations", st.calls, st.deviations)
	if st.deviations == 0 {
		t.Error("no input hit the documented deviation: the harness's deviation check is untested")
	}
}

// TestDiffReaderLong runs the long inputs, with fewer bufio sizes and
// sequences than TestDiffReader: they take many more calls each.
func TestDiffReaderLong(t *testing.T) {
	var st diffStats
	seqs := diffSequences()
	for _, in := range diffInputs {
		if len(in) <= 512 {
			continue
		}
		for i, seq := range seqs {
			if i%3 != 0 {
				continue
			}
			diffAll(t, []byte(in), []int{16, 4096}, seq, Limits{}, &st)
		}
	}
	t.Logf("%d calls compared, %d documented deviations", st.calls, st.deviations)
}

// TestDiffReaderWithLimits shows that limits the input stays within change
// nothing: with them set, every result is still net/textproto's.
func TestDiffReaderWithLimits(t *testing.T) {
	lim := Limits{MaxLineBytes: 1 << 20, MaxHeaderBytes: 1 << 20, MaxHeaderFields: 1 << 20, MaxDotBytes: 1 << 20}
	var st diffStats
	seqs := diffSequences()
	for _, in := range diffInputs {
		if len(in) > 512 {
			continue
		}
		for _, seq := range seqs[len(seqs)-8:] { // the mixed sequences
			diffAll(t, []byte(in), []int{16, 4096}, seq, lim, &st)
		}
	}
	t.Logf("%d calls compared, %d documented deviations", st.calls, st.deviations)
}

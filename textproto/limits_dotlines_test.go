package textproto

import (
	"bufio"
	"errors"
	"io"
	"math/rand/v2"
	stdtp "net/textproto"
	"slices"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// TestLimitDotLinesLongLine: with MaxDotBytes and no MaxLineBytes,
// ReadDotLines holds no more of a line than the budget has left. It used
// to read each line whole before charging it, so one line of 64 MiB in a
// block under a 64 KiB limit took 128 MiB.
func TestLimitDotLinesLongLine(t *testing.T) {
	const stream = 64 << 20
	in := io.MultiReader(strings.NewReader("a\r\n"),
		&endless{c: 'x', n: stream, tail: []byte("\r\n.." + strings.Repeat("y", 1<<20) + "\r\n.\r\nNEXT\r\n")})
	r := NewReader(bufio.NewReader(in))
	r.SetLimits(Limits{MaxDotBytes: 64 << 10})
	var lines []string
	var err error
	grew := heapGrowth(func() { lines, err = r.ReadDotLines() })
	if !errors.Is(err, dot.ErrTooLarge) || !slices.Equal(lines, []string{"a"}) {
		t.Fatalf("ReadDotLines: %q, %v; want [a] and dot.ErrTooLarge", lines, err)
	}
	if grew > 1<<20 {
		t.Errorf("a block with a %d-byte line allocated %d bytes", stream, grew)
	}
	if l, err := r.ReadLine(); l != "NEXT" || err != nil {
		t.Errorf("after the block: %q, %v", l, err)
	}
}

// TestLimitDotLinesBudget checks ReadDotLines with MaxDotBytes alone
// against the rule applied to net/textproto's lines: lines are kept while
// they fit the budget, each costing its length plus a string header.
func TestLimitDotLinesBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(8) {
			if rng.IntN(3) == 0 {
				b.WriteString("..")
			}
			b.WriteString(strings.Repeat("x", rng.IntN(60)))
			b.WriteString([]string{"\r\n", "\n"}[rng.IntN(2)])
		}
		b.WriteString(".\r\nNEXT\r\n")
		in := b.String()
		all, err := stdtp.NewReader(bufio.NewReader(strings.NewReader(in))).ReadDotLines()
		if err != nil {
			t.Fatal(err)
		}
		max := int64(1 + rng.IntN(200))
		var want []string
		var wantErr error
		size := int64(0)
		for _, l := range all {
			if size += dotLineCost(len(l)); size > max {
				wantErr = dot.ErrTooLarge
				break
			}
			want = append(want, l)
		}
		chunk := 1 + rng.IntN(20)
		r := NewReader(bufio.NewReaderSize(&chunkReader{data: []byte(in), n: chunk}, 16))
		r.SetLimits(Limits{MaxDotBytes: max})
		got, err := r.ReadDotLines()
		if err != wantErr || !slices.Equal(got, want) {
			t.Fatalf("input %q, MaxDotBytes %d: %q, %v; want %q, %v", in, max, got, err, want, wantErr)
		}
		if l, err := r.ReadLine(); l != "NEXT" || err != nil {
			t.Fatalf("input %q, MaxDotBytes %d: after the block %q, %v", in, max, l, err)
		}
	}
}

// A block that is too large and has a line too long fails with an error
// matching both, too large first (a server answers 552), whichever comes
// first in the block: ReadDotLines reported only the first it met.
func TestLimitDotLinesBoth(t *testing.T) {
	long := strings.Repeat("x", 40) + "\r\n"
	many := strings.Repeat("a line of data\r\n", 20)
	for _, in := range []string{long + many, many + long} {
		r := NewReader(bufio.NewReader(strings.NewReader(in + ".\r\nNEXT\r\n")))
		r.SetLimits(Limits{MaxLineBytes: 30, MaxDotBytes: 100})
		_, err := r.ReadDotLines()
		if !errors.Is(err, dot.ErrTooLarge) || !errors.Is(err, ErrLineTooLong) || !strings.HasPrefix(err.Error(), dot.ErrTooLarge.Error()) {
			t.Errorf("%.20q...: %v; want too large, then line too long", in, err)
		}
		if l, err := r.ReadLine(); l != "NEXT" || err != nil {
			t.Errorf("after the block: %q, %v", l, err)
		}
	}
}

package textproto

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// TestDotReaderWith checks the per-block options: each limit from the
// options, from the Reader's Limits when zero, or none when negative; the
// bare line ending policies; Size; and that the next command reads
// correctly after every outcome.
func TestDotReaderWith(t *testing.T) {
	const block = "line one\r\n..two\r\nthe longest line\r\n.\r\nNEXT\r\n"
	const plain = "line one\n.two\nthe longest line\n" // 31 bytes; the longest line is 16 on the wire
	cases := []struct {
		name string
		lim  Limits
		opt  DotOptions
		in   string
		want string
		err  []error // all must match
	}{
		{"no limits", Limits{}, DotOptions{}, block, plain, nil},
		{"MaxBytes", Limits{}, DotOptions{MaxBytes: 30}, block, plain[:30], []error{dot.ErrTooLarge}},
		{"MaxBytes exact", Limits{}, DotOptions{MaxBytes: 31}, block, plain, nil},
		{"Limits.MaxDotBytes", Limits{MaxDotBytes: 30}, DotOptions{}, block, plain[:30], []error{dot.ErrTooLarge}},
		{"MaxBytes over Limits", Limits{MaxDotBytes: 30}, DotOptions{MaxBytes: 31}, block, plain, nil},
		{"no MaxBytes over Limits", Limits{MaxDotBytes: 3}, DotOptions{MaxBytes: -1}, block, plain, nil},
		{"MaxLineBytes", Limits{}, DotOptions{MaxLineBytes: 15}, block, plain[:14+15], []error{dot.ErrLineTooLong}},
		{"MaxLineBytes exact", Limits{}, DotOptions{MaxLineBytes: 16}, block, plain, nil},
		{"Limits.MaxLineBytes", Limits{MaxLineBytes: 15}, DotOptions{}, block, plain[:14+15], []error{dot.ErrLineTooLong}},
		{"no MaxLineBytes over Limits", Limits{MaxLineBytes: 4}, DotOptions{MaxLineBytes: -1}, block, plain, nil},
		{"both", Limits{}, DotOptions{MaxBytes: 10, MaxLineBytes: 15}, block, plain[:10], []error{dot.ErrTooLarge, dot.ErrLineTooLong}},
		{"Strict bare LF", Limits{}, DotOptions{Mode: dot.Strict}, "a\nb\r\n.\r\nNEXT\r\n", "a", []error{dot.ErrBareLF}},
		{"Strict BareKeep", Limits{}, DotOptions{Mode: dot.Strict, Bare: dot.BareKeep}, "a\nb\r\n.\r\nNEXT\r\n", "a\nb\n", nil},
		{"Raw BareNormalize", Limits{}, DotOptions{Mode: dot.Raw, Bare: dot.BareNormalize}, "a\nb\r\n.\r\nNEXT\r\n", "a\r\nb\r\n", nil},
		{"Strict bare LF and too large", Limits{}, DotOptions{Mode: dot.Strict, MaxBytes: 1}, "ab\ncd\r\n.\r\nNEXT\r\n", "a", []error{dot.ErrTooLarge, dot.ErrBareLF}},
	}
	for _, c := range cases {
		for _, size := range []int{16, 4096} {
			for _, writeTo := range []bool{false, true} {
				r := NewReader(bufio.NewReaderSize(strings.NewReader(c.in), size))
				r.SetLimits(c.lim)
				d := r.DotReaderWith(c.opt)
				var got []byte
				var err error
				if writeTo {
					var sb strings.Builder
					_, err = d.WriteTo(&sb)
					got = []byte(sb.String())
				} else {
					got, err = io.ReadAll(d)
				}
				where := c.name
				if writeTo {
					where += "/WriteTo"
				}
				if string(got) != c.want || d.Size() != int64(len(c.want)) {
					t.Errorf("%s, size %d: %q (Size %d); want %q", where, size, got, d.Size(), c.want)
				}
				if (err == nil) != (len(c.err) == 0) {
					t.Errorf("%s, size %d: %v; want %v", where, size, err, c.err)
				}
				for _, e := range c.err {
					if !errors.Is(err, e) {
						t.Errorf("%s, size %d: %v does not match %v", where, size, err, e)
					}
				}
				if l, err := r.ReadLine(); l != "NEXT" || err != nil {
					t.Errorf("%s, size %d: after the block: %q, %v", where, size, l, err)
				}
			}
		}
	}
}

// TestDotReaderWithAllocs checks that DotReaderWith, like DotReader,
// allocates once per block and its WriteTo nothing.
func TestDotReaderWithAllocs(t *testing.T) {
	in := strings.Repeat("some line of a block\r\n", 1000) + ".\r\n"
	src := strings.NewReader(in)
	r := NewReader(bufio.NewReader(src))
	n := testing.AllocsPerRun(20, func() {
		src.Reset(in)
		r.R.Reset(src)
		d := r.DotReaderWith(DotOptions{Mode: dot.Strict, MaxBytes: 1 << 20, MaxLineBytes: 998})
		if _, err := d.WriteTo(io.Discard); err != nil {
			t.Fatal(err)
		}
	})
	if n > 1 {
		t.Errorf("%v allocations per block; want 1", n)
	}
}

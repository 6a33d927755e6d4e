package textproto

import (
	"bufio"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/dot"
)

// lineStream yields size bytes of pattern repeated, then tail, without
// holding them: a peer that sends a huge block.
type lineStream struct {
	pattern string
	size    int64 // bytes of pattern to send
	tail    string
	n       int64 // bytes yielded
}

func (s *lineStream) Read(b []byte) (int, error) {
	total := s.size + int64(len(s.tail))
	if s.n >= total {
		return 0, io.EOF
	}
	k := 0
	for k < len(b) && s.n < total {
		if s.n < s.size {
			m := copy(b[k:], s.pattern[s.n%int64(len(s.pattern)):])
			m = int(min(int64(m), s.size-s.n))
			k += m
			s.n += int64(m)
		} else {
			m := copy(b[k:], s.tail[s.n-s.size:])
			k += m
			s.n += int64(m)
		}
	}
	return k, nil
}

// consumed is how much of s a bufio.Reader on it has handed on.
func consumed(s *lineStream, br *bufio.Reader) int64 { return s.n - int64(br.Buffered()) }

// readBlock reads one block with d, by WriteTo or by Reads of size rs.
func readBlock(d *DotReader, rs int) error {
	if rs == 0 {
		_, err := d.WriteTo(io.Discard)
		return err
	}
	b := make([]byte, rs)
	for {
		_, err := d.Read(b)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// TestDotDiscardBound: a block that breaks a limit and does not end is
// given up exactly MaxDiscardBytes bytes after the byte where it broke it.
func TestDotDiscardBound(t *testing.T) {
	const gib = 1 << 30
	for _, mode := range []dot.Mode{dot.Compat, dot.Strict, dot.Raw} {
		for _, bufSize := range []int{16, 4096, 1 << 16} {
			for _, rs := range []int{0, 1, 7, 4096} {
				for _, bound := range []int64{1, 1000, 1 << 20} {
					src := &lineStream{pattern: "x\r\n", size: gib}
					br := bufio.NewReaderSize(src, bufSize)
					r := NewReader(br)
					d := r.DotReaderWith(DotOptions{Mode: mode, MaxBytes: 10, MaxDiscardBytes: bound})
					err := readBlock(d, rs)
					if !errors.Is(err, ErrNotInStep) || !errors.Is(err, dot.ErrTooLarge) {
						t.Fatalf("%v buf %d read %d bound %d: %v", mode, bufSize, rs, bound, err)
					}
					// Ten bytes of output are five lines "x\n": the byte
					// after them breaks the limit. Raw writes "x\r\n"
					// three times and one "x", and its "\r\n" goes whole:
					// the LF of the fourth line breaks it.
					stop := int64(16)
					if mode == dot.Raw {
						stop = 12
					}
					if got, want := consumed(src, br), stop+bound; got != want {
						t.Errorf("%v buf %d read %d bound %d: consumed %d, want %d", mode, bufSize, rs, bound, got, want)
					}
					// The reader and the Reader stay failed, and read nothing.
					before := consumed(src, br)
					if err2 := readBlock(d, rs); err2 != err {
						t.Errorf("read again: %v", err2)
					}
					if _, err2 := r.ReadLine(); err2 != err {
						t.Errorf("ReadLine after giving up: %v", err2)
					}
					if _, err2 := io.ReadAll(r.DotReader()); err2 != err {
						t.Errorf("next DotReader after giving up: %v", err2)
					}
					if consumed(src, br) != before {
						t.Errorf("read on after giving up")
					}
				}
			}
		}
	}
}

// TestDotDiscardKinds: every data error that stops output starts the
// count, and Limits.MaxDiscardBytes is inherited.
func TestDotDiscardKinds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		head  string
		opt   DotOptions
		lim   Limits
		match error
	}{
		{"line", "abcdefgh\r\n", DotOptions{MaxLineBytes: 4}, Limits{MaxDiscardBytes: 100}, dot.ErrLineTooLong},
		{"bareLF", "ab\ncd\r\n", DotOptions{Mode: dot.Strict}, Limits{MaxDiscardBytes: 100}, dot.ErrBareLF},
		{"size", "abcdefgh\r\n", DotOptions{MaxDiscardBytes: 100}, Limits{MaxDotBytes: 4}, dot.ErrTooLarge},
	} {
		src := &lineStream{pattern: tc.head + strings.Repeat("x\r\n", 1000), size: 1 << 30}
		br := bufio.NewReader(src)
		r := NewReader(br)
		r.SetLimits(tc.lim)
		err := readBlock(r.DotReaderWith(tc.opt), 0)
		if !errors.Is(err, ErrNotInStep) || !errors.Is(err, tc.match) {
			t.Errorf("%s: %v", tc.name, err)
		}
		// Line and size break their rule at the fifth byte ("abcde", the
		// fifth output byte); an LF after "b" is bare as soon as seen.
		stop := int64(5)
		if tc.name == "bareLF" {
			stop = 3
		}
		if got := consumed(src, br); got != stop+100 {
			t.Errorf("%s: consumed %d, want %d", tc.name, got, stop+100)
		}
	}
}

// TestDotDiscardInStep: a block that ends within the bound, or with no
// bound, is read to its end line as before, and the Reader reads on.
func TestDotDiscardInStep(t *testing.T) {
	const size = 3 << 20 // of "x\r\n" lines
	tail := ".\r\nQUIT\r\n"
	for _, tc := range []struct {
		name  string
		opt   DotOptions
		lim   Limits
		given bool // given up
	}{
		{"none", DotOptions{MaxBytes: 10}, Limits{}, false},
		{"negative", DotOptions{MaxBytes: 10, MaxDiscardBytes: -1}, Limits{MaxDiscardBytes: 1}, false},
		// The limit breaks at byte 16; the end line ends at size+3.
		{"exact", DotOptions{MaxBytes: 10, MaxDiscardBytes: size + 3 - 16}, Limits{}, false},
		{"inherited", DotOptions{MaxBytes: 10}, Limits{MaxDiscardBytes: size + 3 - 16}, false},
		{"short", DotOptions{MaxBytes: 10, MaxDiscardBytes: size + 3 - 16 - 1}, Limits{}, true},
		{"clean", DotOptions{MaxDiscardBytes: 1}, Limits{}, false},
	} {
		for _, rs := range []int{0, 5} {
			src := &lineStream{pattern: "x\r\n", size: size, tail: tail}
			br := bufio.NewReader(src)
			r := NewReader(br)
			r.SetLimits(tc.lim)
			err := readBlock(r.DotReaderWith(tc.opt), rs)
			if tc.given {
				if !errors.Is(err, ErrNotInStep) || !errors.Is(err, dot.ErrTooLarge) {
					t.Errorf("%s: %v", tc.name, err)
				}
				if got, want := consumed(src, br), int64(size+3-1); got != want {
					t.Errorf("%s: consumed %d, want %d", tc.name, got, want)
				}
				continue
			}
			if tc.name == "clean" {
				if err != nil {
					t.Errorf("%s: %v", tc.name, err)
				}
			} else if err != dot.ErrTooLarge {
				t.Errorf("%s: %v, want dot.ErrTooLarge alone", tc.name, err)
			}
			if got, want := consumed(src, br), int64(size+3); got != want {
				t.Errorf("%s: consumed %d, want %d", tc.name, got, want)
			}
			if line, err := r.ReadLine(); line != "QUIT" || err != nil {
				t.Errorf("%s: next line %q, %v", tc.name, line, err)
			}
		}
	}
}

// TestDotDiscardAllocs: the bound adds no allocation per window.
func TestDotDiscardAllocs(t *testing.T) {
	allocs := func(size int64) float64 {
		return testing.AllocsPerRun(5, func() {
			src := &lineStream{pattern: "x\r\n", size: size, tail: ".\r\n"}
			r := NewReader(bufio.NewReader(src))
			r.DotReaderWith(DotOptions{MaxBytes: 10, MaxDiscardBytes: 1 << 40}).WriteTo(io.Discard)
		})
	}
	if small, large := allocs(3<<10), allocs(3<<20); large > small {
		t.Errorf("%v allocations for 3 KiB, %v for 3 MiB", small, large)
	}
}

// TestDotDiscardDrain: a block left unfinished is drained by the next
// call under the same bound, and that call fails when it gives up.
func TestDotDiscardDrain(t *testing.T) {
	src := &lineStream{pattern: "x\r\n", size: 1 << 30}
	br := bufio.NewReader(src)
	r := NewReader(br)
	r.SetLimits(Limits{MaxDotBytes: 10, MaxDiscardBytes: 1000})
	d := r.DotReader()
	if _, err := io.ReadFull(d, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	line, err := r.ReadLine()
	if line != "" || !errors.Is(err, ErrNotInStep) || !errors.Is(err, dot.ErrTooLarge) {
		t.Fatalf("ReadLine after an unfinished block: %q, %v", line, err)
	}
	if got := consumed(src, br); got != 16+1000 {
		t.Errorf("consumed %d, want %d", got, 16+1000)
	}
	if _, err2 := d.Read(make([]byte, 1)); err2 != err {
		t.Errorf("the block's reader: %v", err2)
	}
}

// TestDotDiscardSame: on random blocks, a reader under a bound returns
// what one without it returns, unless it gives up (only on a block that
// fails without it too), and then it has consumed no more than without it.
func TestDotDiscardSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ab.\r\n\r\n"
	for i := 0; i < 3000; i++ {
		b := make([]byte, rng.IntN(200))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		in := string(b) + "\r\n.\r\nNEXT\r\n"
		opt := DotOptions{
			Mode:         dot.Mode(rng.IntN(3)),
			MaxBytes:     int64(rng.IntN(40)),
			MaxLineBytes: rng.IntN(20),
		}
		rs := rng.IntN(8)
		run := func(bound int64) (string, error, int, string) {
			br := bufio.NewReaderSize(strings.NewReader(in), 16)
			r := NewReader(br)
			o := opt
			o.MaxDiscardBytes = bound
			d := r.DotReaderWith(o)
			var out strings.Builder
			var err error
			if rs == 0 {
				_, err = d.WriteTo(&out)
			} else {
				buf := make([]byte, rs)
				for {
					n, rerr := d.Read(buf)
					out.Write(buf[:n])
					if rerr != nil {
						if rerr != io.EOF {
							err = rerr
						}
						break
					}
				}
			}
			rest, _ := io.ReadAll(br)
			return out.String(), err, len(in) - len(rest), string(rest)
		}
		wantOut, wantErr, wantUsed, _ := run(0)
		for _, bound := range []int64{1, 3, 10, int64(len(in))} {
			out, err, used, _ := run(bound)
			if errors.Is(err, ErrNotInStep) {
				if bound == int64(len(in)) || wantErr == nil || used > wantUsed || !strings.HasPrefix(wantOut, out) {
					t.Fatalf("%q %+v bound %d: gave up: %q %v used %d; unbounded %q %v used %d", in, opt, bound, out, err, used, wantOut, wantErr, wantUsed)
				}
				continue
			}
			if out != wantOut || !sameErr(err, wantErr) || used != wantUsed {
				t.Fatalf("%q %+v bound %d: %q %v used %d; unbounded %q %v used %d", in, opt, bound, out, err, used, wantOut, wantErr, wantUsed)
			}
		}
	}
}

func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}

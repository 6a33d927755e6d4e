package smtpsink

import (
	"math"
	"strings"
	"testing"
)

// The scanner cuts the same lines out of input however it is split, each
// only once its line end has come, skips a line too long to its end, and
// never holds more than the limit of a line.
func TestLineScanner(t *testing.T) {
	const max = 8
	input := "EHLO c\r\nNOOP\n\r\n" + "12345678\r\n" + "123456789\r\n" + strings.Repeat("x", 100) + "\r\nQUIT\r\nQU"
	want := []string{"EHLO c", "NOOP", "", "12345678", "!", "!", "QUIT"} // "!": too long
	for step := 1; step <= len(input); step++ {
		l := lineScanner{max: max}
		var got []string
		for off := 0; off < len(input); off += step {
			p := []byte(input[off:min(off+step, len(input))])
			for len(p) > 0 {
				n, line, done, long := l.scan(p)
				if n == 0 {
					t.Fatalf("step %d: no progress", step)
				}
				p = p[n:]
				if cap(l.buf) > 2*(max+1) {
					t.Fatalf("step %d: holds %d bytes", step, cap(l.buf))
				}
				switch {
				case !done:
				case long:
					got = append(got, "!")
				default:
					got = append(got, string(line))
				}
			}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("step %d: got %q, want %q", step, got, want)
		}
		if !l.pending() {
			t.Errorf("step %d: the cut-off line \"QU\" is not pending", step)
		}
	}
}

// A limit as large as an int holds (Config.MaxCommandBytes math.MaxInt,
// for no limit in effect) takes every line, however the input is split:
// the bound with the CR a LF may follow overflowed, and each line that
// came in two pieces was reported too long.
func TestLineScannerMaxInt(t *testing.T) {
	input := "EHLO client.example\r\nMAIL FROM:<a@b>\r\n"
	for step := 1; step <= len(input); step++ {
		l := lineScanner{max: math.MaxInt}
		var got []string
		for off := 0; off < len(input); off += step {
			p := []byte(input[off:min(off+step, len(input))])
			for len(p) > 0 {
				n, line, done, long := l.scan(p)
				p = p[n:]
				switch {
				case !done:
				case long:
					got = append(got, "!")
				default:
					got = append(got, string(line))
				}
			}
		}
		if want := "EHLO client.example|MAIL FROM:<a@b>"; strings.Join(got, "|") != want {
			t.Fatalf("step %d: got %q, want %q", step, got, want)
		}
	}
}

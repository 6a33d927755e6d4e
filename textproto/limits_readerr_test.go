package textproto

import (
	"bufio"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// An errAtReader delivers data in Reads of at most chunk bytes (0: as many
// as fit) and fails once with errInjected when at bytes have been
// delivered: with the last of them if withData, else in a Read of its own.
// Reading then goes on. It counts the Reads made after the error.
type errAtReader struct {
	data      []byte
	at, chunk int
	withData  bool
	delivered int
	fired     bool
	after     int // Reads after the error
}

func (s *errAtReader) Read(p []byte) (int, error) {
	if s.fired {
		s.after++
	}
	if !s.fired && s.delivered == s.at {
		s.fired = true
		return 0, errInjected
	}
	n := len(p)
	if s.chunk > 0 && n > s.chunk {
		n = s.chunk
	}
	if !s.fired && s.delivered+n > s.at {
		n = s.at - s.delivered
	}
	n = copy(p[:n], s.data[s.delivered:])
	s.delivered += n
	if n == 0 {
		return 0, errEOFForTest
	}
	if !s.fired && s.withData && s.delivered == s.at {
		s.fired = true
		return n, errInjected
	}
	return n, nil
}

var errEOFForTest = errors.New("end of test input") // not io.EOF: not converted by ReadDotLines

// TestLimitReadErrorNotLost checks that a read error that comes with, or
// right after, the data showing a line to be over a limit is not lost:
// every method returns it, with the limit error or from the next call,
// before it reads anything more from the source. The error is injected
// at every offset from the first byte past the limit to the end of the
// long line, with the data or in a Read of its own, over several bufio
// sizes and Read sizes. (An error before the limit splits the line where
// net/textproto splits it, into a line within the limit and a new one.)
func TestLimitReadErrorNotLost(t *testing.T) {
	const lim = 20
	type tcase struct {
		ops    []op
		prefix string // before the long line
		head   string // starts the long line
		tail   string // after it
		dot    bool   // MaxDotBytes instead of MaxLineBytes
		header bool   // MaxHeaderBytes instead of MaxLineBytes
		slack  int    // the line is over the limit past lim+slack bytes
	}
	lineOps := []op{{kind: opReadLine}, {kind: opReadLineBytes}, {kind: opReadContinuedLine},
		{kind: opReadContinuedLineBytes}, {kind: opReadCodeLine, arg: 250}, {kind: opReadResponse, arg: 250}}
	cases := []tcase{
		{ops: lineOps, head: "250 ", tail: "250 next\r\n"},
		{ops: []op{{kind: opReadResponse}}, prefix: "250-first\r\n", head: "250-", tail: "250 last\r\n250 next\r\n"},
		{ops: []op{{kind: opReadContinuedLine}, {kind: opReadContinuedLineBytes}}, head: "a\r\n ", tail: " more\r\nnext\r\n"},
		{ops: []op{{kind: opReadMIMEHeader}}, head: "A: ", tail: "B: c\r\n\r\nC: d\r\n\r\n"},
		{ops: []op{{kind: opReadMIMEHeader}}, prefix: "A: b\r\n", head: "B: c\r\n ", tail: "\r\n\r\nC: d\r\n\r\n"},
		{ops: []op{{kind: opReadDotLines}}, prefix: "a\r\n", head: "b", tail: "c\r\n.\r\nd\r\n.\r\n"},
		{ops: []op{{kind: opReadDotLines}}, head: "b", tail: ".\r\nd\r\n.\r\n", dot: true},
		{ops: []op{{kind: opReadMIMEHeader}}, head: "A: ", tail: "B: c\r\n\r\nC: d\r\n\r\n", header: true},
		// ReadResponse stops a line at MaxHeaderBytes + 7 bytes.
		{ops: []op{{kind: opReadResponse}}, head: "250 ", tail: "250 next\r\n", header: true, slack: 7},
	}
	checked := 0
	for _, tc := range cases {
		for _, o := range tc.ops {
			for _, extra := range []int{1, 2, 5, 17, 40} {
				// The line is over the limit once over+1 of its bytes
				// have come: MaxLineBytes, MaxHeaderBytes (counted from
				// the header's start) and the MaxDotBytes budget
				// ReadDotLines gives a line (dotCap) alike.
				over := lim + tc.slack
				long := tc.head + strings.Repeat("x", over-len(tc.head)+extra) + "\r\n"
				input := tc.prefix + long + tc.tail
				start := len(tc.prefix)
				for at := start + over + 1; at <= start+len(long); at++ {
					for _, size := range []int{16, 19, 64, 4096} {
						for _, chunk := range []int{0, 1, 7} {
							for _, withData := range []bool{false, true} {
								src := &errAtReader{data: []byte(input), at: at, chunk: chunk, withData: withData}
								r := NewReader(bufio.NewReaderSize(src, size))
								switch {
								case tc.dot:
									r.SetLimits(Limits{MaxDotBytes: lim})
								case tc.header:
									r.SetLimits(Limits{MaxHeaderBytes: lim})
								default:
									r.SetLimits(Limits{MaxLineBytes: lim})
								}
								where := fmt.Sprintf("%v on %q, error at %d (with data %v), bufio %d, reads of %d", o, input, at, withData, size, chunk)
								if err := checkErrorNotLost(r, o, src); err != nil {
									t.Fatalf("%s: %v", where, err)
								}
								checked++
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d cases", checked)
}

// checkErrorNotLost runs o on r until the source has failed with
// errInjected and a call has returned it; no Read may come after the
// error before that.
func checkErrorNotLost(r *Reader, o op, src *errAtReader) error {
	var log []string
	for i := 0; i < 20; i++ {
		out := applyOurs(r, o)
		log = append(log, fmt.Sprint(out.Err))
		if src.after > 0 {
			return fmt.Errorf("read on past the read error before any call returned it; errors returned: %q", log)
		}
		if errors.Is(out.Err, errInjected) {
			return nil
		}
	}
	return fmt.Errorf("the read error never came; errors returned: %q", log)
}

// TestLimitReadErrorEndsSkippedLine checks that a read error ends the
// over-long line it cuts short, wherever it comes: with the data that shows
// the line to be over the limit (the call returns the limit error and the
// next call the read error), or later, while the next call discards the
// rest of the line (that call returns it). Either way the input after the
// error starts a new line, as it does without limits, and the rest of a
// header block or response is still discarded; so the calls after the
// read error return the same whatever the bufio size and Read sizes.
// Discarding used to go on after the error, to the next "\n", when the
// error came while it discarded, and took that input for the rest of the
// long line.
func TestLimitReadErrorEndsSkippedLine(t *testing.T) {
	const lim = 20
	type tcase struct {
		o            op
		prefix, head string // before the long line; starting it
		tail         string // after it
		lim          Limits
		slack        int // the line is over the limit past lim+slack bytes
	}
	line := Limits{MaxLineBytes: lim}
	cases := []tcase{
		{o: op{kind: opReadLine}, head: "a", tail: "yy\r\nnext\r\n", lim: line},
		{o: op{kind: opReadLineBytes}, head: "a", tail: "yy\r\nnext\r\n", lim: line},
		{o: op{kind: opReadCodeLine, arg: 250}, head: "250 ", tail: "250 next\r\n", lim: line},
		{o: op{kind: opReadContinuedLine}, head: "a\r\n ", tail: " more\r\nnext\r\n", lim: line},
		{o: op{kind: opReadContinuedLineBytes}, head: "a", tail: "yy\r\n z\r\nnext\r\n", lim: line},
		{o: op{kind: opReadResponse, arg: 250}, prefix: "250-first\r\n", head: "250-", tail: "250 last\r\n250 next\r\n", lim: line},
		{o: op{kind: opReadResponse, arg: 250}, head: "250 ", tail: "250 next\r\n", lim: Limits{MaxHeaderBytes: lim}, slack: 7},
		{o: op{kind: opReadMIMEHeader}, prefix: "A: b\r\n", head: "B: ", tail: "C: d\r\n\r\nE: f\r\n\r\n", lim: line},
		{o: op{kind: opReadMIMEHeader}, head: "B: ", tail: "C: d\r\n\r\nE: f\r\n\r\n", lim: Limits{MaxHeaderBytes: lim}},
		{o: op{kind: opReadDotLines}, prefix: "a\r\n", head: "b", tail: "c\r\n.\r\nd\r\n.\r\n", lim: line},
		{o: op{kind: opReadDotLines}, head: "b", tail: ".\r\nd\r\n.\r\n", lim: Limits{MaxDotBytes: lim}},
	}
	checked := 0
	for _, tc := range cases {
		for _, extra := range []int{1, 5, 40} {
			over := lim + tc.slack
			long := tc.head + strings.Repeat("x", over-len(tc.head)+extra) + "\r\n"
			input := tc.prefix + long + tc.tail
			start := len(tc.prefix)
			for at := start + over + 1; at <= start+len(long); at++ {
				var want []string // the first transcript
				for _, size := range []int{4096, 16, 19, 64} {
					for _, chunk := range []int{0, 1, 7} {
						for _, withData := range []bool{false, true} {
							src := &errAtReader{data: []byte(input), at: at, chunk: chunk, withData: withData}
							r := NewReader(bufio.NewReaderSize(src, size))
							r.SetLimits(tc.lim)
							where := fmt.Sprintf("%v on %q, %+v, error at %d (with data %v), bufio %d, reads of %d",
								tc.o, input, tc.lim, at, withData, size, chunk)
							got, err := afterReadError(r, tc.o)
							if err != nil {
								t.Fatalf("%s: %v", where, err)
							}
							if want == nil {
								want = got
								continue
							}
							if !slices.Equal(got, want) {
								t.Fatalf("%s: after the read error\n got  %q\n want %q (bufio 4096, whole reads, error in a Read of its own)", where, got, want)
							}
							checked++
						}
					}
				}
			}
		}
	}
	t.Logf("%d cases", checked)
}

// afterReadError runs o on r until a call returns errInjected, then on to
// the end of the input, and returns what the calls after that one
// returned.
func afterReadError(r *Reader, o op) ([]string, error) {
	i := 0
	for ; i < 20; i++ {
		if errors.Is(applyOurs(r, o).Err, errInjected) {
			break
		}
	}
	if i == 20 {
		return nil, errors.New("the read error never came")
	}
	var log []string
	for range 20 {
		out := applyOurs(r, o)
		log = append(log, out.String())
		if out.Err == errEOFForTest {
			return log, nil
		}
	}
	return nil, fmt.Errorf("the input never ended: %q", log)
}

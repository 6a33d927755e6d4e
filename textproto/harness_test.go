package textproto

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	stdtp "net/textproto"
	"reflect"
	"slices"
	"testing"
	"testing/iotest"

	"github.com/wirespeed/wirespeed/dot"
)

// The differential harness drives a net/textproto Reader and ours with the
// same calls over the same input, fed the same way, and compares every
// result, every error and how much of the input each call consumed.

type opKind uint8

const (
	opReadLine opKind = iota
	opReadLineBytes
	opReadContinuedLine
	opReadContinuedLineBytes
	opReadCodeLine
	opReadResponse
	opReadMIMEHeader
	opReadDotLines
	numOps // the ops of FuzzReader and the table tests
)

// The dot block ops, which FuzzReaderPieces adds to the others.
const (
	opReadDotBytes = numOps + iota
	// opDotReader reads a block with DotReader: arg%256 is the size of
	// each Read (0: io.Copy, our WriterTo), arg>>8 (if not 0) how many
	// Reads are made before the reader is left, part read.
	opDotReader
	numAllOps
)

// An op is one Reader method call; arg is the expectCode of ReadCodeLine
// and ReadResponse.
type op struct {
	kind opKind
	arg  int
}

func (o op) String() string {
	names := [...]string{"ReadLine", "ReadLineBytes", "ReadContinuedLine", "ReadContinuedLineBytes",
		"ReadCodeLine", "ReadResponse", "ReadMIMEHeader", "ReadDotLines", "ReadDotBytes", "DotReader"}
	switch o.kind {
	case opReadCodeLine, opReadResponse:
		return fmt.Sprintf("%s(%d)", names[o.kind], o.arg)
	case opDotReader:
		return fmt.Sprintf("%s(read %d, reads %d)", names[o.kind], o.arg%256, o.arg>>8)
	}
	return names[o.kind]
}

// expectCodes are the expectCode arguments the harness uses.
var expectCodes = []int{0, 2, 25, 250, 3, 220, -1, 1000}

// An outcome is everything a call returned.
type outcome struct {
	S     string
	B     []byte
	BNil  bool
	Code  int
	Lines []string
	H     map[string][]string
	Err   error
}

func (o outcome) String() string {
	return fmt.Sprintf("{S:%q B:%q nil:%v Code:%d Lines:%q H:%q Err:%#v(%v)}", o.S, o.B, o.BNil, o.Code, o.Lines, o.H, o.Err, o.Err)
}

// stdErr maps net/textproto's unexported "message too large" error onto
// ours, so that equal errors compare equal. (Error and ProtocolError are
// the same types in both packages.)
func stdErr(err error) error {
	if err != nil && err.Error() == errMessageTooLarge.Error() && reflect.TypeOf(err) == reflect.TypeOf(errMessageTooLarge) {
		return errMessageTooLarge
	}
	return err
}

func errEqual(a, b error) bool {
	if ea, ok := a.(*Error); ok {
		eb, ok := b.(*Error)
		return ok && *ea == *eb
	}
	return a == b
}

func (o outcome) equal(p outcome) bool {
	return o.S == p.S && bytes.Equal(o.B, p.B) && o.BNil == p.BNil && o.Code == p.Code &&
		reflect.DeepEqual(o.Lines, p.Lines) && reflect.DeepEqual(o.H, p.H) && errEqual(o.Err, p.Err)
}

func applyStd(r *stdtp.Reader, o op) (out outcome) {
	switch o.kind {
	case opReadLine:
		out.S, out.Err = r.ReadLine()
	case opReadLineBytes:
		out.B, out.Err = r.ReadLineBytes()
		out.BNil = out.B == nil
	case opReadContinuedLine:
		out.S, out.Err = r.ReadContinuedLine()
	case opReadContinuedLineBytes:
		out.B, out.Err = r.ReadContinuedLineBytes()
		out.BNil = out.B == nil
	case opReadCodeLine:
		out.Code, out.S, out.Err = r.ReadCodeLine(o.arg)
	case opReadResponse:
		out.Code, out.S, out.Err = r.ReadResponse(o.arg)
	case opReadMIMEHeader:
		var h stdtp.MIMEHeader
		h, out.Err = r.ReadMIMEHeader()
		out.H = map[string][]string(h)
	case opReadDotLines:
		out.Lines, out.Err = r.ReadDotLines()
	case opReadDotBytes:
		out.B, out.Err = r.ReadDotBytes()
		out.BNil = out.B == nil
	case opDotReader:
		out.B, out.Lines, out.Err = readDot(onlyReader{r.DotReader()}, o.arg)
	}
	out.Err = stdErr(out.Err)
	return out
}

func applyOurs(r *Reader, o op) (out outcome) {
	switch o.kind {
	case opReadLine:
		out.S, out.Err = r.ReadLine()
	case opReadLineBytes:
		out.B, out.Err = r.ReadLineBytes()
		out.BNil = out.B == nil
	case opReadContinuedLine:
		out.S, out.Err = r.ReadContinuedLine()
	case opReadContinuedLineBytes:
		out.B, out.Err = r.ReadContinuedLineBytes()
		out.BNil = out.B == nil
	case opReadCodeLine:
		out.Code, out.S, out.Err = r.ReadCodeLine(o.arg)
	case opReadResponse:
		out.Code, out.S, out.Err = r.ReadResponse(o.arg)
	case opReadMIMEHeader:
		var h MIMEHeader
		h, out.Err = r.ReadMIMEHeader()
		out.H = map[string][]string(h)
	case opReadDotLines:
		out.Lines, out.Err = r.ReadDotLines()
	case opReadDotBytes:
		out.B, out.Err = r.ReadDotBytes()
		out.BNil = out.B == nil
	case opDotReader:
		d := r.DotReader()
		if _, ok := d.(io.WriterTo); !ok {
			panic("DotReader is not an io.WriterTo")
		}
		out.B, out.Lines, out.Err = readDot(d, o.arg)
	}
	return out
}

// readDot reads from a dot reader as op opDotReader with argument arg
// says, and returns the data, the result of each call (n and error) and
// the last error.
func readDot(d io.Reader, arg int) (data []byte, calls []string, err error) {
	size, reads := arg%256, arg>>8
	if size == 0 {
		var buf bytes.Buffer
		var n int64
		n, err = io.Copy(&buf, d)
		return buf.Bytes(), []string{fmt.Sprintf("copy %d %v", n, err)}, err
	}
	b := make([]byte, size)
	for i := 0; reads == 0 || i < reads; i++ {
		var n int
		n, err = d.Read(b)
		calls = append(calls, fmt.Sprintf("%d %v", n, err))
		data = append(data, b[:n]...)
		if err != nil || i > 1<<16 {
			break
		}
	}
	return data, calls, err
}

// sourceErr reports whether err is one the test sources fail with.
func sourceErr(err error) bool {
	switch err {
	case io.EOF, errInjected, iotest.ErrTimeout, io.ErrUnexpectedEOF, io.ErrNoProgress:
		return true
	}
	return false
}

// diffStats counts what the harness saw, to show the cases are not
// vacuous.
type diffStats struct {
	calls, deviations, limitErrors int
}

// checkLimitError checks that call o, which failed with a limit error
// having consumed the bytes read, did exceed the limit.
func checkLimitError(lim Limits, o op, got outcome, read []byte, splits int) error {
	n := len(read)
	var le *limitError
	switch {
	case o.kind == opReadResponse && errors.As(got.Err, &le) && le.err == ErrHeaderTooLarge:
		// Its lines (the last may be cut short by the end of the input),
		// or its message, which is shorter than what it read. A read
		// error the feed recovers from splits the line it cuts in two
		// (bufio.Reader.ReadLine returns the part before it as a line),
		// as net/textproto sees it too.
		lines := bytes.Count(read, []byte("\n")) + splits
		if n > 0 && read[n-1] != '\n' {
			lines++
		}
		if le.unit == "lines" && (le.limit != int64(lim.MaxHeaderFields) || lines <= lim.MaxHeaderFields) ||
			le.unit == "bytes" && (le.limit != lim.MaxHeaderBytes || int64(n) <= lim.MaxHeaderBytes) || got.S != "" {
			return fmt.Errorf("%v after %d lines, %d bytes", got.Err, lines, n)
		}
	case errors.As(got.Err, &le) && le.err == ErrLineTooLong:
		if le.limit != int64(lim.MaxLineBytes) || n <= lim.MaxLineBytes {
			return fmt.Errorf("%v after %d bytes", got.Err, n)
		}
	case errors.As(got.Err, &le) && le.unit == "bytes":
		if le.limit != lim.MaxHeaderBytes || int64(n) <= lim.MaxHeaderBytes {
			return fmt.Errorf("%v after %d bytes", got.Err, n)
		}
	case errors.As(got.Err, &le):
		fields := 0
		for _, v := range got.H {
			fields += len(v)
		}
		if le.limit != int64(lim.MaxHeaderFields) || fields != lim.MaxHeaderFields {
			return fmt.Errorf("%v with %d fields", got.Err, fields)
		}
	case got.Err == dot.ErrTooLarge:
		size := 0
		for _, l := range got.Lines {
			size += int(dotLineCost(len(l)))
		}
		// Each line consumed (at least its "\n") costs at most
		// stringHeaderSize bytes per byte consumed.
		if int64(size) > lim.MaxDotBytes || int64(n)*stringHeaderSize <= lim.MaxDotBytes {
			return fmt.Errorf("%v after %d bytes, keeping %d", got.Err, n, size)
		}
	default:
		return fmt.Errorf("unexpected limit error %v", got.Err)
	}
	return nil
}

// limitFired reports whether our Reader, whose call o gave got where
// net/textproto gave want, stopped on a limit in that call (the harness
// stops at the first, so no earlier call did): it returned a limit error
// (ReadDotLines, which reads on to the end of the block after a limit,
// one matching each limit broken, and the read error that then cut the
// block short, if one did), or it is still to discard the rest of a line
// or header.
func limitFired(lim Limits, o op, got, want outcome, ours *Reader) bool {
	return len(splitLimitErr(got.Err)) > 0 || ours.skipLine || ours.skipHeader || ours.skipResponse != 0
}

// checkResponseEnd checks that ours, after ReadResponse failed with a
// limit error, discards the rest of the response as far as net/textproto's
// ReadResponse read it: through the line that ended it (end, in the
// input), or, if a read error stopped net/textproto at end first
// (readErr), at least to end. pos tells ours' position. Read errors of the
// feed that discarding meets before end are passed over, as the next
// calls would.
func checkResponseEnd(ours *Reader, pos func() int, end int, readErr bool) error {
	for i := 0; ours.skipLine || ours.skipResponse != 0; i++ {
		err := ours.discard()
		if err != nil && !sourceErr(err) {
			return fmt.Errorf("discarding the rest of the response: %v", err)
		}
		if pos() > end && !readErr {
			return fmt.Errorf("discarding the rest of the response: still at it at %d, where net/textproto had ended it at %d", pos(), end)
		}
		if err != nil && pos() >= end && readErr || i > 1000 {
			break // where net/textproto stopped, at a read error
		}
	}
	if p := pos(); p < end || p > end && !readErr {
		return fmt.Errorf("discarded the rest of the response up to %d, net/textproto read it up to %d", p, end)
	}
	return nil
}

// splitLimitErr returns the limit errors err is or holds (ReadDotLines'
// error may hold several, and the read error after them).
func splitLimitErr(err error) (limits []error) {
	errs := []error{err}
	if c, ok := err.(*chunkErrors); ok {
		errs = c.errs
	}
	for _, e := range errs {
		if isLimitError(e) || e == dot.ErrTooLarge {
			limits = append(limits, e)
		}
	}
	return limits
}

// diffRun runs ops (cycling through them) over input with the given bufio
// size and feed until both readers have stopped making progress, and
// reports the first difference that is not the documented deviation.
//
// Our Reader enforces lim, which the input must stay within (a zero Limits
// enforces nothing).
func diffRun(input []byte, size int, f feed, ops []op, lim Limits, st *diffStats) error {
	sc, oc := f.open(input), f.open(input)
	sb, ob := bufio.NewReaderSize(sc, size), bufio.NewReaderSize(oc, size)
	std := stdtp.NewReader(sb)
	ours := &Reader{R: ob}
	ours.SetLimits(lim)
	pos := func(c *counter, b *bufio.Reader) int { return c.n - b.Buffered() }

	var done []op
	idle := 0
	maxCalls := 2*len(input) + 20
	for i := 0; i < maxCalls && idle < 4; i++ {
		o := ops[i%len(ops)]
		done = append(done, o)
		before := pos(sc, sb)
		want := applyStd(std, o)
		got := applyOurs(ours, o)
		st.calls++
		ps, po := pos(sc, sb), pos(oc, ob)
		fired := limitFired(lim, o, got, want, ours)
		if want.equal(got) && ps == po && !fired {
			if ps == before && want.Err != nil {
				idle++
			} else {
				idle = 0
			}
			continue
		}
		if fired {
			// A limit fired: check it was exceeded, then run on alone
			// through the discarding.
			if limits := splitLimitErr(got.Err); len(limits) > 0 {
				for _, le := range limits {
					g := got
					g.Err = le
					if err := checkLimitError(lim, o, g, input[before:po], f.splits()); err != nil {
						return fmt.Errorf("call %d %v: %v\n ours: %v\n std:  %v", i, o, err, got, want)
					}
				}
				if c, ok := got.Err.(*chunkErrors); ok && len(c.errs) > len(limits) {
					// Only ReadDotLines reads on after a limit; a read
					// error that cuts the block then comes after the
					// limit errors.
					rerr := c.errs[len(c.errs)-1]
					if o.kind != opReadDotLines || len(c.errs) != len(limits)+1 || !sourceErr(rerr) ||
						len(got.Lines) > len(want.Lines) || !slices.Equal(got.Lines, want.Lines[:len(got.Lines)]) {
						return fmt.Errorf("call %d %v: a limit fired, then\n ours: %v\n std:  %v", i, o, got, want)
					}
				}
			} else {
				// Left to discard the rest of a line or header, yet
				// no limit error.
				return fmt.Errorf("call %d %v: a limit fired, then\n ours: %v\n std:  %v", i, o, got, want)
			}
			if o.kind == opReadResponse {
				// Ours must discard the rest of the response up to
				// where net/textproto's ReadResponse ended it, no
				// further and no less.
				if err := checkResponseEnd(ours, func() int { return pos(oc, ob) }, ps, sourceErr(want.Err)); err != nil {
					return fmt.Errorf("call %d %v: %v\n ours: %v\n std:  %v", i, o, err, got, want)
				}
			}
			st.limitErrors++
			for j := 0; j < maxCalls && idle < 4; j++ {
				b := pos(oc, ob)
				out := applyOurs(ours, ops[(i+j)%len(ops)])
				if out.Err != nil && pos(oc, ob) == b {
					idle++
				}
			}
			return nil
		}
		if ps != po {
			// A method that reads on past a line returns the line
			// net/textproto lost and the read error that cut it, where
			// net/textproto, from a source that goes on after an error,
			// reads on. The deviation, if the lossless replay of our
			// own Reads ends where we did.
			if err := checkDeviation(input, size, oc.log, done, got, want, ours, po); err != nil {
				return fmt.Errorf("call %d %v: consumed up to %d, net/textproto up to %d\n ours: %v\n std:  %v\n %v", i, o, po, ps, got, want, err)
			}
			st.deviations++
			return nil
		}
		// The only allowed difference: a line net/textproto lost.
		if err := checkDeviation(input, size, sc.log, done, got, want, ours, -1); err != nil {
			return fmt.Errorf("call %d %v (input[%d:%d]): %v", i, o, before, ps, err)
		}
		st.deviations++
		return nil // the readers have parted ways; the check covered the rest
	}
	return nil
}

// checkDeviation checks that a difference between our result got and
// net/textproto's want, in the last call of calls, is the documented one:
// a line cut off by a read error exactly at the end of a full bufio buffer,
// which net/textproto drops, is returned, and the read error comes from
// the next call.
//
// net/textproto drops the line when the Read after the full buffer
// returns no data and an error. Had that error come with the last data
// instead, it would have returned the line. So we replay to it, with the
// same bufio size, the Read results it got (log), but with the error
// moved onto the last Read that returned data and repeated ever after:
// our result must equal what it returns then, and, if pos is not -1, it
// must have consumed pos bytes.
func checkDeviation(input []byte, size int, log []readRec, calls []op, got, want outcome, ours *Reader, pos int) error {
	last := len(log) - 1
	d := last
	for d >= 0 && log[d].n == 0 {
		d--
	}
	var end error
	switch {
	case last >= 0 && log[last].n == 0 && log[last].err != nil:
		end = log[last].err
	case last-d >= 100:
		end = io.ErrNoProgress // bufio's error after 100 empty Reads
	default:
		return fmt.Errorf("difference not caused by a read error\n ours: %v\n std:  %v", got, want)
	}
	if d < 0 {
		return fmt.Errorf("difference before any data was read\n ours: %v\n std:  %v", got, want)
	}
	recs := append([]readRec(nil), log[:d+1]...)
	recs[d].err = end
	rp := &replay{data: input, recs: recs, end: end}
	rb := bufio.NewReaderSize(rp, size)
	rr := stdtp.NewReader(rb)
	var ref outcome
	for _, o := range calls {
		ref = applyStd(rr, o)
	}
	if !got.equal(ref) {
		return fmt.Errorf("difference is not the documented deviation\n ours:     %v\n std:      %v\n lossless: %v", got, want, ref)
	}
	if at := len(input) - len(rp.data) - rb.Buffered(); pos >= 0 && at != pos {
		return fmt.Errorf("consumed up to %d, the lossless replay up to %d", pos, at)
	}
	// The error that cut the line is owed to the next call, unless this
	// call already reported it.
	if ours.err != nil {
		if ours.err != end {
			return fmt.Errorf("owed error %v, want %v", ours.err, end)
		}
		if o2 := applyOurs(ours, op{kind: opReadLine}); o2.S != "" || o2.Err != end {
			return fmt.Errorf("next call after the deviation gave %v, want the owed error %v", o2, end)
		}
	}
	return nil
}

// diffAll runs diffRun over every bufio size and feed, failing t on the
// first difference.
func diffAll(t *testing.T, input []byte, sizes []int, ops []op, lim Limits, st *diffStats) {
	t.Helper()
	for _, size := range sizes {
		for _, f := range feeds {
			if err := diffRun(input, size, f, ops, lim, st); err != nil {
				t.Fatalf("input %q, bufio size %d, feed %s, ops %v:\n%v", input, size, f.name, ops, err)
			}
		}
	}
}

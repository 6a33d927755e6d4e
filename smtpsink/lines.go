package smtpsink

import "bytes"

// A lineScanner cuts command lines out of a session's input, whatever
// pieces it comes in, without doing any I/O itself, so that any driver
// (a goroutine reading a connection, an event loop handed bytes) can feed
// it. A line ends at LF, after a CR or not (a bare LF ends a command line
// for Postfix too); only a line whose end has arrived is a line (RFC 5321
// §2.3.8): what a stream cuts off is never returned. It holds at most max
// bytes of a line (plus a CR): a longer one is skipped to its end and
// reported as too long.
type lineScanner struct {
	max  int
	buf  []byte // the line so far, when it spans pieces of input
	long bool   // past max: skipping to the line's end
}

// scan consumes p up to the end of its first line. It returns how much
// of p it consumed and whether a line has ended; if so, the line without
// its line end (valid until the next call, and until p changes) or
// tooLong. Without a line end, it consumes all of p.
func (l *lineScanner) scan(p []byte) (n int, line []byte, done, tooLong bool) {
	i := bytes.IndexByte(p, '\n')
	if i < 0 {
		if !l.long {
			// -1: a CR that a LF may follow (not max+1, which
			// overflows for a max of math.MaxInt: no limit in effect).
			if len(l.buf)+len(p)-1 > l.max {
				l.long, l.buf = true, l.buf[:0]
			} else {
				l.buf = append(l.buf, p...)
			}
		}
		return len(p), nil, false, false
	}
	line = p[:i]
	if l.long {
		l.long = false
		return i + 1, nil, true, true
	}
	if len(l.buf) > 0 {
		line = append(l.buf, line...)
		l.buf = line[:0]
	}
	if k := len(line); k > 0 && line[k-1] == '\r' {
		line = line[:k-1]
	}
	if len(line) > l.max {
		return i + 1, nil, true, true
	}
	return i + 1, line, true, false
}

// pending reports a line begun and not ended.
func (l *lineScanner) pending() bool { return len(l.buf) > 0 || l.long }

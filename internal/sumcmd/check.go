package sumcmd

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/wirespeed/wirespeed/digest"
)

// Check mode (-c): read checksum lines and verify the files they name,
// with coreutils' parsing rules, messages and exit status.

// A checkFile is one checksum file being verified and its tallies.
type checkFile struct {
	name         string // as given; "-" is standard input
	misformatted int
	mismatched   int
	openFail     int
	properly     bool // some line was properly formatted
	matched      bool // some checksum matched
}

func (cf *checkFile) displayName() string {
	if cf.name == "-" {
		return "standard input"
	}
	return cf.name
}

// checkEvents yields, for every checksum file in turn, one event per
// line worth reporting and a summary at its end. It runs on the pool's
// feeding goroutine, so it reads ahead of the results.
func (r *sumRun) checkEvents(yield func(event) bool) {
	for _, name := range r.cfg.files {
		if !r.checkFileEvents(name, yield) {
			return
		}
	}
}

func (r *sumRun) checkFileEvents(name string, yield func(event) bool) bool {
	cf := &checkFile{name: name}
	var src io.Reader = r.stdin
	if name == "-" {
		// A "-" line of an earlier list, still queued behind a file being
		// hashed or being hashed itself, reads standard input first, as
		// coreutils (one line after another) would have.
		r.waitIdle()
	} else {
		f, err := os.Open(name)
		if err != nil {
			return yield(event{kind: evMessage, msg: quoteName(name, r.utf8) + ": " + errText(err)})
		}
		defer f.Close()
		src = f
	}
	// A list read from a pipe, FIFO or device may name it again (a
	// "/dev/stdin" line in a list read from standard input): md5sum then
	// hashes what its stdio stream has not yet taken of the list, and
	// goes on with what is left, nothing. So such a list is read as
	// stdio reads it, a buffer at a time and only when the buffer is
	// empty; it counts as a pipe read (serial); and a line reading it
	// is hashed before the next line is read.
	if f, ok := src.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
			if !slices.ContainsFunc(r.pipes, func(p os.FileInfo) bool { return os.SameFile(p, fi) }) {
				r.pipes = append(r.pipes, fi)
			}
			r.list = fi
			defer func() { r.list, r.listShared = nil, false }()
			src = &stdioReader{r: src, buf: make([]byte, stdioBufferSize(fi))}
		}
	}
	br := bufio.NewReaderSize(src, 64<<10)
	var line []byte
	for lineNo := 1; ; lineNo++ {
		var err error
		line, err = readLine(br, line[:0])
		if len(line) > 0 {
			if ev, ok := r.checkLineEvent(cf, lineNo, line); ok && !yield(ev) {
				return false
			}
			if r.listShared {
				r.listShared = false
				r.waitIdle()
			}
		}
		if err == io.EOF { // io.EOF itself ends the list; a wrapped one is a read error
			break
		}
		if err != nil {
			return yield(event{kind: evReadError, cf: cf})
		}
	}
	return yield(event{kind: evSummary, cf: cf})
}

// waitIdle waits until every event emitted so far has been handled. It
// runs on the feeding goroutine.
func (r *sumRun) waitIdle() {
	r.mu.Lock()
	for r.head < len(r.queue) || r.busy {
		r.drained.Wait()
	}
	r.mu.Unlock()
}

// A stdioReader reads r as a C stdio stream does: into a buffer of its
// own, with one read of the buffer's size, only when the buffer is empty.
// What it has taken of r is then what md5sum's stream would have taken.
type stdioReader struct {
	r      io.Reader
	buf    []byte
	off, n int
	err    error
}

func (s *stdioReader) Read(p []byte) (int, error) {
	if s.off == s.n {
		if s.err != nil {
			return 0, s.err
		}
		s.off = 0
		s.n, s.err = s.r.Read(s.buf)
		if s.n == 0 {
			return 0, s.err
		}
	}
	n := copy(p, s.buf[s.off:s.n])
	s.off += n
	return n, nil
}

// maxCheckLine bounds the part of a check line held in memory. A line
// can name no file longer than the system's PATH_MAX (4 KiB on Linux),
// twice that escaped, so of a longer line the first maxCheckLine bytes
// are kept and the rest is read and dropped: the line is then what it
// was to md5sum, a file that cannot be opened (named by its first MiB),
// an improperly formatted line or a comment. md5sum holds any line whole,
// and runs out of memory on a list of endless lines (/dev/zero).
const maxCheckLine = 1 << 20

// readLine appends the next line, with its '\n' if any, to dst; of a
// longer line than maxCheckLine bytes, it keeps the first maxCheckLine
// and reads the rest.
func readLine(br *bufio.Reader, dst []byte) ([]byte, error) {
	start := len(dst)
	for {
		chunk, err := br.ReadSlice('\n')
		room := maxCheckLine - (len(dst) - start)
		dst = append(dst, chunk[:min(len(chunk), max(room, 0))]...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			if err == nil && len(dst) == start {
				err = io.EOF
			}
			return dst, err
		}
	}
}

// checkLineEvent turns one raw line into an event; ok is false for lines
// that are skipped silently (comments and blank lines).
func (r *sumRun) checkLineEvent(cf *checkFile, lineNo int, line []byte) (event, bool) {
	if line[0] == '#' {
		return event{}, false
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) == 0 {
		return event{}, false
	}
	c, ok := parseCheckLine(line, r.cfg.alg, &r.bsdRev)
	if !ok || (cf.name == "-" && c.name == "-") {
		return event{kind: evMalformed, cf: cf, line: lineNo}, true
	}
	ev := event{kind: evFile, name: c.name, cf: cf, line: lineNo}
	if c.name == "-" {
		ev.kind = evStdin
	}
	ev.nwant = copy(ev.want[:], c.hex)
	return ev, true
}

type checkLine struct {
	name   string
	hex    []byte
	binary bool
}

// parseCheckLine parses "HEX  NAME", "HEX *NAME", "HEX NAME" (the BSD
// reversed form) and "TAG (NAME) = HEX", each optionally escaped by a
// leading backslash, following coreutils' rules to the letter. Like
// coreutils, it reads the whole line (its length counts, NULs and all,
// where coreutils uses it) but each field as a C string reads it: an
// unescaped name ends at its first NUL, a digest must end at a NUL (the
// line's end, or one within it), and a NUL in an escaped name makes the
// line malformed. bsdRev is coreutils' bsd_reversed state, shared by all
// lines of a run: once one form of plain line is seen, the other is
// rejected.
func parseCheckLine(s []byte, alg digest.Algorithm, bsdRev *int) (checkLine, bool) {
	at := func(i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0 // the NUL after the line
	}
	white := func(c byte) bool { return c == ' ' || c == '\t' }
	hexLen := 2 * alg.Size()
	i := 0
	for white(at(i)) {
		i++
	}
	escaped := false
	if at(i) == '\\' {
		i++
		escaped = true
	}
	if tag := alg.Tag(); bytes.HasPrefix(s[i:], []byte(tag)) {
		i += len(tag)
		if at(i) == ' ' {
			i++
		}
		if at(i) != '(' {
			return checkLine{}, false
		}
		return parseTagged(s[i+1:], escaped, hexLen)
	}
	minLen := hexLen + 2
	if at(i) == '\\' {
		minLen++
	}
	if len(s)-i < minLen {
		return checkLine{}, false
	}
	c := checkLine{hex: s[i : i+hexLen]}
	i += hexLen
	if !white(at(i)) || !validHex(c.hex, hexLen) {
		return checkLine{}, false
	}
	i++
	if len(s)-i == 1 || (at(i) != ' ' && at(i) != '*') {
		if *bsdRev == 0 {
			return checkLine{}, false
		}
		*bsdRev = 1
	} else if *bsdRev != 1 {
		*bsdRev = 0
		c.binary = at(i) == '*'
		i++
	}
	var ok bool
	if c.name, ok = lineName(s[min(i, len(s)):], escaped); !ok {
		return checkLine{}, false
	}
	return c, true
}

// parseTagged parses "NAME) = HEX", what follows "TAG (": the name runs
// to the line's last ')'.
func parseTagged(s []byte, escaped bool, hexLen int) (checkLine, bool) {
	i := bytes.LastIndexByte(s, ')')
	if i < 0 {
		return checkLine{}, false
	}
	var c checkLine
	var ok bool
	if c.name, ok = lineName(s[:i], escaped); !ok {
		return checkLine{}, false
	}
	rest := bytes.TrimLeft(s[i+1:], " \t")
	if len(rest) == 0 || rest[0] != '=' {
		return checkLine{}, false
	}
	rest = bytes.TrimLeft(rest[1:], " \t")
	if len(rest) < hexLen || len(rest) > hexLen && rest[hexLen] != 0 {
		return checkLine{}, false // not a digest and then a NUL
	}
	c.hex = rest[:hexLen]
	if !validHex(c.hex, hexLen) {
		return checkLine{}, false
	}
	return c, true
}

// lineName decodes a file name field: unescaped if the line was escaped
// (where a NUL makes it malformed), else read as a C string, to its first
// NUL.
func lineName(b []byte, escaped bool) (string, bool) {
	if escaped {
		return unescapeName(b)
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b), true
}

// validHex reports whether b is n hexadecimal digits.
func validHex(b []byte, n int) bool {
	var buf [digest.MaxSize]byte
	if len(b) != n || n > 2*len(buf) {
		return false
	}
	_, err := hex.Decode(buf[:], b)
	return err == nil
}

// checked reports one verified (or unreadable) file. r.mu is held.
func (r *sumRun) checked(ev event, sum digest.Sum, err error) {
	cf := ev.cf
	cf.properly = true
	// coreutils 9.1 escapes a name in -c output only if it has a newline.
	esc := !r.cfg.status && strings.Contains(ev.name, "\n")
	if err != nil {
		if r.cfg.ignoreMissing && isMissing(err) {
			return
		}
		r.fileError(ev.name, err)
		cf.openFail++
		if !r.cfg.status {
			r.writeStatus(ev.name, esc, ": FAILED open or read\n")
		}
		return
	}
	match := sum.MatchHex(ev.want[:ev.nwant])
	if match {
		cf.matched = true
	} else {
		cf.mismatched++
	}
	switch {
	case r.cfg.status:
	case !match:
		r.writeStatus(ev.name, esc, ": FAILED\n")
	case !r.cfg.quiet:
		r.writeStatus(ev.name, esc, ": OK\n")
	}
}

func (r *sumRun) writeStatus(name string, esc bool, status string) {
	b := make([]byte, 0, len(name)+len(status)+8)
	if esc {
		b = append(b, '\\')
	}
	b = r.appendName(b, name, esc)
	r.write(append(b, status...))
}

// isMissing reports an open(2) that failed with ENOENT, the only failure
// --ignore-missing ignores.
func isMissing(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Op == "open" && errors.Is(pe.Err, syscall.ENOENT)
}

// summarize prints the end-of-file warnings of one checksum file and
// records its verdict. r.mu is held.
func (r *sumRun) summarize(cf *checkFile) {
	name := quoteName(cf.displayName(), r.utf8)
	if !cf.properly {
		r.diag("%s: no properly formatted checksum lines found", name)
		r.failed = true
		return
	}
	if !r.cfg.status {
		if n := cf.misformatted; n == 1 {
			r.diag("WARNING: 1 line is improperly formatted")
		} else if n > 1 {
			r.diag("WARNING: %d lines are improperly formatted", n)
		}
		if n := cf.openFail; n == 1 {
			r.diag("WARNING: 1 listed file could not be read")
		} else if n > 1 {
			r.diag("WARNING: %d listed files could not be read", n)
		}
		if n := cf.mismatched; n == 1 {
			r.diag("WARNING: 1 computed checksum did NOT match")
		} else if n > 1 {
			r.diag("WARNING: %d computed checksums did NOT match", n)
		}
		if r.cfg.ignoreMissing && !cf.matched {
			r.diag("%s: no file was verified", name)
		}
	}
	if !cf.matched || cf.mismatched > 0 || cf.openFail > 0 || (r.cfg.strict && cf.misformatted > 0) {
		r.failed = true
	}
}

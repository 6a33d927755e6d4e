package smtpsource

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrMessages is what LoadMessages returns for a path that holds no
// message it can send.
var ErrMessages = errors.New("smtpsource: no messages")

// LoadMessages reads the messages of path for Config.MessageSet, in the
// order they are to be sent:
//   - a Maildir (a directory with cur/ or new/ in it): the files of cur/
//     and new/ together, by name (which starts with the delivery time);
//     tmp/ is left out;
//   - any other directory: each regular file in it, by name, a message as
//     it is; names starting with '.' and subdirectories are left out;
//   - an mbox (a file whose first line starts with "From "): each message
//     between its "From " line and the next, the "From " lines left out,
//     the empty line before the next one too, and ">From ", ">>From "...
//     lines unquoted by one '>' (mboxrd);
//   - any other file: one message, the whole file.
//
// An empty file, alone or in a directory, or an empty message in an mbox
// (its "From " line followed by the next, or by the separating empty
// line alone) is an error matching ErrMessages: there is no message in
// it to send (Postfix's smtp-source -F sends its default body for an
// empty file, without a header).
//
// The messages' lines end with CRLF, as Run sends them (Config.Message):
// each file is read into a buffer a thirty-second larger than it and its
// lines are CRLF-ended there, an mbox split there too, so that Run sends
// from those buffers and a run holds the messages once. A file whose CRs
// do not fit in that room (lines of fewer than about 32 bytes, most of
// them LF-ended) is copied as it is CRLF-ended, and its buffer dropped;
// so is a device's or a pipe's. The messages are held in memory, at most
// MaxLength bytes of files together (a path that holds more, or a device
// that never ends, such as /dev/zero, is an error matching
// ErrMessagesTooLarge).
func LoadMessages(path string) ([][]byte, error) {
	return loadMessages(path, MaxLength, readChunk, true)
}

// loadMessages is LoadMessages with at most limit bytes of files; without
// crlf, the messages are as the files hold them (the tests' oracle).
func loadMessages(path string, limit int64, chunk int, crlf bool) ([][]byte, error) {
	// pieces returns the spans of b as messages, CRLF-ended if crlf is
	// set (then in b where it has room).
	pieces := func(b []byte, spans [][2]int) [][]byte {
		if crlf {
			return crlfSpans(b, spans)
		}
		msgs := make([][]byte, len(spans))
		for i, sp := range spans {
			msgs[i] = b[sp[0]:sp[1]:sp[1]]
		}
		return msgs
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	left := limit
	if !st.IsDir() {
		b, err := readAtMost(path, &left, chunk, crlf)
		if err != nil {
			return nil, err
		}
		if len(b) == 0 {
			return nil, fmt.Errorf("%w: %s: an empty file", ErrMessages, path)
		}
		if bytes.HasPrefix(b, []byte("From ")) {
			spans := splitMboxInPlace(b) // b is ours
			if len(spans) == 0 {
				return nil, fmt.Errorf("%w in mbox %s", ErrMessages, path)
			}
			if i := slices.IndexFunc(spans, func(sp [2]int) bool { return sp[0] == sp[1] }); i >= 0 {
				return nil, fmt.Errorf("%w: %s: message %d of the mbox is empty", ErrMessages, path, i+1)
			}
			return pieces(b, spans), nil
		}
		return pieces(b, [][2]int{{0, len(b)}}), nil
	}
	var files []string // paths, to be sorted by their base names
	dirs := []string{path}
	maildir := false
	for _, sub := range []string{"cur", "new"} {
		if st, err := os.Stat(filepath.Join(path, sub)); err == nil && st.IsDir() {
			if !maildir {
				dirs = nil
			}
			maildir = true
			dirs = append(dirs, filepath.Join(path, sub))
		}
	}
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			p := filepath.Join(d, e.Name())
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
				continue // a symbolic link to no file
			}
			files = append(files, p)
		}
	}
	slices.SortFunc(files, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
	if len(files) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrMessages, path)
	}
	msgs := make([][]byte, 0, len(files))
	for _, p := range files {
		b, err := readAtMost(p, &left, chunk, crlf)
		if err != nil {
			return nil, err
		}
		if len(b) == 0 {
			return nil, fmt.Errorf("%w: %s: an empty file", ErrMessages, p)
		}
		msgs = append(msgs, pieces(b, [][2]int{{0, len(b)}})...)
	}
	return msgs, nil
}

// ErrMessagesTooLarge is LoadMessages' error for more than MaxLength
// bytes of messages together.
var ErrMessagesTooLarge = errors.New("smtpsource: messages over 1 GiB together")

// readChunk is the size of the pieces LoadMessages reads a file in once
// past its stated size (a device or pipe has none).
const readChunk = 1 << 20

// readAtMost reads the file at path, if it holds at most *left bytes,
// and takes them from *left. A regular file is read into one buffer of
// its size; past that (a device, a pipe, a file that grew) it goes on in
// pieces of chunk bytes, and is refused as soon as it passes *left:
// what it holds stays within *left plus a piece while it is read (the
// pieces are then joined into one buffer). With room set, a regular
// file's buffer has a thirty-second of its size more room, for CR bytes
// before its LFs (crlfSpans).
func readAtMost(path string, left *int64, chunk int, room bool) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	first, extra := int64(chunk), int64(0)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if st.Size() > *left {
			return nil, fmt.Errorf("%w: %s", ErrMessagesTooLarge, path) // without reading it
		}
		first = st.Size() + 1 // one byte more to see the end
		if room {
			extra = st.Size()/32 + 2
		}
	}
	var pieces [][]byte
	var total int64
	for size := first; ; size, extra = int64(chunk), 0 {
		want := min(size, *left+1-total)
		p := make([]byte, want+extra)[:want]
		n, err := io.ReadFull(f, p)
		total += int64(n)
		if total > *left {
			return nil, fmt.Errorf("%w: %s", ErrMessagesTooLarge, path)
		}
		pieces = append(pieces, p[:n])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	*left -= total
	if len(pieces) == 1 {
		return pieces[0], nil
	}
	return bytes.Join(pieces, nil), nil
}

// SplitMbox splits an mbox (mboxrd) into its messages: each starts after
// a line beginning "From " and ends before the next, less the empty line
// that separates them (an empty message, that line alone, is left
// empty); lines of the form ">From ", ">>From "... lose one '>'.
// Whatever comes before the first "From " line is left out. Line ends are
// kept as they are. b is left as it is; the messages are pieces of one
// copy of it.
func SplitMbox(b []byte) [][]byte {
	c := bytes.Clone(b)
	var msgs [][]byte
	for _, sp := range splitMboxInPlace(c) {
		msgs = append(msgs, c[sp[0]:sp[1]:sp[1]])
	}
	return msgs
}

// splitMboxInPlace is SplitMbox in b itself: the messages are moved to
// its front (they only lose bytes, the "From " lines, a '>' and the
// separating empty lines), one after the other, and their spans in b are
// returned.
func splitMboxInPlace(b []byte) (spans [][2]int) {
	w, start := 0, 0 // where the next byte goes; where the message starts
	in := false
	end := func() {
		if in {
			cur := b[start:w]
			switch {
			case string(cur) == "\n" || string(cur) == "\r\n":
				w = start // an empty message and its separating line
			case bytes.HasSuffix(cur, []byte("\r\n\r\n")):
				w -= 2
			case bytes.HasSuffix(cur, []byte("\n\n")):
				w--
			}
			spans = append(spans, [2]int{start, w})
		}
		start, in = w, true
	}
	for r := 0; r < len(b); {
		n := bytes.IndexByte(b[r:], '\n') + 1
		if n == 0 {
			n = len(b) - r
		}
		line := b[r : r+n]
		r += n
		if bytes.HasPrefix(line, []byte("From ")) {
			end()
			continue
		}
		if !in {
			continue
		}
		if q := bytes.TrimLeft(line, ">"); len(q) < len(line) && bytes.HasPrefix(q, []byte("From ")) {
			line = line[1:]
		}
		w += copy(b[w:], line) // w <= r: a move towards the front
	}
	if in {
		end()
	}
	return spans
}

// crlfSpans returns the messages at spans in b (in order, apart) with
// their lines ended by CRLF as crlfLines ends them. Where b has room
// for the bytes that adds (its capacity past the last span) they are
// made in b, moved towards its end, from the last message to the first:
// each byte goes to where it is or further, after its message's bytes
// before it are read. Otherwise each is a copy (crlfLines).
func crlfSpans(b []byte, spans [][2]int) [][]byte {
	msgs := make([][]byte, len(spans))
	grow := make([]int, len(spans))
	total := 0
	for i, sp := range spans {
		grow[i] = crlfLen(b[sp[0]:sp[1]]) - (sp[1] - sp[0])
		total += grow[i]
	}
	if len(spans) > 0 && spans[len(spans)-1][1]+total > cap(b) {
		for i, sp := range spans {
			msgs[i] = crlfLines(b[sp[0]:sp[1]])
		}
		return msgs
	}
	b = b[:cap(b)]
	shift := total
	for i := len(spans) - 1; i >= 0; i-- {
		shift -= grow[i]
		start, end := spans[i][0], spans[i][1]
		to := b[start+shift : end+shift+grow[i] : end+shift+grow[i]]
		if grow[i] != 0 || shift != 0 || !crlfOnly(b[start:end]) {
			crlfBack(to, b[start:end])
		}
		msgs[i] = to
	}
	return msgs
}

// crlfLen returns len(crlfLines(msg)): an LF without a CR before it
// gains one, and a last line without an LF gains CRLF.
func crlfLen(msg []byte) int {
	n := len(msg) + bytes.Count(msg, []byte{'\n'}) - bytes.Count(msg, []byte("\r\n"))
	if len(msg) > 0 && msg[len(msg)-1] != '\n' {
		n += 2
	}
	return n
}

// crlfBack writes crlfLines(src) to dst, of its length, from the end: dst
// may start where src does or after it in the same array, as each byte
// of src is read before a byte of dst at or after it is written (what is
// left to write is never shorter than what is left to read).
func crlfBack(dst, src []byte) {
	i, j := len(src), len(dst)
	if i > 0 && src[i-1] != '\n' {
		j -= 2 // the last line's CRLF, after all of src
		dst[j], dst[j+1] = '\r', '\n'
	}
	for i > 0 {
		i--
		switch c := src[i]; c {
		case '\n':
			if i > 0 && src[i-1] == '\r' {
				i--
			}
			j -= 2
			dst[j], dst[j+1] = '\r', '\n'
		case '\r':
			j--
			dst[j] = ' ' // a bare CR has no place in SMTP data
		default:
			j--
			dst[j] = c
		}
	}
}

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
// The messages are as the files hold them: Run ends their lines with CRLF.
// They are held in memory, at most MaxLength bytes of files together (a
// path that holds more, or a device that never ends, such as /dev/zero,
// is an error matching ErrMessagesTooLarge).
func LoadMessages(path string) ([][]byte, error) { return loadMessages(path, MaxLength, readChunk) }

// loadMessages is LoadMessages with at most limit bytes of files.
func loadMessages(path string, limit int64, chunk int) ([][]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	left := limit
	if !st.IsDir() {
		b, err := readAtMost(path, &left, chunk)
		if err != nil {
			return nil, err
		}
		if len(b) == 0 {
			return nil, fmt.Errorf("%w: %s: an empty file", ErrMessages, path)
		}
		if bytes.HasPrefix(b, []byte("From ")) {
			msgs := SplitMbox(b)
			if len(msgs) == 0 {
				return nil, fmt.Errorf("%w in mbox %s", ErrMessages, path)
			}
			if i := slices.IndexFunc(msgs, func(m []byte) bool { return len(m) == 0 }); i >= 0 {
				return nil, fmt.Errorf("%w: %s: message %d of the mbox is empty", ErrMessages, path, i+1)
			}
			return msgs, nil
		}
		return [][]byte{b}, nil
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
		b, err := readAtMost(p, &left, chunk)
		if err != nil {
			return nil, err
		}
		if len(b) == 0 {
			return nil, fmt.Errorf("%w: %s: an empty file", ErrMessages, p)
		}
		msgs = append(msgs, b)
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
// pieces are then joined into one buffer).
func readAtMost(path string, left *int64, chunk int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	first := int64(chunk)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if st.Size() > *left {
			return nil, fmt.Errorf("%w: %s", ErrMessagesTooLarge, path) // without reading it
		}
		first = st.Size() + 1 // one byte more to see the end
	}
	var pieces [][]byte
	var total int64
	for size := first; ; size = int64(chunk) {
		p := make([]byte, min(size, *left+1-total))
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
// kept as they are.
func SplitMbox(b []byte) [][]byte {
	var msgs [][]byte
	var cur []byte
	in := false
	end := func() {
		if in {
			switch {
			case string(cur) == "\n" || string(cur) == "\r\n":
				cur = cur[:0] // an empty message and its separating line
			case bytes.HasSuffix(cur, []byte("\r\n\r\n")):
				cur = cur[:len(cur)-2]
			case bytes.HasSuffix(cur, []byte("\n\n")):
				cur = cur[:len(cur)-1]
			}
			msgs = append(msgs, cur)
		}
		cur, in = []byte{}, true
	}
	for len(b) > 0 {
		n := bytes.IndexByte(b, '\n') + 1
		if n == 0 {
			n = len(b)
		}
		line := b[:n]
		b = b[n:]
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
		cur = append(cur, line...)
	}
	if in {
		end()
	}
	return msgs
}
